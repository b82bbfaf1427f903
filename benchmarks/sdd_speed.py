"""Compiled vs NumPy for queueing delay in the RTT (state-dependent delays) and forward delays.

``python benchmarks/sdd_speed.py [--reps 3] [--models aecp,reno,petcp,mixed] [--out benchmarks/sdd_speed]``
writes ``<out>.json`` and ``.md``: for each case (model, N flows on a dumbbell, 60 s simulated; ``mixed``: TCP
Symbiosis and drop-tail Reno flows alternating, the ``symbiosis-vs-reno`` members, on the composite kernel;
``sdd``: ``rtt_includes_queueing=True``; ``fwd``: a fifth of each flow's RTT before the link, ``forward_delays_s``;
until 2026-11-29 the ``fwd`` cases used ``delay_split="propagation"``, which on a dumbbell, whose link has no
delay, gives no forward delay at all) the wall time of ``simulate`` on ``engine="numpy"`` and on
``engine="numba"`` (the kernel compiled and cached before timing: a warm-up run), the median of ``--reps``
runs, their ratio, the largest relative difference of the rates and the absolute difference of the queue
between the two engines, and the load average.  Both at ``rtol=1e-6`` (the default).
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import time
from pathlib import Path

import numpy as np

from ecocc import dumbbell, simulate
from ecocc.store import atomic_write_text

CASES = [  # (model, N, variant)
    ("aecp", 4, "sdd"), ("reno", 4, "sdd"), ("petcp", 4, "sdd"),
    ("aecp", 100, "sdd"), ("reno", 100, "sdd"), ("petcp", 100, "sdd"),
    ("aecp", 100, "fwd"), ("reno", 100, "fwd"),
    ("mixed", 4, "sdd"), ("mixed", 100, "sdd"), ("mixed", 4, "fwd"), ("mixed", 100, "fwd"),
]
MIXED = {"symbiosis": {"model": "symbiosis"}, "reno": {"model": "reno", "aqm": "droptail"}}
T_END = 60.0


def _net(N, variant, model):
    rtts = list(np.linspace(0.05, 0.2, N))
    net = dumbbell(250.0 * N, rtts, initial_rate_pps=10.0, buffer_pkts=50.0 * N,
                   protocols=[list(MIXED)[k % 2] for k in range(N)] if model == "mixed" else None)
    if variant == "fwd":  # a fifth of each RTT before the link (a dumbbell's link has no delay to split by)
        net = dataclasses.replace(net, flows=tuple(dataclasses.replace(f, forward_delays_s=(0.2 * f.rtt_s,))
                                                   for f in net.flows))
    return net


def _run(model, N, variant, engine):
    kw = dict(r0_pps=10.0) if model == "aecp" else dict(protocols=MIXED) if model == "mixed" else {}
    t0 = time.perf_counter()
    tr = simulate(_net(N, variant, model), "symbiosis" if model == "mixed" else model, t_end_s=T_END, output_dt_s=0.1, engine=engine,
                  rtt_includes_queueing=(variant == "sdd"), **kw)
    return time.perf_counter() - t0, tr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--numpy-reps", type=int, default=1)
    ap.add_argument("--models", default=None, help="comma-separated models of CASES to run (default: all)")
    ap.add_argument("--out", default=str(Path(__file__).parent / "sdd_speed"), help="results stem (.json, .md)")
    args = ap.parse_args()
    known = sorted({c[0] for c in CASES})
    want = known if args.models is None else args.models.split(",")
    if set(want) - set(known):
        ap.error(f"--models: {sorted(set(want) - set(known))} not among {known}")
    rows = []
    for model, N, variant in (c for c in CASES if c[0] in want):
        _run(model, N, variant, "numba")  # warm-up: generate, compile or load the kernel
        wn = []
        for _ in range(args.reps):
            w, trn = _run(model, N, variant, "numba")
            wn.append(w)
        wp = []
        for _ in range(args.numpy_reps):
            w, trp = _run(model, N, variant, "numpy")
            wp.append(w)
        row = dict(model=model, n_flows=N, variant=variant, t_end_s=T_END, numba_s=statistics.median(wn),
                   numpy_s=statistics.median(wp), ratio=statistics.median(wp) / statistics.median(wn),
                   status=[trn.status.value, trp.status.value],
                   rate_rel_diff=float(np.max(np.abs(trn.rate_pps / trp.rate_pps - 1))),
                   queue_abs_diff_pkts=float(np.max(np.abs(trn.queue_pkts - trp.queue_pkts))),
                   queue_max_pkts=float(trp.queue_pkts.max()), loadavg=os.getloadavg()[0])
        print(row, flush=True)
        rows.append(row)
    out = Path(args.out)
    atomic_write_text(out.with_suffix(".json"), json.dumps(rows, indent=1))
    lines = ["| model | N | variant | NumPy s | compiled s | ratio | max rel diff rate | max abs diff queue (pkts) "
             "| load avg |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['model']} | {r['n_flows']} | {r['variant']} | {r['numpy_s']:.2f} | {r['numba_s']:.3f} | "
                     f"{r['ratio']:.0f}x | {r['rate_rel_diff']:.2g} | {r['queue_abs_diff_pkts']:.2g} | "
                     f"{r['loadavg']:.1f} |")
    atomic_write_text(out.with_suffix(".md"), "\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
