"""See ../fuzz149.md (the member red_p_max 0.3933, rtt_scale 0.6052 of c149.py)."""
from c149 import P, run, units
t0, _ = run(0.0, engine="numba", rtol=1e-10, atol=1e-11)
t2, _ = run(0.0, engine="numba", rtol=1e-11, atol=1e-12)
print("tight 1e-10 vs 1e-11: %.3g units" % units(t0, t2))
for rt in (1e-7, 1e-8, 1e-9):
    a, w = run(0.0, engine="numba", rtol=rt, atol=1e-11)
    b, w = run(0.0, engine="numba", rtol=rt, queue_atol_pkts=rt * 10)
    print(f"compiled rtol {rt:g}, every atol 1e-11: {units(a, t2):.3g} units; queue atol {rt*10:g}: {units(b, t2):.3g}")
P0 = dict(P)
for dq in (1e-4, 1e-6):
    P.update(red_min_th_pkts=62.45 + dq, red_max_th_pkts=136.7 + dq)
    s, _ = run(0.0, engine="numba", rtol=1e-11, atol=1e-12)
    print(f"tight, RED thresholds + {dq:g} packets (a queue offset): {units(s, t2):.3g} units")
P.update(P0)
