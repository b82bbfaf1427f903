"""Bit-identity check of the lazy mixed arrival lookups (docs/notes/mixlazy.md).

    python docs/notes/mixlazy_tools/bits.py save OUT.npz      # on the old code
    python docs/notes/mixlazy_tools/bits.py compare OUT.npz   # on the new code

Per MixedSystem case: what the compiled engine reads from ``sysm.problem()`` (positive delays, delayed_checked,
breakpoints, jump images) and ``startup_jumps`` *before* anything touches the lookups' entries; then every
lookup's comps and delays (by name), the queueing delays and the NumPy right-hand side at a perturbed state.
Then mixed runs: compiled (adaptive, fixed-step RK4) and NumPy (adaptive), every Trajectory array
(t, rates, queues, counters, per-member flow and link variables) and the step counts.  ``compare`` checks
np.array_equal on each (equal_nan: a member's flow variables are NaN on the other members' flows).
"""
import dataclasses
import math
import sys

import numpy as np

from ecocc import dumbbell, random_network, simulate
from ecocc.mixed import Mixed, MixedSystem, resolve_protocols
from ecocc.network import CrossTraffic, Flow, Network

PROTS = {
    "symreno": (["symbiosis", "reno"], {"reno": {"model": "reno", "aqm": "droptail"}}),
    "peteno": (["petcp", "reno"], {}),  # Reno with RED (its default)
    "three": (["aecp", "petcp", "reno"], {"reno": {"model": "reno", "aqm": "droptail"}}),
}


def _assign(net, names):
    return Network(net.links, tuple(dataclasses.replace(f, protocol=names[i % len(names)])
                                    for i, f in enumerate(net.flows)), net.cross_traffic)


def _small(names):
    ct = (CrossTraffic("bottleneck", kind="schedule", schedule=((1.5, 2000.0), (2.5, 0.0))),)
    return dumbbell(12500.0, [0.05, 0.1, 0.2, 0.4], starts_s=[0.0, 0.0, 1.0, 2.3],
                    stops_s=[math.inf, 3.0, math.inf, math.inf], buffer_pkts=400.0, cross_traffic=ct,
                    initial_rate_pps=200.0, protocols=[names[i % len(names)] for i in range(4)])


def _rand(names):
    return _assign(random_network(300, 20, max_hops=3, seed=1), names)


def _late(names):
    net = random_network(200, 15, max_hops=3, seed=3)
    flows = tuple(Flow(f.name, f.route, f.rtt_s, start_s=0.0 if i % 3 else 0.3, initial_rate_pps=f.initial_rate_pps,
                       protocol=names[i % len(names)]) for i, f in enumerate(net.flows))
    return Network(net.links, flows)


def _fwd(names):
    """Forward delays on every hop (NumPy composite only), a third of the flows starting later."""
    net = random_network(120, 10, max_hops=3, seed=2)
    flows = []
    for i, f in enumerate(net.flows):
        n = len(f.route)
        fd = tuple(f.rtt_s * (0.1 + 0.5 * (j + 1) / (n + 1)) * (0.5 + 0.5 * ((i * 7 + j) % 5) / 4) for j in range(n))
        flows.append(Flow(f.name, f.route, f.rtt_s, start_s=0.0 if i % 3 else 0.2 + 0.01 * (i % 7),
                          initial_rate_pps=f.initial_rate_pps, forward_delays_s=fd, protocol=names[i % len(names)]))
    return Network(net.links, tuple(flows))


NETS = {"small": _small, "rand": _rand, "late": _late, "fwd": _fwd}


def _system(pk, nn, t_end=2.0, **kw):
    names, prot = PROTS[pk]
    net = NETS[nn](names)
    members, fm = resolve_protocols(net, names[0], None, prot, {})
    return MixedSystem(Mixed(members, fm), net, t_end, **kw)


SYSTEM_CASES = [(pk, nn, kw) for pk in PROTS for nn in NETS
                for kw in (dict(), dict(past="steady"), dict(load_rtt="sent"), dict(rtt_includes_queueing=True))]


