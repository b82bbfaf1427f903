"""A shipped scenario on both engines with the queues' absolute tolerance set (docs/notes/qatol.md).

    python docs/notes/qatol_tools/qa.py SCENARIO default,4e-6,4e-7 [OUTDIR]

Runs ``ecocc simulate SCENARIO`` with ``--engine auto`` and ``--engine numpy`` at each ``--queue-atol-pkts`` value
(``default``: the option left out) and compares them with each other and with scenarios_engines.py's tight run, in
its units.  Run it from a directory other than the repository's root (a subdirectory named like the scenario would be
read as a path)."""
import sys, subprocess, json, time
from pathlib import Path as _P
sys.path.insert(0, str(_P(__file__).resolve().parents[3] / "benchmarks"))
import scenarios_engines as se
from pathlib import Path
name = sys.argv[1]; qas = sys.argv[2].split(",")
out = Path(sys.argv[3] if len(sys.argv) > 3 else "qatol_runs") / name; out.mkdir(parents=True, exist_ok=True); out.mkdir(exist_ok=True)
tight = out / "tight"; tight.mkdir(exist_ok=True)
from ecocc.scenarios import load
stem = load(name).file_stem
if not (tight / f"{stem}.nc").exists():
    print("tight", se._run_tight(name, str(tight), 3000), flush=True)
for qa in qas:
    res = {}
    for eng in ("auto", "numpy"):
        d = out / f"{eng}_{qa}"; d.mkdir(exist_ok=True)
        args = [sys.executable, "-m", "ecocc", "simulate", name, "--out", str(d), "--engine", eng, "--no-figure", "--quiet", "--json"] + (["--no-checkpoint"] if eng == "numpy" else []) + ([] if qa == "default" else ["--queue-atol-pkts", qa])
        t0 = time.perf_counter(); p = subprocess.run(args, capture_output=True, text=True, cwd=d); w = time.perf_counter() - t0
        if p.returncode: print(p.stderr[-500:]); continue
        res[eng] = (d / f"{stem}.nc", w, json.loads(p.stdout).get("solver", {}).get("n_steps"))
    c = se.compare(res["auto"][0], res["numpy"][0], 1e-7)
    ca = se.compare(res["auto"][0], tight / f"{stem}.nc", 1e-7); cn = se.compare(res["numpy"][0], tight / f"{stem}.nc", 1e-7)
    f = lambda c: max(c["queue"]["scaled"], c["rate"]["scaled"], c["counters_at_end"]["scaled"])
    print(f"{name} queue_atol {qa}: engines {f(c):.3g} (rate rel {c['rate']['rel']:.2g}); auto vs tight {f(ca):.3g} (rate rel {ca['rate']['rel']:.2g}); numpy vs tight {f(cn):.3g} (rate rel {cn['rate']['rel']:.2g}); wall {res['auto'][1]:.1f} / {res['numpy'][1]:.1f} s; steps {res['auto'][2]} / {res['numpy'][2]}", flush=True)
