"""Is the compiled composite's difference from the NumPy composite on a forward-delay network tolerance-driven?

    PYTHONPATH=. python benchmarks/sdd_mixed_tolerance.py [--n 20] [--t-end-s 60]

The ``fwd`` case of ``benchmarks/sdd_speed.py`` (TCP Symbiosis and drop-tail Reno alternating on a dumbbell, a
fifth of each RTT before the link) with N flows, on both engines at rtol 1e-6 and 1e-8: the engines' largest
relative rate difference and queue difference at each rtol, and each rtol-1e-6 run against the compiled rtol-1e-8
run.  A difference that shrinks with rtol, with both engines as far from the tighter run as from each other, is
the problem's sensitivity (drop-tail), not an engine fault.  Prints its rows and writes them to
``benchmarks/sdd_mixed_tolerance.md``.
"""
import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import sdd_speed as sp  # noqa: E402

from ecocc import simulate  # noqa: E402
from ecocc.store import atomic_write_text  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=20, help="flows")
    ap.add_argument("--t-end-s", type=float, default=60.0)
    a = ap.parse_args()
    if a.n < 2 or not a.t_end_s > 0:
        ap.error("--n >= 2 and --t-end-s > 0")
    net = sp._net(a.n, "fwd", "mixed")
    res, lines = {}, [f"# Mixed forward-delay case, N = {a.n}, {a.t_end_s:g} s (load {os.getloadavg()[0]:.1f})", "",
                      "| run | steps | wall s |", "|---|---|---|"]
    for rt in (1e-6, 1e-8):
        for eng in ("numba", "numpy"):
            t = time.perf_counter()
            tr = simulate(net, "symbiosis", t_end_s=a.t_end_s, output_dt_s=0.1, engine=eng, protocols=sp.MIXED,
                          rtol=rt)
            res[(rt, eng)] = tr
            lines.append(f"| {eng} rtol {rt:g} ({tr.status.value}) | {tr.solver.get('n_steps')} | "
                         f"{time.perf_counter() - t:.1f} |")

    def diff(x, y):
        return (float(np.max(np.abs(x.rate_pps / y.rate_pps - 1))), float(np.max(np.abs(x.queue_pkts - y.queue_pkts))))
    lines += ["", "| comparison | largest relative rate difference | largest queue difference (packets) |", "|---|---|---|"]
    for rt in (1e-6, 1e-8):
        r, q = diff(res[(rt, "numba")], res[(rt, "numpy")])
        lines.append(f"| compiled vs NumPy, rtol {rt:g} | {r:.3g} | {q:.3g} |")
    for eng in ("numba", "numpy"):
        r, q = diff(res[(1e-6, eng)], res[(1e-8, "numba")])
        lines.append(f"| {eng} rtol 1e-6 vs compiled rtol 1e-8 | {r:.3g} | {q:.3g} |")
    text = "\n".join(lines) + "\n"
    print(text)
    atomic_write_text(HERE / "sdd_mixed_tolerance.md", text)


if __name__ == "__main__":
    main()