def system_arrays(pk, nn, kw):
    s = _system(pk, nn, **kw)
    out = {}
    p = s.problem()
    out["pd"], out["dc"], out["bp"], out["ji"] = p.positive_delays(), p.delayed_checked(), p.breakpoints(s.t_end), \
        p.jump_images
    out["sj"] = s.startup_jumps()
    for name, i in s.lk_index.items():
        out[f"lk[{name}].comps"] = np.asarray(s.lookups[i].comps)
        out[f"lk[{name}].delays"] = np.asarray(s.lookups[i].delays)
    y = s.initial_state()
    rng = np.random.default_rng(0)
    y = y + 0.01 * rng.standard_normal(y.size) * (y != 0)
    y[s.layout["queue"].sl] = 5.0 + rng.random(s.n_links)
    for i, qd in enumerate(s.queueing_delays(0.5, y)):
        out[f"qd{i}"] = np.zeros(0) if qd is None else qd
    Z = [y[..., np.asarray(lk.comps)] for lk in p.lookups]
    sat = np.zeros(s.n_links, dtype=bool)
    out["rhs"] = p.rhs(0.7, y, Z, sat, sat)
    return out


def _traj(tr):
    out = dict(t=tr.t_s, rate=tr.rate_pps, queue=tr.queue_pkts, lost=tr.lost_pkts, arrived=tr.arrived_pkts,
               departed=tr.departed_pkts, sent=tr.sent_pkts, qarea=tr.queue_area_pkt_s)
    for k, v in tr.flow_vars.items():
        out["f." + k] = v
    for k, v in tr.link_vars.items():
        out["l." + k] = v
    out["counts"] = np.array([tr.solver.get(k, -1) for k in ("n_steps", "n_rejected", "nfev")], dtype=float)
    return out


RUN_CASES = [  # (label, protocols key, network, engine, solver, t_end, extra simulate kwargs)
    ("c-symreno-small", "symreno", "small", "numba", "adaptive", 3.0, {}),
    ("c-symreno-small-steady", "symreno", "small", "numba", "adaptive", 3.0, {"past": "steady"}),
    ("c-symreno-rand", "symreno", "rand", "numba", "adaptive", 1.0, {}),
    ("c-symreno-late-sent", "symreno", "late", "numba", "adaptive", 1.0, {"load_rtt": "sent"}),
    ("c-peteno-rand", "peteno", "rand", "numba", "adaptive", 1.0, {}),
    ("c-symreno-rand-fixed", "symreno", "rand", "numba", "fixed", 0.5, {"step_s": 0.001}),
    ("n-symreno-small", "symreno", "small", "numpy", "adaptive", 2.0, {}),
    ("n-symreno-rand", "symreno", "rand", "numpy", "adaptive", 0.3, {}),
    ("n-three-late-sent", "three", "late", "numpy", "adaptive", 0.4, {"load_rtt": "sent"}),
    ("n-symreno-fwd-sent", "symreno", "fwd", "numpy", "adaptive", 0.3, {"load_rtt": "sent"}),
    ("n-symreno-small-rq", "symreno", "small", "numpy", "adaptive", 1.0, {"rtt_includes_queueing": True}),
    ("n-peteno-small-fixed", "peteno", "small", "numpy", "fixed", 1.0, {"step_s": 0.002}),
]


def run_arrays(label, pk, nn, eng, solver, t_end, kw):
    names, prot = PROTS[pk]
    net = NETS[nn](names)
    tr = simulate(net, names[0], protocols=prot, t_end_s=t_end, output_dt_s=t_end / 50, engine=eng, solver=solver, **kw)
    assert tr.solver.get("engine", eng) == eng, (label, tr.solver.get("engine"))
    return _traj(tr)


def collect():
    out = {}
    for pk, nn, kw in SYSTEM_CASES:
        tag = f"sys:{pk}:{nn}:{sorted(kw.items())}"
        for k, v in system_arrays(pk, nn, kw).items():
            out[f"{tag}:{k}"] = v
    for case in RUN_CASES:
        for k, v in run_arrays(*case).items():
            out[f"run:{case[0]}:{k}"] = v
        print(case[0], "done", flush=True)
    return out


def main():
    mode, path = sys.argv[1], sys.argv[2]
    got = collect()
    if mode == "save":
        np.savez(path, **got)
        print(f"saved {len(got)} arrays")
        return
    ref = np.load(path)
    bad = [k for k in ref.files if k not in got or not np.array_equal(ref[k], got[k], equal_nan=True)]
    extra = [k for k in got if k not in ref.files]
    print(f"{len(ref.files)} arrays, {len(ref.files) - len(bad)} equal, {len(bad)} differ, {len(extra)} new")
    for k in bad[:40]:
        print("DIFFERS", k)
    sys.exit(1 if bad or extra else 0)


if __name__ == "__main__":
    main()
