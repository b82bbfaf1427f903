"""Steps, rhs evaluations and wall time of the single adaptive kernel with and without overlap
(docs/notes/overlap1.md).  A/B in one process, interleaved (off, on, off, on, ...), medians of the repeats; the
1-min load average is recorded with every timing.  Kernels are compiled (and warmed) before the timed runs.

    PYTHONPATH=. python benchmarks/overlap_bench.py --out benchmarks/overlap_bench.json
    PYTHONPATH=. python benchmarks/overlap_bench.py --cases net-aecp net-symbiosis --n 10000 --t-net 10

Cases: ``dumbbell`` (AECP, 4 flows at RTT 1 ms, 60 s: the method of steps needs >= 60,000 steps),
``net-aecp`` / ``net-symbiosis`` (``random_network(N, 1000, max_hops=5, seed=0)``, delays in [0.01, 0.5] s).
"""
import argparse
import json
import os
import statistics
import time

from ecocc import dumbbell, random_network, simulate


def _one(net, model, t_end, overlap, past):
    t0 = time.perf_counter()
    tr = simulate(net, model, t_end_s=t_end, engine="numba", overlap=overlap, past=past)
    wall = time.perf_counter() - t0
    s = tr.solver
    q = tr.queue_pkts[-1]
    return dict(overlap=overlap, status=str(tr.status), message=tr.message, steps=s["n_steps"],
                rejected=s["n_rejected"], nfev=s["nfev"], wall_s=wall, kernel_s=s["wall_s"],
                max_step=s.get("max_step"), load1=os.getloadavg()[0], queue_end_sum=float(q.sum()))


def bench(name, net, model, t_end, repeats, past="silent"):
    # warm: compile / load both (the same kernel; overlap is an argument)
    simulate(net, model, t_end_s=min(t_end, 0.05), engine="numba", overlap=False, past=past)
    runs = []
    for r in range(repeats):
        for ov in (False, True):
            x = _one(net, model, t_end, ov, past)
            x["repeat"] = r
            runs.append(x)
            print(name, json.dumps(x), flush=True)
    summary = {}
    for ov in (False, True):
        rs = [x for x in runs if x["overlap"] == ov]
        summary["on" if ov else "off"] = dict(
            steps=rs[0]["steps"], rejected=rs[0]["rejected"], nfev=rs[0]["nfev"],
            wall_median_s=statistics.median(x["wall_s"] for x in rs),
            kernel_median_s=statistics.median(x["kernel_s"] for x in rs),
            walls_s=[round(x["wall_s"], 3) for x in rs], loads=[round(x["load1"], 2) for x in rs],
            status=rs[0]["status"], queue_end_sum=rs[0]["queue_end_sum"])
    return dict(case=name, model=model, t_end_s=t_end, past=past, runs=runs, summary=summary)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", nargs="*", default=["dumbbell", "net-aecp", "net-symbiosis"])
    ap.add_argument("--n", type=int, default=10000)
    ap.add_argument("--t-net", type=float, default=10.0)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--past", default="silent")
    ap.add_argument("--out", default="benchmarks/overlap_bench.json")
    a = ap.parse_args()
    out = []
    for c in a.cases:
        if c == "dumbbell":
            res = bench(c, dumbbell(12500.0, [0.001] * 4), "aecp", 60.0, a.repeats)
        else:
            model = c.split("-", 1)[1]
            net = random_network(a.n, 1000, max_hops=5, seed=0)
            res = bench(f"{c} N={a.n}", net, model, a.t_net, a.repeats, past=a.past)
        out.append(res)
        with open(a.out, "w") as f:
            json.dump(out, f, indent=1)
    for r in out:
        for k, v in r["summary"].items():
            print(r["case"], k, {kk: vv for kk, vv in v.items() if kk != "walls_s"})
