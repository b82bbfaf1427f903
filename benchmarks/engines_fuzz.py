"""Seeded differential fuzzer: the compiled default engine against the NumPy reference on small random cases.

    PYTHONPATH=. python benchmarks/engines_fuzz.py [--n 200] [--seed 0] [--numpy-timeout 20] [--budget-min 60]
                                                   [--out benchmarks/engines_fuzz]
    PYTHONPATH=. python benchmarks/engines_fuzz.py --show K       # one case again, verbose (K = case index)
    PYTHONPATH=. python benchmarks/engines_fuzz.py --snippet K    # the Python snippet of case K

Case ``k`` of seed ``s`` is drawn from ``numpy.random.default_rng([s, k])`` alone, so any case can be rerun on
its own.  A case is a random model (every name of ``ecocc.models.REGISTRY``, or a mixed pair of protocols on a
dumbbell), topology (dumbbell of 1-6 flows, parking lot of 2-3 links, a small ``random_network``), capacities
100-1e5 packets/s, RTTs 1 ms-1 s, buffers (none, 5-50 packets, large), RED or drop-tail, staggered starts and
stops, cross traffic, and the options ``rtt_includes_queueing``, ``load_rtt="sent"``, ``past="steady"``,
``delay_split="propagation"``, forward delays on dumbbells (a fraction of each flow's RTT before the link; seeds
>= 2 only, so that the cases of seeds 0 and 1 stay what their results files say), ``method="RK23"``, ``overlap=True`` (compiled run only), ``solver="fixed"``;
t_end 5-30 s (shorter where the smallest RTT would make the NumPy run long).  About 8 % of the cases are batches
instead: the lock-step map kernel (``engine.solve_adaptive_batch``, called as ``simulate_map`` calls it) or
``simulate_batch``'s fixed-step RK4, each member compared with its own NumPy run.

Each single case runs ``simulate(engine="auto")`` (what a user gets) and ``simulate(engine="numpy")`` in a
persistent worker process (a NumPy run over ``--numpy-timeout`` seconds is abandoned and the case recorded as
skipped; a worker that hangs is killed and restarted).  Recorded per case:

* both statuses and messages (an exception other than ``InputError`` is recorded with its traceback);
* the worst scaled difference of the two runs, in the units of ``benchmarks/scenarios_engines.py`` (its
  ``compare``, reused: queue ``1e-4 + rtol |q|`` packets, rate ``1e-6 + (rtol + 1e-8) |x|`` packets/s, counters
  at the end ``1e-3 + rtol |c|`` packets); **agree** = every one at most 200;
* invariants of each run, at every output sample: conservation ``arrived - departed - lost - queue`` per link
  (relative to the arrived count), negative rates or queues, a queue above its buffer, departures faster than
  the capacity, counters that decrease, and the arrived count against the flows' ``sent`` counters (plus the
  cross traffic's exact integral) on the links where that identity is exact -- a link that took in more
  than it sent on, or lost nothing while more arrived than the capacity and the buffer could absorb, breaks it.

Where the two engines differ (> 200 units) on a fixed-step run (``solver="fixed"``: the same grid, so round-off
apart unless the problem amplifies round-off), NumPy is rerun with every capacity times ``1 + 1e-13``: a run
that moves as far from itself is amplified round-off.  Where two adaptive runs differ, both are rerun at rtol 1e-9 (the difference measured in the units of
rtol 1e-7: it shrinks about 100 x when both converge), and both runs at 1e-7 are compared with a tight compiled
run (rtol 1e-10, every atol 1e-11) and, if it finishes in time, a tight NumPy run: two engines about as far from
the tight run as from each other is ill-conditioning (a phase that drifts), not a bug.  A difference that neither
shrinks nor is ill-conditioning is rerun once more with ``queue_atol_pkts=1e-8`` on both engines: the queues'
default absolute tolerance, 1e-4 packets whatever rtol, bounds a rate that reads the queue (``w/(tau + q/C)``) to
about ``1e-4/(C tau)`` relative, far above rtol at a small bandwidth-delay product; if both engines then agree with
each other and with the tight run, the verdict says so (a tolerance limit, not an engine bug).

**Suspicious**: one run fails where the other succeeds, or raises something other than an InputError; the
engines differ by more than 200 units, the difference does not shrink at rtol 1e-9 and it is not
ill-conditioning; an invariant broken in a run whose status is success.  Results: ``<out>.json`` (every case,
rewritten as it goes) and ``<out>.md``.  A run that was stopped (Ctrl-C, a kill, a budget) resumes after its last
finished case when started again with the same seed, start, timeouts and commit (``--fresh`` starts over); a
results file of other settings is refused rather than mixed with.  The worker process exits with its driver.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import scenarios_engines as se  # noqa: E402  (compare, AGREE: the rule of tests/test_codegen.py)

AGREE = se.AGREE
RTOL = 1e-7
RERUN_RTOL = 1e-9
TIGHT_RTOL, TIGHT_ATOL = 1e-10, 1e-11
MODELS = ("aecp", "cltcp", "petcp", "symbiosis", "reno", "hstcp", "stcp", "fast", "xcp")
LOSS_MODELS = ("reno", "hstcp", "stcp")
LANES_MODELS = ("aecp", "cltcp", "petcp", "symbiosis", "reno", "hstcp", "stcp", "fast", "xcp")
MIXED_PAIRS = (("symbiosis", "reno"), ("petcp", "reno"), ("aecp", "reno"), ("fast", "reno"), ("aecp", "petcp"),
               ("symbiosis", "hstcp"), ("fast", "stcp"), ("cltcp", "symbiosis"))
#: a map axis per model for the batch cases (a numeric parameter and a range of it)
MAP_AXIS = {"aecp": ("alpha_per_s", 0.5, 4.0), "cltcp": ("beta_per_s", 0.5, 2.0), "petcp": ("b_per_s", 0.5, 2.0),
            "symbiosis": ("epsilon_per_s", 0.5, 3.0), "reno": ("red_p_max", 0.05, 0.5),
            "hstcp": ("red_p_max", 0.05, 0.5), "stcp": ("b", 0.05, 0.3), "fast": ("gamma", 0.2, 1.0),
            "xcp": ("alpha", 0.2, 0.6)}


# -- drawing a case ----------------------------------------------------------------------------------------------

def _logu(rng, lo, hi):
    return float(np.exp(rng.uniform(np.log(lo), np.log(hi))))


def _r(v, n=4):
    """Round for a readable snippet (the rounded value is the one used)."""
    return float(f"{v:.{n}g}")


def _model_params(rng, model):
    p = {}
    if model in ("aecp", "cltcp") and rng.random() < 0.5:
        p.update(alpha_per_s=_r(rng.uniform(0.5, 4)), beta_per_s=_r(rng.uniform(0.5, 2)),
                 q0_pkts=_r(rng.uniform(0, 200)), T_s=_r(rng.uniform(0.5, 3)))
    elif model == "petcp" and rng.random() < 0.5:
        p.update(a_pps2=_r(_logu(rng, 10, 1000)), b_per_s=_r(rng.uniform(0.5, 2)), T_s=_r(_logu(rng, 0.005, 0.05)),
                 delayed_feedback=bool(rng.random() < 0.7))
    elif model == "symbiosis":
        if rng.random() < 0.4:
            p["available"] = "measured"
        if rng.random() < 0.3:
            p["rate"] = "propagation"
        if rng.random() < 0.4:
            p.update(gamma=_r(rng.uniform(0.3, 1.0)), epsilon_per_s=_r(rng.uniform(0.5, 3)))
    elif model in LOSS_MODELS:
        p["aqm"] = "red" if rng.random() < 0.5 else "droptail"
        if p["aqm"] == "red" and rng.random() < 0.6:
            lo = _r(rng.uniform(2, 100))
            p.update(red_min_th_pkts=lo, red_max_th_pkts=_r(lo * rng.uniform(2, 10)),
                     red_p_max=_r(rng.uniform(0.02, 0.5)))
    elif model == "fast" and rng.random() < 0.5:
        p.update(alpha_pkts=_r(_logu(rng, 5, 500)), gamma=_r(rng.uniform(0.2, 1.0)))
    elif model == "xcp" and rng.random() < 0.5:
        p.update(alpha=_r(rng.uniform(0.2, 0.6)), beta=_r(rng.uniform(0.1, 0.4)), shuffle=_r(rng.uniform(0, 0.2)))
    return p


def _buffer(rng, cap, rtt):
    u = rng.random()
    if u < 0.4:
        return math.inf
    if u < 0.7:
        return _r(rng.uniform(5, 50))
    return _r(max(60.0, cap * rtt * rng.uniform(0.2, 3)))


def _cross(rng, link, cap, t_end):
    u = rng.random()
    if u < 0.35:
        return dict(link=link, kind="constant", rate_pps=_r(cap * rng.uniform(0.05, 0.5)))
    if u < 0.8:
        t1 = _r(rng.uniform(0.1, 0.6) * t_end)
        t2 = _r(t1 + rng.uniform(0.05, 0.35) * t_end)
        return dict(link=link, kind="schedule", schedule=[[t1, _r(cap * rng.uniform(0.1, 0.8))], [t2, 0.0]])
    return dict(link=link, kind="onoff", rate_pps=_r(cap * rng.uniform(0.05, 0.4)), n_sources=int(rng.integers(2, 50)),
                realization="random", seed=int(rng.integers(0, 1000)), bin_s=_r(rng.uniform(0.05, 0.5)))


def draw_case(seed, k):
    """Case ``k`` of seed ``seed``: a JSON-able dict (see :func:`build_network`, :func:`run_single`)."""
    rng = np.random.default_rng([seed, k])
    if rng.random() < 0.08:
        return _draw_batch(rng, seed, k)
    topo_u = rng.random()
    mixed = None
    if topo_u < 0.6:
        n = int(rng.integers(1, 7))
        cap = _r(_logu(rng, 100, 1e5))
        rtts = [_r(_logu(rng, 1e-3, 1.0), 3) for _ in range(n)]
        topo = dict(type="dumbbell", capacity_pps=cap, rtts_s=rtts, buffer_pkts=_buffer(rng, cap, float(np.median(rtts))))
        if rng.random() < 0.4:
            topo["starts_s"] = [0.0] + [_r(rng.uniform(0, 10)) for _ in range(n - 1)]
        if rng.random() < 0.25:
            topo["stops_s"] = [math.inf] * n
            topo["stops_s"][int(rng.integers(0, n))] = _r(rng.uniform(3, 25))
        topo["initial_rate_pps"] = _r(max(1.0, cap / n * 10 ** rng.uniform(-2.5, 0.2)))
        if rng.random() < 0.3:
            topo["cross_traffic"] = [_cross(rng, "bottleneck", cap, 20.0)]
        if rng.random() < 0.2 and n >= 2:
            mixed = MIXED_PAIRS[int(rng.integers(0, len(MIXED_PAIRS)))]
            topo["protocols"] = [mixed[i % 2] for i in range(n)]
        min_rtt = min(rtts)
    elif topo_u < 0.8:
        K = int(rng.integers(2, 4))
        caps = [_r(_logu(rng, 100, 1e5)) for _ in range(K)]
        ld = _r(_logu(rng, 5e-4, 0.2), 3)
        acc = _r(_logu(rng, 1e-3, 0.3), 3) if rng.random() < 0.5 else 0.0
        topo = dict(type="parking_lot", capacities_pps=caps, link_delay_s=ld, access_rtt_s=acc,
                    buffer_pkts=_buffer(rng, min(caps), 2 * ld + acc),
                    initial_rate_pps=_r(max(1.0, min(caps) / 2 * 10 ** rng.uniform(-2.5, 0.2))),
                    delay_split="propagation" if rng.random() < 0.4 else "feedback")
        if rng.random() < 0.25:
            topo["cross_traffic"] = [_cross(rng, f"l{int(rng.integers(1, K + 1))}", caps[0], 20.0)]
        min_rtt = 2 * ld + acc
        if topo["delay_split"] == "propagation":
            min_rtt = min(min_rtt, ld if ld > 0 else min_rtt)
    else:
        nl = int(rng.integers(2, 5))
        lo_c = _logu(rng, 100, 3e4)
        lo_r = _logu(rng, 1e-3, 0.3)
        topo = dict(type="random", n_flows=int(rng.integers(2, 6)), n_links=nl, max_hops=int(rng.integers(1, min(3, nl) + 1)),
                    capacity_pps=[_r(lo_c), _r(lo_c * rng.uniform(1, 3))], rtt_s=[_r(lo_r, 3), _r(lo_r * rng.uniform(1, 4), 3)],
                    initial_rate_pps=_r(max(1.0, lo_c / 3 * 10 ** rng.uniform(-2.5, 0.2))), net_seed=int(rng.integers(0, 10_000)),
                    buffer_pkts=_buffer(rng, lo_c, lo_r))
        min_rtt = topo["rtt_s"][0]
    if mixed is not None:
        model = "mixed"
        params = {m: _model_params(rng, m) for m in mixed}
        params = {m: v for m, v in params.items() if v}
    else:
        model = MODELS[int(rng.integers(0, len(MODELS)))]
        params = _model_params(rng, model)
    # t_end: 5-30 s, at most ~6000 smallest-delay steps for the NumPy run (its steps never exceed that delay)
    t_end = _r(min(rng.uniform(5, 30), max(5.0, 6000 * min_rtt)), 3)
    opts = {}
    if rng.random() < 0.15:
        opts["rtt_includes_queueing"] = True
    if rng.random() < 0.2:
        opts["load_rtt"] = "sent"
    if rng.random() < 0.1:
        opts["past"] = "steady"
    if rng.random() < 0.06:
        opts["method"] = "RK23"
    if rng.random() < 0.08:
        opts["overlap"] = True  # compiled run only (the NumPy solver refuses it)
    if rng.random() < 0.06 and not opts.get("rtt_includes_queueing") and not opts.get("overlap") and "method" not in opts:
        opts["solver"] = "fixed"
        opts["step_s"] = _r(max(min_rtt / 2, t_end / 20000))
    if topo["type"] == "dumbbell" and rng.random() < 0.15:
        topo["delay_split"] = "propagation"  # the dumbbell's link has no delay: the same as feedback
    # forward delays on a dumbbell (seeds >= 2: a draw of its own stream, so the cases of seeds 0 and 1 are unchanged):
    # each flow spends a fraction of its RTT before the link (forward_delays_s)
    rng_f = np.random.default_rng([seed, k, 1])
    if seed >= 2 and topo["type"] == "dumbbell" and rng_f.random() < 0.25:
        topo["fwd_frac"] = [_r(rng_f.uniform(0.0, 0.5), 3) for _ in topo["rtts_s"]]
    # cross traffic times were drawn for 20 s; keep them inside the run
    for c in topo.get("cross_traffic", []):
        if c["kind"] == "schedule":
            c["schedule"] = [[_r(t * t_end / 20.0), r] for t, r in c["schedule"]]
    if topo.get("stops_s"):
        topo["stops_s"] = [s if math.isinf(s) else _r(min(s, 0.9 * t_end)) for s in topo["stops_s"]]
        st = topo.get("starts_s") or [0.0] * len(topo["stops_s"])
        topo["stops_s"] = [s if s > a else math.inf for s, a in zip(topo["stops_s"], st)]
    if topo.get("starts_s"):
        topo["starts_s"] = [_r(min(s, 0.7 * t_end)) for s in topo["starts_s"]]
    return dict(kind="single", seed=seed, k=k, model=model, params=params, topo=topo, opts=opts, t_end_s=t_end)


def _draw_batch(rng, seed, k):
    model = LANES_MODELS[int(rng.integers(0, len(LANES_MODELS)))]
    n = int(rng.integers(1, 4))
    cap = _r(_logu(rng, 300, 3e4))
    rtts = [_r(_logu(rng, 5e-3, 0.3), 3) for _ in range(n)]
    topo = dict(type="dumbbell", capacity_pps=cap, rtts_s=rtts, buffer_pkts=_buffer(rng, cap, float(np.median(rtts))),
                initial_rate_pps=_r(max(1.0, cap / n * 10 ** rng.uniform(-2, 0.2))))
    if rng.random() < 0.3:
        topo["starts_s"] = [0.0] + [_r(rng.uniform(0, 3)) for _ in range(n - 1)]
    params = _model_params(rng, model)
    name, lo, hi = MAP_AXIS[model]
    if model in LOSS_MODELS and name.startswith("red"):
        params["aqm"] = "red"
    B = int(rng.integers(2, 6))
    xs = [_r(v) for v in np.sort(rng.uniform(lo, hi, B))]
    scales = [1.0] if rng.random() < 0.5 else [1.0, _r(rng.uniform(0.5, 2.0))]
    kernel = "lanes" if rng.random() < 0.7 else "fixed"
    t_end = _r(min(rng.uniform(5, 20), max(5.0, 3000 * min(rtts) * min(scales))), 3)
    opts = dict(overlap=bool(rng.random() < 0.6), kinks=bool(rng.random() < 0.7)) if kernel == "lanes" else \
        dict(step_s=_r(min(rtts) * min(scales) / 4))
    if rng.random() < 0.15:
        opts["past"] = "steady"
    return dict(kind="batch", kernel=kernel, seed=seed, k=k, model=model, params=params, topo=topo, axis=name,
                values=xs, rtt_scale=scales, opts=opts, t_end_s=t_end)


# -- building and running ------------------------------------------------------------------------------------

def build_network(topo):
    import dataclasses

    from ecocc import CrossTraffic, dumbbell, parking_lot, random_network
    ct = tuple(CrossTraffic(**{**c, **({"schedule": tuple(map(tuple, c["schedule"]))} if "schedule" in c else {})})
               for c in topo.get("cross_traffic", []))
    if topo["type"] == "dumbbell":
        kw = {k: topo[k] for k in ("starts_s", "stops_s", "initial_rate_pps", "buffer_pkts", "delay_split",
                                   "protocols") if k in topo}
        net = dumbbell(topo["capacity_pps"], topo["rtts_s"], cross_traffic=ct, **kw)
        if topo.get("fwd_frac"):
            net = net.replace(flows=tuple(dataclasses.replace(f, forward_delays_s=(fr * f.rtt_s,))
                                          for f, fr in zip(net.flows, topo["fwd_frac"])))
        return net
    if topo["type"] == "parking_lot":
        net = parking_lot(topo["capacities_pps"], topo["link_delay_s"], access_rtt_s=topo["access_rtt_s"],
                          initial_rate_pps=topo["initial_rate_pps"], buffer_pkts=topo["buffer_pkts"],
                          delay_split=topo["delay_split"])
        return net.replace(cross_traffic=ct) if ct else net
    net = random_network(topo["n_flows"], topo["n_links"], max_hops=topo["max_hops"],
                         capacity_pps=tuple(topo["capacity_pps"]), rtt_s=tuple(topo["rtt_s"]),
                         initial_rate_pps=topo["initial_rate_pps"], seed=topo["net_seed"])
    if not math.isinf(topo["buffer_pkts"]):
        net = net.replace(links=tuple(dataclasses.replace(lk, buffer_pkts=topo["buffer_pkts"]) for lk in net.links))
    return net


def snippet(case):
    """A stand-alone Python snippet that reruns a single case on both engines."""
    topo, lines = case["topo"], ["import math", "from ecocc import simulate, dumbbell, parking_lot, random_network, CrossTraffic"]
    inf = lambda v: "math.inf" if isinstance(v, float) and math.isinf(v) else repr(v)  # noqa: E731
    lst = lambda v: "[" + ", ".join(inf(x) for x in v) + "]"  # noqa: E731
    ct = [f"CrossTraffic({', '.join(f'{k}={tuple(map(tuple, v))!r}' if k == 'schedule' else f'{k}={v!r}' for k, v in c.items())})"
          for c in topo.get("cross_traffic", [])]
    if topo["type"] == "dumbbell":
        kw = "".join(f", {k}={lst(topo[k]) if isinstance(topo[k], list) else inf(topo[k])}"
                     for k in ("starts_s", "stops_s", "initial_rate_pps", "buffer_pkts", "delay_split", "protocols")
                     if k in topo)
        if ct:
            kw += f", cross_traffic=[{', '.join(ct)}]"
        lines.append(f"net = dumbbell({topo['capacity_pps']!r}, {topo['rtts_s']!r}{kw})")
        if topo.get("fwd_frac"):
            lines.insert(1, "import dataclasses")
            lines.append(f"net = net.replace(flows=tuple(dataclasses.replace(f, forward_delays_s=(fr * f.rtt_s,)) "
                         f"for f, fr in zip(net.flows, {topo['fwd_frac']!r})))")
    elif topo["type"] == "parking_lot":
        lines.append(f"net = parking_lot({topo['capacities_pps']!r}, {topo['link_delay_s']!r}, "
                     f"access_rtt_s={topo['access_rtt_s']!r}, initial_rate_pps={topo['initial_rate_pps']!r}, "
                     f"buffer_pkts={inf(topo['buffer_pkts'])}, delay_split={topo['delay_split']!r})")
        if ct:
            lines.append(f"net = net.replace(cross_traffic=({', '.join(ct)},))")
    else:
        lines.append(f"net = random_network({topo['n_flows']}, {topo['n_links']}, max_hops={topo['max_hops']}, "
                     f"capacity_pps={tuple(topo['capacity_pps'])!r}, rtt_s={tuple(topo['rtt_s'])!r}, "
                     f"initial_rate_pps={topo['initial_rate_pps']!r}, seed={topo['net_seed']})")
        if not math.isinf(topo["buffer_pkts"]):
            lines.insert(1, "import dataclasses")
            lines.append(f"net = net.replace(links=tuple(dataclasses.replace(lk, buffer_pkts={topo['buffer_pkts']!r}) "
                         "for lk in net.links))")
    if case["kind"] == "batch":
        lines.append(f"# batch case: kernel={case['kernel']}, model={case['model']!r}, params={case['params']!r}, "
                     f"{case['axis']}={case['values']!r}, rtt_scale={case['rtt_scale']!r}, opts={case['opts']!r}, "
                     f"t_end_s={case['t_end_s']!r} (see run_batch in benchmarks/engines_fuzz.py)")
        return "\n".join(lines)
    args = _sim_kwargs(case, "ENGINE", RTOL)
    a = ", ".join(f"{k}={v!r}" for k, v in args.items() if k not in ("engine",))
    model = "'aecp'" if case["model"] == "mixed" else repr(case["model"])
    lines.append(f"for engine in ('auto', 'numpy'):")
    extra = "" if not case["opts"].get("overlap") else "  # overlap=True: compiled run only"
    lines.append(f"    kw = dict({a}){extra}")
    if case["opts"].get("overlap"):
        lines.append("    if engine == 'numpy': kw.pop('overlap')")
    lines.append(f"    tr = simulate(net, {model}, engine=engine, **kw)")
    lines.append("    print(engine, tr.status, tr.message, tr.solver.get('engine'), tr.solver['n_steps'], "
                 "tr.queue_pkts[-1], tr.rate_pps[-1])")
    return "\n".join(lines)


def _sim_kwargs(case, engine, rtol):
    kw = dict(t_end_s=case["t_end_s"], engine=engine, rtol=rtol, **case["opts"])
    if case["model"] == "mixed":
        if case["params"]:
            kw["params"] = case["params"]
    else:
        kw.update(case["params"])
    if engine == "numpy":
        kw.pop("overlap", None)
    return kw


class Timeout(BaseException):
    pass


def _alarm(signum, frame):
    raise Timeout


def _simulate(case, engine, rtol, timeout=None, atol=None, queue_atol=None, perturb=None):
    """``(Trajectory or None, record dict)``; ``perturb``: every capacity times ``1 + perturb``."""
    from ecocc import simulate
    from ecocc.errors import InputError
    rec = dict(engine=engine, rtol=rtol)
    if perturb:
        key = "capacities_pps" if case["topo"]["type"] == "parking_lot" else "capacity_pps"
        v = case["topo"][key]
        v = [c * (1 + perturb) for c in v] if isinstance(v, list) else v * (1 + perturb)
        case = dict(case, topo=dict(case["topo"], **{key: v}))
        rec["perturb"] = perturb
    kw = _sim_kwargs(case, engine, rtol)
    if atol is not None:
        kw["atol"] = atol
    if queue_atol is not None:
        kw["queue_atol_pkts"] = queue_atol
    t0 = time.perf_counter()
    if timeout:
        signal.signal(signal.SIGALRM, _alarm)
        signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        net = build_network(case["topo"])
        tr = simulate(net, "aecp" if case["model"] == "mixed" else case["model"], **kw)
    except Timeout:
        rec.update(status="timeout", message=f"over {timeout:g} s", wall_s=time.perf_counter() - t0)
        return None, rec
    except InputError as exc:
        rec.update(status="refused", message=str(exc), wall_s=time.perf_counter() - t0)
        return None, rec
    except Exception as exc:  # noqa: BLE001 - what we look for
        rec.update(status="exception", message=f"{type(exc).__name__}: {exc}", traceback=traceback.format_exc(),
                   wall_s=time.perf_counter() - t0)
        return None, rec
    finally:
        if timeout:
            signal.setitimer(signal.ITIMER_REAL, 0)
    rec.update(status=tr.status.value, message=tr.message, wall_s=round(time.perf_counter() - t0, 3),
               solver_engine=tr.solver.get("engine"), compiled=tr.solver.get("compiled"),
               n_steps=tr.solver.get("n_steps"), t_reached_s=tr.solver.get("t_reached_s"))
    return tr, rec


def invariants(tr, net, case, rtol):
    """Physical invariants of one run at every output sample: a dict of measures and a list of broken ones."""
    t, q = tr.t_s, tr.queue_pkts
    A, D, L, S = tr.arrived_pkts, tr.departed_pkts, tr.lost_pkts, tr.sent_pkts
    a = net.arrays
    buf = np.array([lk.buffer_pkts for lk in net.links])
    C = tr.capacity_pps
    out, broken = {}, []
    tol_c = lambda x: 10 * (1e-3 + rtol * np.abs(x))  # noqa: E731  (10 counter tolerances)
    cons = A - D - L - q
    out["conservation_rel"] = float(np.max(np.abs(cons) / np.maximum(np.abs(A), 1.0)))
    out["conservation_abs_pkts"] = float(np.max(np.abs(cons)))
    # every engine keeps the identity to round-off of cumulative counters (tests/test_solver_robustness.py's bound);
    # until 2026-11-29 this allowed 1e-2 + 1e-6 |A| and so missed six of the compiled fixed-step cases
    if np.any(np.abs(cons) > 1e-9 + 1e-10 * np.abs(A)):
        broken.append(f"conservation: |arrived - departed - lost - queue| up to {out['conservation_abs_pkts']:.3g} "
                      f"packets ({out['conservation_rel']:.2g} of arrived)")
    out["min_queue_pkts"] = float(q.min())
    if q.min() < -1e-6:
        broken.append(f"negative queue {q.min():.3g}")
    over = q - buf[None, :]
    out["max_queue_over_buffer_pkts"] = float(np.max(np.where(np.isinf(buf)[None, :], -np.inf, over))) if \
        np.isfinite(buf).any() else None
    if np.any(over > 1e-6 * np.maximum(buf, 1)[None, :]):
        broken.append(f"queue above its buffer by {float(np.max(over)):.3g} packets")
    out["min_rate_pps"] = float(tr.rate_pps.min())
    if tr.rate_pps.min() < -1e-6:
        broken.append(f"negative rate {tr.rate_pps.min():.3g}")
    if not np.all(np.isfinite(tr.rate_pps)) or not np.all(np.isfinite(q)):
        broken.append("non-finite rate or queue in a successful run")
    dt = np.diff(t)[:, None]
    dD = np.diff(D, axis=0)
    exc = dD - C[None, :] * dt * (1 + 1e-6) - tol_c(D[1:])
    out["departures_over_capacity_pkts"] = float(exc.max())
    if exc.max() > 0:
        broken.append(f"departures faster than the capacity by {exc.max():.3g} packets in one sample interval")
    for name, X in (("arrived", A), ("departed", D), ("lost", L), ("sent", S)):
        dec = -np.diff(X, axis=0) - tol_c(X[1:])
        if dec.max() > 0:
            broken.append(f"{name} decreases by {dec.max() + tol_c(X[1:]).flat[np.argmax(dec)]:.3g} packets")
    # arrived = what the flows sent (their sent counters, read through the forward delays) + cross traffic: exact
    # where every forward delay is 0; with forward delays only where the delayed rate is read at the sending
    # time (load_rtt="sent", or a model whose rate does not read the queue) and nothing was sent before t = 0
    fwd = a.pair_fwd_s
    exact = (np.all(fwd == 0) or (case["opts"].get("load_rtt") == "sent" and case["opts"].get("past", "silent") == "silent"))
    ct_random = any(c["kind"] == "onoff" for c in case["topo"].get("cross_traffic", []))
    if exact and not ct_random and case["opts"].get("past", "silent") == "silent":
        inflow = np.zeros_like(A)
        for pl, pf, d in zip(a.pair_link, a.pair_flow, fwd):
            inflow[:, pl] += np.interp(t - d, t, S[:, pf], left=0.0) if d > 0 else S[:, pf]
        for c in case["topo"].get("cross_traffic", []):
            j = [lk.name for lk in net.links].index(c["link"])
            if c["kind"] == "schedule":
                ts = [s[0] for s in c["schedule"]] + [np.inf]
                for (t0, r), t1 in zip(c["schedule"], ts[1:]):
                    inflow[:, j] += r * np.clip(np.minimum(t, t1) - t0, 0, None)
            else:
                inflow[:, j] += c["rate_pps"] * t
        err = np.abs(A - inflow)
        # interpolating a delayed sent counter between samples: a slope change inside an interval
        slack = tol_c(A) + (np.max(np.abs(np.diff(S, axis=0))) if np.any(fwd > 0) else 0.0)
        if case["opts"].get("solver") == "fixed":  # RK4 steps straddle the cross traffic's switches: h x jump each
            for c in case["topo"].get("cross_traffic", []):
                if c["kind"] == "schedule":
                    rates = [0.0] + [r for _, r in c["schedule"]]
                    slack = slack + case["opts"]["step_s"] * np.sum(np.abs(np.diff(rates)))
        out["arrived_vs_sent_pkts"] = float(err.max())
        if np.any(err > slack + 1e-6 * np.abs(A)):
            i, j = np.unravel_index(np.argmax(err - slack), err.shape)
            broken.append(f"arrived {A[i, j]:.6g} != sent by the flows + cross traffic {inflow[i, j]:.6g} at "
                          f"t = {t[i]:g} s on {net.links[j].name}")
        # more arrived than the capacity, the buffer and the losses account for (finite buffers)
        fin = np.isfinite(buf)
        room = C[None, :] * t[:, None] + buf[None, :] + L + tol_c(A) + 1e-6 * np.abs(A)
        ov = np.where(fin[None, :], inflow - room, -np.inf)
        out["inflow_over_capacity_buffer_losses_pkts"] = float(ov.max()) if fin.any() else None
        if fin.any() and ov.max() > 0:
            broken.append(f"{ov.max():.3g} packets arrived beyond capacity x t + buffer + lost")
    return out, broken


def _compare(tr_a, tr_ref, rtol, d):
    """:func:`scenarios_engines.compare` of two Trajectories (written to NetCDF in ``d``)."""
    pa, pb = Path(d) / f"a{time.perf_counter_ns()}.nc", Path(d) / f"b{time.perf_counter_ns()}.nc"
    tr_a.to_netcdf(pa)
    tr_ref.to_netcdf(pb)
    try:
        c = se.compare(pa, pb, rtol)
    finally:
        pa.unlink()
        pb.unlink()
    return c


def _worst(c):
    return max(v["scaled"] for v in c.values())


def _ok(rec):
    return rec["status"] == "success"


def run_single(case, numpy_timeout):
    row = dict(case=case)
    with tempfile.TemporaryDirectory() as d:
        tr_d, row["default"] = _simulate(case, "auto", RTOL)
        tr_n, row["numpy"] = _simulate(case, "numpy", RTOL, timeout=numpy_timeout)
        net = None
        try:
            net = build_network(case["topo"])
        except Exception:  # noqa: BLE001 - recorded by _simulate already
            pass
        sus = []
        for key, tr in (("default", tr_d), ("numpy", tr_n)):
            if tr is not None and tr.ok:
                row[key]["invariants"], broken = invariants(tr, net, case, RTOL)
                row[key]["broken"] = broken
                if broken:
                    sus.append(f"{key} run (status success) breaks invariants: " + "; ".join(broken))
        sd, sn = row["default"]["status"], row["numpy"]["status"]
        for key in ("default", "numpy"):
            if row[key]["status"] == "exception":
                sus.append(f"{key} run raised {row[key]['message'][:200]}")
        if sn == "timeout":
            row["verdict"] = "skipped (NumPy run too long)"
            row["suspicious"] = sus
            return row
        if sd != sn:
            sus.append(f"status: default {sd} ({row['default']['message'][:150]}), NumPy {sn} "
                       f"({row['numpy']['message'][:150]})")
            row["verdict"] = "status differs"
            row["suspicious"] = sus
            return row
        if sd != "success":
            row["verdict"] = f"both {sd}"
            row["suspicious"] = sus
            return row
        if row["default"].get("solver_engine") != "numba":
            row["verdict"] = "same solver"
            row["suspicious"] = sus
            return row
        c = _compare(tr_d, tr_n, RTOL, d)
        row["diff"] = c
        w = row["worst"] = _worst(c)
        row["verdict"] = "agree" if w <= AGREE else "differ"
        if w > AGREE and case["opts"].get("solver") == "fixed":
            # the same grid on both engines: they differ by round-off, unless the problem amplifies it (a queue
            # held at its buffer decides the steps after it).  Rerun NumPy with the capacities perturbed by
            # 1e-13 relative: as far from itself as from the compiled run is amplified round-off
            tp, rp = _simulate(case, "numpy", RTOL, timeout=2 * numpy_timeout, perturb=1e-13)
            row["numpy_perturbed"] = rp
            if tp is not None and tp.ok:
                row["numpy_vs_perturbed"] = _worst(_compare(tp, tr_n, RTOL, d))
            if row.get("numpy_vs_perturbed") is not None and row["numpy_vs_perturbed"] > 0.3 * w:
                row["verdict"] = "differ (fixed step), round-off amplified: NumPy moves as far under a 1e-13 perturbation"
            else:
                row["verdict"] = "differ (fixed step), not round-off"
                sus.append(f"fixed-step engines differ by {w:.3g} units on the same grid; NumPy against itself with "
                           f"capacities x (1 + 1e-13): {row.get('numpy_vs_perturbed')}")
        elif w > AGREE:
            # rerun at 1e-9: in the units of 1e-7, the difference shrinks ~100 x if both converge
            t9d, r9d = _simulate(case, "auto", RERUN_RTOL)
            t9n, r9n = _simulate(case, "numpy", RERUN_RTOL, timeout=4 * numpy_timeout)
            row["rerun_1e-9"] = dict(default=r9d, numpy=r9n)
            if t9d is not None and t9n is not None and t9d.ok and t9n.ok:
                row["rerun_1e-9"]["worst_in_1e-7_units"] = _worst(_compare(t9d, t9n, RTOL, d))
                row["rerun_1e-9"]["worst_own_units"] = _worst(_compare(t9d, t9n, RERUN_RTOL, d))
            tt, rt = _simulate(case, "auto", TIGHT_RTOL, atol=TIGHT_ATOL)
            row["tight"] = rt
            if tt is not None and tt.ok:
                row["default_vs_tight"] = _worst(_compare(tr_d, tt, RTOL, d))
                row["numpy_vs_tight"] = _worst(_compare(tr_n, tt, RTOL, d))
                ttn, rtn = _simulate(case, "numpy", TIGHT_RTOL, timeout=4 * numpy_timeout, atol=TIGHT_ATOL)
                row["tight_numpy"] = rtn
                if ttn is not None and ttn.ok:
                    row["default_vs_tight_numpy"] = _worst(_compare(tr_d, ttn, RTOL, d))
                    row["numpy_vs_tight_numpy"] = _worst(_compare(tr_n, ttn, RTOL, d))
                    row["tight_vs_tight_numpy"] = _worst(_compare(tt, ttn, RTOL, d))
            r9 = row.get("rerun_1e-9", {}).get("worst_in_1e-7_units")
            shrinks = r9 is not None and r9 <= max(AGREE, w / 10)
            dvt, nvt = row.get("default_vs_tight"), row.get("numpy_vs_tight")
            ill = dvt is not None and nvt is not None and min(dvt, nvt) > 0.3 * w
            qa = None
            if not shrinks and not ill and case["opts"].get("solver") != "fixed" and tt is not None and tt.ok:
                # the queues' absolute tolerance (1e-4 packets, whatever rtol) bounds a rate that reads the queue
                # (w/(tau + q/C)) to ~1e-4/(C tau) relative: rerun both with 1e-8 packets
                tqd, rqd = _simulate(case, "auto", RTOL, queue_atol=1e-8)
                tqn, rqn = _simulate(case, "numpy", RTOL, timeout=4 * numpy_timeout, queue_atol=1e-8)
                row["queue_atol_1e-8"] = dict(default=rqd, numpy=rqn)
                if tqd is not None and tqd.ok and tqn is not None and tqn.ok:
                    qa = row["queue_atol_1e-8"]["worst"] = _worst(_compare(tqd, tqn, RTOL, d))
                    row["queue_atol_1e-8"]["default_vs_tight"] = _worst(_compare(tqd, tt, RTOL, d))
                    row["queue_atol_1e-8"]["numpy_vs_tight"] = _worst(_compare(tqn, tt, RTOL, d))
            if shrinks:
                row["verdict"] = "differ, shrinks at 1e-9"
            elif ill:
                row["verdict"] = "differ, ill-conditioned (both far from the tight run)"
            elif qa is not None and qa <= AGREE and max(row["queue_atol_1e-8"]["default_vs_tight"],
                                                         row["queue_atol_1e-8"]["numpy_vs_tight"]) <= AGREE:
                row["verdict"] = "differ, limited by the queue's absolute tolerance (agree with queue_atol_pkts=1e-8)"
            else:
                row["verdict"] = "differ, does not shrink"
                sus.append(f"engines differ by {w:.3g} units; at rtol 1e-9 {r9 if r9 is None else round(r9, 3)} "
                           f"(1e-7 units); default vs tight {dvt}, NumPy vs tight {nvt}")
        row["suspicious"] = sus
    return row


def run_batch(case, numpy_timeout):
    """The batch kernels against per-member ``simulate(engine="numpy")`` (or ``simulate_batch(engine="numpy")``)."""
    import xarray as xr

    from ecocc import simulate
    from ecocc.batch import simulate_batch
    from ecocc.dde.engine import solve_adaptive_batch
    from ecocc.models import get_model
    from ecocc.results import active_mask, flow_rates, flow_values
    from ecocc.simulate import output_grid
    from ecocc.system import NetworkSystem
    row = dict(case=case, members=[])
    sus = []
    net = build_network(case["topo"])
    m = get_model(case["model"])
    t_end, past = case["t_end_s"], case["opts"].get("past", "silent")
    pts = [(x, s) for s in case["rtt_scale"] for x in case["values"]]
    Ps = [m.make_params(None, **{**case["params"], case["axis"]: x}) for x, _ in pts]
    te = output_grid(t_end, None)
    t0 = time.perf_counter()
    try:
        if case["kernel"] == "lanes":
            scales = case["rtt_scale"]
            systems = [NetworkSystem(m, net.scaled(rtt_scale=s), m.make_params(None, **case["params"]), t_end, past=past)
                       for s in scales]
            n_fc = sum(b.size for k, b in systems[0].layout.items() if k.startswith("flow:"))
            iq = systems[0].layout["queue"].sl
            comps = np.r_[np.arange(n_fc), np.arange(iq.start, iq.stop)]
            out, st, cnt = solve_adaptive_batch(systems, np.array([scales.index(s) for _, s in pts]), Ps, t_end,
                                                rtol=RTOL, t_eval=te, components=comps, dynamics_only=True,
                                                overlap=case["opts"]["overlap"], kinks=case["opts"]["kinks"])
            row["batch"] = dict(status=[s.value for s in st], n_steps=[int(c) for c in cnt[:, 0]],
                                wall_s=round(time.perf_counter() - t0, 3))
        else:
            ds = simulate_batch(net, m, [P for P in Ps], rtt_scale=[s for _, s in pts], t_end_s=t_end,
                                step_s=case["opts"]["step_s"], engine="auto", past=past)
            row["batch"] = dict(status=[str(s) for s in ds["status"].values], wall_s=round(time.perf_counter() - t0, 3))
            ds_np = None
    except Exception as exc:  # noqa: BLE001
        row["batch"] = dict(status="exception", message=f"{type(exc).__name__}: {exc}", traceback=traceback.format_exc())
        row["verdict"] = "batch raised"
        row["suspicious"] = [f"batch kernel raised {type(exc).__name__}: {exc}"]
        return row
    if case["kernel"] == "fixed":
        signal.signal(signal.SIGALRM, _alarm)
        signal.setitimer(signal.ITIMER_REAL, numpy_timeout * 2)
        try:
            ds_np = simulate_batch(net, m, [P for P in Ps], rtt_scale=[s for _, s in pts], t_end_s=t_end,
                                   step_s=case["opts"]["step_s"], engine="numpy", past=past)
        except Timeout:
            row["verdict"] = "skipped (NumPy run too long)"
            row["suspicious"] = sus
            return row
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    worst = 0.0
    with tempfile.TemporaryDirectory() as d:
        for b, ((x, s), P) in enumerate(zip(pts, Ps)):
            mem = dict(x=x, rtt_scale=s)
            if case["kernel"] == "fixed":
                a_, r_ = ds.isel(member=b), ds_np.isel(member=b)
                mem.update(status=str(a_["status"].values), numpy_status=str(r_["status"].values))
                if mem["status"] != mem["numpy_status"]:
                    sus.append(f"member {b}: batch {mem['status']}, NumPy batch {mem['numpy_status']}")
                elif mem["status"] == "success":
                    pa, pb = Path(d) / f"a{b}.nc", Path(d) / f"b{b}.nc"
                    a_.drop_vars(["status", "t_failed_s"]).to_netcdf(pa, engine="h5netcdf")
                    r_.drop_vars(["status", "t_failed_s"]).to_netcdf(pb, engine="h5netcdf")
                    c = se.compare(pa, pb, RTOL)
                    mem["worst"] = _worst(c)
                row["members"].append(mem)
                worst = max(worst, mem.get("worst", 0.0))
                continue
            signal.signal(signal.SIGALRM, _alarm)
            signal.setitimer(signal.ITIMER_REAL, numpy_timeout)
            try:
                tr = simulate(net.scaled(rtt_scale=s), m, P, t_end_s=t_end, engine="numpy", rtol=RTOL, past=past)
            except Timeout:
                mem["numpy_status"] = "timeout"
                row["members"].append(mem)
                continue
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
            mem.update(status=row["batch"]["status"][b], numpy_status=tr.status.value)
            if mem["status"] != mem["numpy_status"]:
                sus.append(f"member {b} ({case['axis']}={x}, rtt_scale={s}): lanes {mem['status']}, NumPy "
                           f"{mem['numpy_status']} ({tr.message[:120]})")
            elif tr.ok:
                sysm = systems[case["rtt_scale"].index(s)]
                Y = out[b]
                q = Y[:, n_fc:]
                full = np.zeros((Y.shape[0], sysm.n))
                full[:, :n_fc] = Y[:, :n_fc]
                act = active_mask(sysm.a, te)
                rate = flow_rates(sysm, flow_values(sysm, full), q, act, P)
                ref = tr.to_xarray()
                lane = ref.copy(deep=True)
                lane["queue"] = (("time", "link"), q)
                lane["rate"] = (("time", "flow"), rate)  # counters: not integrated by the map kernel (the NumPy run's)
                pa, pb = Path(d) / f"a{b}.nc", Path(d) / f"b{b}.nc"
                lane.to_netcdf(pa, engine="h5netcdf")
                ref.to_netcdf(pb, engine="h5netcdf")
                c = se.compare(pa, pb, RTOL)
                mem["worst"] = _worst(c)
                mem["diff"] = c
                worst = max(worst, mem["worst"])
                if mem["worst"] > AGREE:  # both against a tight single compiled run: ill-conditioning or not
                    tt = simulate(net.scaled(rtt_scale=s), m, P, t_end_s=t_end, engine="auto", rtol=TIGHT_RTOL,
                                  atol=TIGHT_ATOL, past=past)
                    if tt.ok:
                        pt = Path(d) / f"t{b}.nc"
                        tt.to_netcdf(pt)
                        mem["lane_vs_tight"] = _worst(se.compare(pa, pt, RTOL))
                        mem["numpy_vs_tight"] = _worst(se.compare(pb, pt, RTOL))
                        # the queues' absolute tolerance (1e-4 packets) decides RED's ramp (a law reading the queue's
                        # level): this member alone on the lanes and on NumPy with 1e-8 packets, against the tight run
                        qat = sysm.default_atol(queue_atol_pkts=1e-8)
                        o1, _, _ = solve_adaptive_batch([sysm], np.zeros(1, dtype=np.int64), [P], t_end, rtol=RTOL,
                                                        atol=qat, t_eval=te, components=comps, dynamics_only=True,
                                                        overlap=case["opts"]["overlap"], kinks=case["opts"]["kinks"])
                        full[:, :n_fc] = o1[0][:, :n_fc]
                        lane["queue"] = (("time", "link"), o1[0][:, n_fc:])
                        lane["rate"] = (("time", "flow"), flow_rates(sysm, flow_values(sysm, full), o1[0][:, n_fc:], act, P))
                        pq = Path(d) / f"q{b}.nc"
                        lane.to_netcdf(pq, engine="h5netcdf")
                        mem["lane_qatol_1e-8_vs_tight"] = _worst(se.compare(pq, pt, RTOL))
                        tq = simulate(net.scaled(rtt_scale=s), m, P, t_end_s=t_end, engine="numpy", rtol=RTOL,
                                      queue_atol_pkts=1e-8, past=past)
                        if tq.ok:
                            tq.to_netcdf(pq)
                            mem["numpy_qatol_1e-8_vs_tight"] = _worst(se.compare(pq, pt, RTOL))
            row["members"].append(mem)
    row["worst"] = worst
    row["verdict"] = "agree" if worst <= AGREE else "differ"
    bad = [mm for mm in row["members"] if mm.get("worst", 0.0) > AGREE]
    if bad and case["kernel"] == "lanes" and all(
            mm.get("lane_vs_tight") is not None and mm["numpy_vs_tight"] > 0.3 * mm["worst"]
            and mm["lane_vs_tight"] <= 2 * mm["numpy_vs_tight"] for mm in bad):
        row["verdict"] = "differ, ill-conditioned (NumPy as far from a tight run, the lanes no farther)"
    elif bad and all(mm.get("lane_qatol_1e-8_vs_tight") is not None and mm["lane_qatol_1e-8_vs_tight"] <= AGREE
                     and (mm.get("numpy_qatol_1e-8_vs_tight") or math.inf) <= AGREE for mm in bad):
        row["verdict"] = "differ, limited by the queue's absolute tolerance (both within 200 of a tight run with 1e-8 packets)"
    elif bad:
        sus.append(f"batch ({case['kernel']}) differs from per-member NumPy runs by {worst:.3g} units: "
                   + "; ".join(f"{case['axis']}={mm['x']}, rtt_scale={mm['rtt_scale']}: {mm['worst']:.3g}, lane vs "
                               f"tight {mm.get('lane_vs_tight')}, NumPy vs tight {mm.get('numpy_vs_tight')}" for mm in bad))
    row["suspicious"] = sus
    return row


def run_case(case, numpy_timeout):
    t0 = time.perf_counter()
    try:
        row = (run_single if case["kind"] == "single" else run_batch)(case, numpy_timeout)
    except Exception as exc:  # noqa: BLE001 - a bug of this script or of ecocc outside simulate
        row = dict(case=case, verdict="harness error", suspicious=[],
                   harness_error=f"{type(exc).__name__}: {exc}", traceback=traceback.format_exc())
    row["wall_s"] = round(time.perf_counter() - t0, 2)
    return row


# -- the worker process and the driver -------------------------------------------------------------------------

def worker():
    """Read one JSON case per line on stdin, write one JSON row per line on stdout."""
    import threading
    import warnings
    warnings.simplefilter("ignore")
    parent = os.getppid()

    def orphaned():  # a driver killed (even by SIGKILL) closes no pipe this loop would see mid-case: exit with it
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(3)
    threading.Thread(target=orphaned, daemon=True).start()
    out = sys.stdout
    sys.stdout = sys.stderr  # anything the library prints goes to stderr
    for line in sys.stdin:
        msg = json.loads(line)
        row = run_case(msg["case"], msg["numpy_timeout"])
        out.write(json.dumps(row, default=_json_default) + "\n")
        out.flush()


def _json_default(o):
    if isinstance(o, (np.floating, np.integer)):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, np.bool_):
        return bool(o)
    return str(o)


class Worker:
    def __init__(self):
        self.p = None

    def start(self):
        self.p = subprocess.Popen([sys.executable, __file__, "--worker"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True, bufsize=1)

    def run(self, case, numpy_timeout, hard_timeout):
        if self.p is None or self.p.poll() is not None:
            self.start()
        self.p.stdin.write(json.dumps(dict(case=case, numpy_timeout=numpy_timeout)) + "\n")
        self.p.stdin.flush()
        r, _, _ = select.select([self.p.stdout], [], [], hard_timeout)
        if not r:
            self.kill()
            return dict(case=case, verdict="hang (worker killed)", suspicious=[],
                        note=f"no answer within {hard_timeout:g} s (a compiled run, or a first compilation)")
        line = self.p.stdout.readline()
        if not line:
            rc = self.p.wait()
            self.p = None
            return dict(case=case, verdict="worker died", suspicious=[f"the worker process died (exit status {rc})"])
        return json.loads(line)

    def kill(self):
        if self.p is not None:
            self.p.kill()
            self.p.wait()
            self.p = None


def _md(res):
    rows = res["rows"]
    from collections import Counter
    verdicts = Counter(r["verdict"] for r in rows)
    sus = [r for r in rows if r.get("suspicious")]
    single = [r for r in rows if r["case"]["kind"] == "single"]
    lines = [f"# Differential fuzz: the compiled default engine against the NumPy reference ({res['when']})", "",
             f"`{res['command']}` at commit {res['commit']} (Python {res['python']}; {len(rows)} cases, "
             f"{res['wall_s'] / 60:.1f} min; load {res['load_start'][0]:.1f} at the start, "
             f"{res['load_end'][0]:.1f} at the end).  See the module docstring of `benchmarks/engines_fuzz.py` for the "
             f"cases, the units (those of `benchmarks/scenarios_engines.py`: agree = every scaled difference at most "
             f"{AGREE:g}) and what counts as suspicious.", "",
             "## Verdicts", "", "| verdict | cases |", "|---|---|"]
    if res.get("resumed"):
        lines[-4:-4] = ["Stopped and resumed (the same settings and commit): "
                        + ", ".join(f"after {r['after']} cases ({r['when']})" for r in res["resumed"])
                        + "; the wall time is the sum of the parts.", ""]
    if res.get("redone"):
        lines[-4:-4] = [f"Rows rerun afterwards with `--redo` (at a later commit: the script's verdict rules or ecocc changed): "
                        + ", ".join(f"case {r['k']} ({r['commit']}, {r['when']})" for r in res["redone"]) + ".", ""]
    lines += [f"| {v} | {n} |" for v, n in verdicts.most_common()]
    models = Counter(r["case"]["model"] for r in rows)
    lines += ["", "Models: " + ", ".join(f"{m} {n}" for m, n in sorted(models.items())) + ".",
              "Topologies: " + ", ".join(f"{m} {n}" for m, n in sorted(Counter(r['case']['topo']['type'] for r in rows).items()))
              + f"; batch cases {sum(r['case']['kind'] == 'batch' for r in rows)}.", ""]
    agree = [r["worst"] for r in single if r.get("worst") is not None]
    if agree:
        lines.append(f"Worst scaled difference over the {len(agree)} compared single cases: median {np.median(agree):.3g}, "
                     f"90th percentile {np.percentile(agree, 90):.3g}, max {max(agree):.3g}.")
    inv = [max(r[k]["invariants"]["conservation_rel"] for k in ("default", "numpy") if "invariants" in r.get(k, {}))
           for r in single if any("invariants" in r.get(k, {}) for k in ("default", "numpy"))]
    if inv:
        lines.append(f"Conservation (|arrived - departed - lost - queue| / arrived, worst sample and link of either run): "
                     f"max {max(inv):.2g} over {len(inv)} cases.")
    lines += ["", f"## Suspicious cases ({len(sus)})", ""]
    for r in sus:
        c = r["case"]
        lines.append(f"### case {c['k']} (seed {c['seed']}): {r['verdict']}")
        lines.append("")
        for s in r["suspicious"]:
            lines.append(f"* {s}")
        lines += ["", "```python", snippet(c), "```", ""]
    lines += ["## Differences that were explained (not suspicious)", "",
              "| case | model | topology | worst (1e-7 units) | at rtol 1e-9 (1e-7 units) | default vs tight | NumPy vs tight | verdict |",
              "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if r.get("worst") is not None and r["worst"] > AGREE and not r.get("suspicious") and r["case"]["kind"] == "single":
            f = lambda v: "-" if v is None else f"{v:.3g}"  # noqa: E731
            lines.append(f"| {r['case']['k']} | {r['case']['model']} | {r['case']['topo']['type']} | {f(r['worst'])} | "
                         f"{f(r.get('rerun_1e-9', {}).get('worst_in_1e-7_units'))} | {f(r.get('default_vs_tight'))} | "
                         f"{f(r.get('numpy_vs_tight'))} | {r['verdict']} |")
    skipped = [r for r in rows if r["verdict"].startswith(("skipped", "hang"))]
    if skipped:
        lines += ["", f"## Skipped ({len(skipped)})", ""]
        lines += [f"* case {r['case']['k']}: {r['case']['model']} on {r['case']['topo']['type']}, t_end "
                  f"{r['case']['t_end_s']} s: {r['verdict']}" for r in skipped]
    if res.get("notes"):
        lines += ["", "## Triage by hand", "", res["notes"].rstrip()]
    return "\n".join(lines) + "\n"


def _count(text):
    """argparse type: an integer >= 0."""
    try:
        v = int(text)
    except ValueError:
        v = -1
    if v < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer >= 0")
    return v


def _counts(text):
    """argparse type: comma-separated integers >= 0."""
    return [_count(v) for v in text.split(",")]


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--worker"]:
        return worker()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=_count, default=200, help="cases to draw")
    ap.add_argument("--start", type=_count, default=0, help="first case index")
    ap.add_argument("--seed", type=_count, default=0)
    ap.add_argument("--numpy-timeout", type=float, default=20.0, help="seconds per NumPy run at rtol 1e-7")
    ap.add_argument("--hard-timeout", type=float, default=600.0, help="seconds per case before the worker is killed")
    ap.add_argument("--budget-min", type=float, default=math.inf, help="stop drawing cases after this many minutes")
    ap.add_argument("--out", default=str(HERE / "engines_fuzz"), help="results stem (.json, .md)")
    ap.add_argument("--fresh", action="store_true", help="start over even where <out>.json holds rows of this "
                    "run (by default a run resumes after them: same seed, start, timeouts and commit)")
    ap.add_argument("--show", type=_count, default=None, help="run case K in this process and print its row")
    ap.add_argument("--snippet", type=_count, default=None, help="print the snippet of case K")
    ap.add_argument("--render", action="store_true", help="rewrite <out>.md from <out>.json (with --notes)")
    ap.add_argument("--notes", default=None, help="with --render: a markdown file of notes (the triage by hand), "
                    "stored in <out>.json and appended to <out>.md")
    ap.add_argument("--redo", type=_counts, default=None, help="comma-separated case indices: rerun them with this version of the "
                    "script, replace their rows in <out>.json and rewrite <out>.md")
    a = ap.parse_args(argv)
    if a.snippet is not None:
        print(snippet(draw_case(a.seed, a.snippet)))
        return
    if a.show is not None:
        case = draw_case(a.seed, a.show)
        print(json.dumps(case, indent=1))
        print(json.dumps(run_case(case, a.numpy_timeout), indent=1, default=_json_default))
        return
    from ecocc.store import atomic_write_text
    out = Path(a.out)
    commit = subprocess.run(["git", "-C", str(HERE), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip() or "unknown"
    res = dict(when=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), commit=commit,
               python=sys.version.split()[0], load_start=os.getloadavg(),
               command="python benchmarks/engines_fuzz.py " + " ".join(argv), rows=[])
    t0 = time.perf_counter()
    w = Worker()
    if (a.render or a.redo is not None) and not out.with_suffix(".json").is_file():
        ap.error(f"--render / --redo: no results file {out.with_suffix('.json')} (see --out)")
    if a.render:
        res = json.loads(out.with_suffix(".json").read_text())
        if a.notes:
            res["notes"] = Path(a.notes).read_text()
        atomic_write_text(out.with_suffix(".json"), json.dumps(res, indent=1, default=_json_default))
        atomic_write_text(out.with_suffix(".md"), _md(res))
        return
    if a.redo is not None:
        res = json.loads(out.with_suffix(".json").read_text())
        res.setdefault("redone", [])
        where = {(r["case"]["seed"], r["case"]["k"]): j for j, r in enumerate(res["rows"])}
        missing = [k for k in a.redo if (a.seed, k) not in where]
        if missing:
            ap.error(f"--redo: no row of seed {a.seed} for case(s) {missing} in {out.with_suffix('.json')}")
        for k in a.redo:
            i = where[(a.seed, k)]
            res["rows"][i] = w.run(draw_case(a.seed, k), a.numpy_timeout, a.hard_timeout)
            res["redone"].append(dict(k=k, commit=commit, when=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")))
            print(k, res["rows"][i]["verdict"], res["rows"][i].get("suspicious"), flush=True)
        w.kill()
        atomic_write_text(out.with_suffix(".json"), json.dumps(res, indent=1, default=_json_default))
        atomic_write_text(out.with_suffix(".md"), _md(res))
        return

    # resume: rows of an earlier run of the same cases (seed, start), settings that change a row (the timeouts)
    # and code (commit) are kept and the run goes on after the last one; anything else is refused, not mixed in
    key = dict(seed=a.seed, start=a.start, numpy_timeout=a.numpy_timeout, hard_timeout=a.hard_timeout, commit=commit)
    res["key"], wall0 = key, 0.0
    if out.with_suffix(".json").is_file() and not a.fresh:
        old = json.loads(out.with_suffix(".json").read_text())
        if old.get("key") != key:
            ap.error(f"{out.with_suffix('.json')} holds another run ({old.get('key') or old.get('command')}); "
                     f"this one is {key}: pass --fresh to overwrite it or --out for another file")
        res, wall0 = old, old.get("wall_s", 0.0)
        res.setdefault("resumed", []).append(dict(after=len(res["rows"]), command=res["command"],
                                                  when=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")))
        res["command"] = "python benchmarks/engines_fuzz.py " + " ".join(argv)
        print(f"resuming after {len(res['rows'])} cases of {out.with_suffix('.json')}", flush=True)
    done = {r["case"]["k"] for r in res["rows"]}

    def save():
        res["load_end"] = os.getloadavg()
        res["wall_s"] = wall0 + time.perf_counter() - t0
        atomic_write_text(out.with_suffix(".json"), json.dumps(res, indent=1, default=_json_default))
        atomic_write_text(out.with_suffix(".md"), _md(res))

    try:
        for k in range(a.start, a.start + a.n):
            if k in done:
                continue
            if (time.perf_counter() - t0) / 60 > a.budget_min:
                print(f"budget of {a.budget_min:g} min reached after {len(res['rows'])} cases", flush=True)
                break
            case = draw_case(a.seed, k)
            row = w.run(case, a.numpy_timeout, a.hard_timeout)
            res["rows"].append(row)
            save()
            wst = row.get("worst")
            print(f"{k:5d} {case['kind']:6s} {case['model']:9s} {case['topo']['type']:11s} {row['verdict']}"
                  + (f" (worst {wst:.3g})" if wst is not None else "") + f"  {row.get('wall_s', '-')} s"
                  + ("  SUSPICIOUS" if row.get("suspicious") else ""), flush=True)
    finally:
        w.kill()
        if res["rows"]:
            save()


if __name__ == "__main__":
    main()
