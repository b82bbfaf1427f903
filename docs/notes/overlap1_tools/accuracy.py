"""Accuracy and cost of the single adaptive kernel with and without overlap (docs/notes/overlap1.md).

For each case: the compiled kernel at rtol (simulate's default 1e-7, default atol) without and with overlap, the
NumPy solver at the same tolerance, all against a NumPy reference 1,000 times tighter (rtol 1e-10, atol / 1000).
Error = max over samples and components of |y - y_tight| / (atol + rtol |y_tight|) (the rule of
tests/test_codegen.py::test_compiled_is_as_accurate_as_numpy), with lost/departed included.

    PYTHONPATH=. python docs/notes/overlap1_tools/accuracy.py [case ...] --out docs/notes/overlap1_tools/accuracy.json
"""
import argparse
import json
import math
import os
import time

import numpy as np

from ecocc import dumbbell
from ecocc.dde import engine
from ecocc.dde.adaptive import solve_dde
from ecocc.mixed import Mixed, MixedSystem, resolve_protocols
from ecocc.models import get_model
from ecocc.network import CrossTraffic
from ecocc.simulate import output_grid
from ecocc.system import NetworkSystem

RTOL = 1e-7


def _dumbbell(capacity_pps=12500.0, buffer_pkts=400.0, initial_rate_pps=10.0, rtts=(0.05, 0.1, 0.2, 0.4)):
    # tests/test_codegen.py's dumbbell: staggered starts, a stop, a cross-traffic burst, a finite buffer
    ct = (CrossTraffic("bottleneck", kind="schedule", schedule=((4.0, 0.24 * capacity_pps), (6.5, 0.0))),)
    return dumbbell(capacity_pps, list(rtts), starts_s=[0.0, 1.0, 2.3, 3.0],
                    stops_s=[math.inf, 7.0, math.inf, math.inf], buffer_pkts=buffer_pkts, cross_traffic=ct,
                    initial_rate_pps=initial_rate_pps)


def case(name):
    if name == "aecp-small-rtt":  # RTTs 2, 4, 8, 16 ms
        m = get_model("aecp")
        return NetworkSystem(m, _dumbbell(rtts=(0.002, 0.004, 0.008, 0.016)), m.make_params(), 10.0)
    if name == "aecp-1ms":  # 4 flows at RTT 1 ms (the dumbbell), 10 s
        m = get_model("aecp")
        return NetworkSystem(m, dumbbell(12500.0, [0.001] * 4, buffer_pkts=400.0), m.make_params(), 10.0)
    if name == "aecp":
        m = get_model("aecp")
        return NetworkSystem(m, _dumbbell(), m.make_params(), 10.0)
    if name == "symbiosis":
        m = get_model("symbiosis")
        return NetworkSystem(m, _dumbbell(), m.make_params(), 10.0)
    if name == "reno":  # test_codegen's LOSS_NETWORKS dumbbell (RED early drops)
        m = get_model("reno")
        return NetworkSystem(m, _dumbbell(1250.0, buffer_pkts=200.0, initial_rate_pps=500.0), m.make_params(), 10.0)
    if name == "mixed":  # Symbiosis + two Reno (RED), staggered
        net = dumbbell(1000.0, [0.1, 0.2, 0.3], buffer_pkts=50, protocols=["symbiosis", "reno", "reno"],
                       starts_s=[0.0, 0.7, 1.9])
        members, fm = resolve_protocols(net, "aecp", None, None, {})
        return MixedSystem(Mixed(members, fm), net, 10.0)
    raise SystemExit(f"unknown case {name}")


def run(name):
    sysm = case(name)
    t_end = 10.0
    te = output_grid(t_end, 0.05)
    atol = sysm.default_atol()
    rows = {}
    t0 = time.perf_counter()
    tight = solve_dde(sysm.problem(), t_end, rtol=1e-10, atol=atol * 1e-3, t_eval=te)
    rows["numpy-tight"] = dict(steps=tight.n_steps, nfev=tight.nfev, wall_s=time.perf_counter() - t0)
    sc = atol + RTOL * np.abs(tight.y)
    t0 = time.perf_counter()
    ref = solve_dde(sysm.problem(), t_end, rtol=RTOL, atol=atol, t_eval=te)
    rows["numpy"] = dict(steps=ref.n_steps, rejected=ref.n_rejected, nfev=ref.nfev, wall_s=time.perf_counter() - t0,
                         err=float(np.max(np.abs(ref.y - tight.y) / sc)), status=str(ref.status))
    for ov in (False, True):
        engine.solve_adaptive(sysm, t_end, rtol=RTOL, atol=atol, t_eval=te, overlap=ov)  # compile / warm
        t0 = time.perf_counter()
        got = engine.solve_adaptive(sysm, t_end, rtol=RTOL, atol=atol, t_eval=te, overlap=ov)
        e = np.abs(got.y - tight.y) / sc
        i, j = np.unravel_index(int(np.argmax(e)), e.shape)
        rows["compiled" + ("-overlap" if ov else "")] = dict(
            steps=got.n_steps, rejected=got.n_rejected, nfev=got.nfev, wall_s=time.perf_counter() - t0,
            err=float(e.max()), worst_t=float(te[i]), worst_comp=int(j), max_step=float(got.max_step),
            status=str(got.status))
    return dict(case=name, dmin=float(sysm.problem().positive_delays().min()), n=int(sysm.n), rows=rows,
                load=os.getloadavg()[0])


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("cases", nargs="*", default=["aecp-small-rtt", "aecp", "symbiosis", "reno", "mixed"])
    ap.add_argument("--out", default="docs/notes/overlap1_tools/accuracy.json")
    a = ap.parse_args()
    res = []
    for c in a.cases:
        r = run(c)
        res.append(r)
        print(json.dumps(r), flush=True)
        with open(a.out, "w") as f:
            json.dump(res, f, indent=1)
