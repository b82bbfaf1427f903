"""The accuracy row's cases on a dense output grid: is the largest error between the benchmark's 20 times larger?

    python benchmarks/accuracy_dense.py [--dt 0.01] [--out benchmarks/accuracy_dense.md]

``benchmarks/models_bench.py`` measures the accuracy target (issue 14: 1e-6 relative in the aggregate rate, 1e-3
packets in the queue, at the default settings, against a tight reference) at 20 times, every 3 s of the 60 s N = 4
dumbbell (its ``_case``).  An error that peaks between those times is not seen there.  This runs the same six cases
with ``simulate`` at the defaults (compiled engine) and against the compiled engine at rtol = atol = 1e-13, on the 20
times and on a grid of ``--dt`` seconds from 3 s on, and gives the largest error on each; the reference's own error is
bounded by comparing it with rtol = atol = 1e-12 on the dense grid.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

MODELS = ("aecp", "cltcp", "petcp", "symbiosis", "reno", "symbiosis+reno")
T_END = 60.0
T_FROM = 3.0  # models_bench's first time (t_end / 20)


def _errors(got, ref):
    """Largest relative error of the aggregate rate and absolute error of the first link's queue (packets), from
    ``T_FROM`` on."""
    m = ref.t_s >= T_FROM - 1e-9
    a = ref.rate_pps.sum(axis=1)[m]
    rate = float(np.max(np.abs(got.rate_pps.sum(axis=1)[m] - a) / a))
    queue = float(np.max(np.abs(got.queue_pkts[m, 0] - ref.queue_pkts[m, 0])))
    return rate, queue


def one(model, dt):
    """The row of one model: errors on the 20 times and on the dense grid, the reference's own, steps."""
    import models_bench as mb
    from ecocc import dumbbell, simulate
    case = mb._case(model, 4, T_END, 1e-7, None)
    buf = case["buffer_pkts"]
    net = dumbbell(case["capacity_pps"], case["rtts_s"], buffer_pkts=float("inf") if buf is None else buf,
                   protocols=case.get("protocols"))

    def run(rtol, atol, out_dt):
        return simulate(net, case["model"], t_end_s=T_END, rtol=rtol, atol=atol, output_dt_s=out_dt, engine="numba",
                        protocols=case.get("members"))

    row = dict(model=model)
    for key, out_dt in (("coarse", T_FROM), ("dense", dt)):
        ref, got = run(1e-13, 1e-13, out_dt), run(1e-7, None, out_dt)
        row[key] = _errors(got, ref)
        row["steps"] = got.solver["n_steps"]
        if key == "dense":
            row["reference"] = _errors(run(1e-12, 1e-12, out_dt), ref)
    return row


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dt", type=float, default=0.01, help="the dense grid's spacing, seconds")
    ap.add_argument("--out", default=str(HERE / "accuracy_dense.md"), help="results file (Markdown)")
    a = ap.parse_args(argv)
    if not (np.isfinite(a.dt) and 0 < a.dt <= 1.0):
        ap.error(f"--dt {a.dt}: a number of seconds in (0, 1]")
    if not Path(a.out).resolve().parent.is_dir():
        ap.error(f"--out {a.out!r}: its directory does not exist")
    from ecocc.store import atomic_write_text
    rows = []
    for model in MODELS:
        rows.append(one(model, a.dt))
        r = rows[-1]
        print(f"{model:16s} 20 times {r['coarse'][0]:.2e} / {r['coarse'][1]:.2e}   every {a.dt:g} s "
              f"{r['dense'][0]:.2e} / {r['dense'][1]:.2e}", flush=True)
    lines = ["# The accuracy row on a dense grid (`python benchmarks/accuracy_dense.py`)", "",
             f"Run {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}.  models_bench.py's N = 4 cases (60 s; mixed: "
             "Symbiosis and drop-tail Reno alternating), `simulate` at the defaults (rtol 1e-7, default atol, compiled "
             "engine) against the compiled engine at rtol = atol = 1e-13; the largest relative error of the aggregate "
             f"rate and absolute error of the first link's queue (packets) from {T_FROM:g} s on, at models_bench.py's "
             f"20 times (every {T_FROM:g} s) and every {a.dt:g} s.  The reference's own error: the same against rtol = "
             "atol = 1e-12 on the dense grid.  Target (issue 14): 1e-6 and 1e-3 packets.", "",
             f"| model | 20 times: rate / queue | every {a.dt:g} s: rate / queue | steps | reference vs 1e-12 |",
             "|---|---|---|---|---|"]
    for r in rows:
        c, d, f = r["coarse"], r["dense"], r["reference"]
        lines.append(f"| {r['model']} | {c[0]:.2e} / {c[1]:.2e} | {d[0]:.2e} / {d[1]:.2e} | {r['steps']} | "
                     f"{f[0]:.1e} / {f[1]:.1e} |")
    atomic_write_text(a.out, "\n".join(lines) + "\n")
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
