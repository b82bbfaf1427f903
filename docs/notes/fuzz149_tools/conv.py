"""See ../fuzz149.md (the member red_p_max 0.3933, rtt_scale 0.6052 of c149.py)."""
from c149 import P, run, units
t0, _ = run(0.0, engine="numba", rtol=1e-10, atol=1e-11)
for rt in (1e-7, 1e-8, 1e-9):
    for eng in ("numpy", "numba"):
        a, w = run(0.0, engine=eng, rtol=rt)
        print(f"{eng:6s} rtol {rt:g}: {units(a, t0):.3g} units of 1e-7 from the tight run, {a.solver.get('n_steps')} steps, {w:.1f} s")
