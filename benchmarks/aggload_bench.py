"""Issue 14's N = 1,000 case for the models whose signal reads the delayed link load (PE-TCP, TCP Symbiosis),
run by a given source tree (this one, or main's for the 'before' numbers): whole-process wall time, steps,
and the aggregate rate and queue at the sample times (``models_bench.py``'s case: dumbbell 15,000 packets/s,
RTTs uniform in [0.01, 0.5] s, seed 1, 30 s, rtol = atol = 1e-8).  Results: ``docs/notes/aggload.md``.

Usage::

    python benchmarks/aggload_bench.py TREE MODEL N RTOL OUT.npz [TIMEOUT_S] [ENGINE] [T_END_S] [ATOL]

(ATOL ``none``: ecocc's default absolute tolerances, as models_bench.py's accuracy case; default: = RTOL)

runs ``TREE/benchmarks/models_bench.py --ecocc-case`` in a fresh process with ``PYTHONPATH=TREE``.
"""
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from models_bench import _case  # noqa: E402


def _args():
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tree", type=Path, help="source tree to run (its benchmarks/models_bench.py)")
    ap.add_argument("model")
    ap.add_argument("n", type=int, help="number of flows (>= 1)")
    ap.add_argument("rtol", type=float, help="relative tolerance (> 0)")
    ap.add_argument("out", help="results file (.npz)")
    ap.add_argument("timeout_s", type=float, nargs="?", default=3600.0, help="wall-clock limit, s (> 0)")
    ap.add_argument("engine", nargs="?", default="auto")
    ap.add_argument("t_end_s", type=float, nargs="?", default=30.0, help="simulated time, s (> 0)")
    ap.add_argument("atol", nargs="?", default=None, help="'none': ecocc's defaults; default: = rtol")
    a = ap.parse_args()
    if not (a.tree / "benchmarks" / "models_bench.py").is_file():
        ap.error(f"tree = {a.tree}: no benchmarks/models_bench.py there (a checkout of ecocc)")
    for name in ("n", "rtol", "timeout_s", "t_end_s"):
        if not getattr(a, name) > 0:
            ap.error(f"{name} = {getattr(a, name)!r} is not allowed: a number > 0")
    if a.atol is None:
        a.atol = a.rtol
    elif a.atol != "none":
        try:
            a.atol = float(a.atol)
        except ValueError:
            ap.error(f"atol = {a.atol!r} is not allowed: a number > 0 or 'none'")
        if not a.atol > 0:
            ap.error(f"atol = {a.atol!r} is not allowed: a number > 0 or 'none'")
    return a


def main():
    a = _args()
    tree, model, n, rtol, out, timeout, engine = str(a.tree), a.model, a.n, a.rtol, a.out, a.timeout_s, a.engine
    case = _case(model, n, a.t_end_s, rtol, None if a.atol == "none" else a.atol)
    env = dict(os.environ, PYTHONPATH=tree)
    t0 = time.perf_counter()
    try:
        p = subprocess.run([sys.executable, str(Path(tree) / "benchmarks" / "models_bench.py"), "--ecocc-case",
                            json.dumps(case), out, engine], env=env, capture_output=True, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        print(json.dumps(dict(tree=tree, model=model, n=n, rtol=rtol, error=f"timeout after {timeout} s")))
        return
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        print(json.dumps(dict(tree=tree, model=model, n=n, error=p.stderr[-2000:])))
        return
    d = np.load(out)
    print(json.dumps(dict(tree=tree, model=model, n=n, rtol=rtol, engine=engine, wall_s=round(wall, 2),
                          proc_wall_s=float(d["wall_s"]), n_steps=int(d["n_steps"]), status=str(d["status"]),
                          compiled=str(d["compiled"]))))


if __name__ == "__main__":
    main()
