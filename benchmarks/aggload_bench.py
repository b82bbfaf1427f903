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


def main():
    tree, model, n, rtol, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
    timeout = float(sys.argv[6]) if len(sys.argv) > 6 else 3600.0
    engine = sys.argv[7] if len(sys.argv) > 7 else "auto"
    t_end = float(sys.argv[8]) if len(sys.argv) > 8 else 30.0
    atol = sys.argv[9] if len(sys.argv) > 9 else str(rtol)
    case = _case(model, n, t_end, rtol, None if atol == "none" else float(atol))
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
