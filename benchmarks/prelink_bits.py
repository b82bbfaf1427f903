"""Bit-identity check of the compiled kernels before/after a change of the generated text (docs/notes/prelink.md).

``python benchmarks/prelink_bits.py save OUT.npz`` runs a set of compiled (numba) runs under past="steady" (and
a few silent ones) and stores the trajectories and step counts; ``... compare OUT.npz`` reruns them and checks
they are equal bit for bit (np.array_equal).  Run ``save`` on the old code and ``compare`` on the new one.
"""
import math
import sys

import numpy as np

from ecocc import dumbbell, random_network
from ecocc.dde import engine
from ecocc.mixed import Mixed, MixedSystem, resolve_protocols
from ecocc.models import get_model
from ecocc.network import CrossTraffic, Flow, Network
from ecocc.simulate import output_grid
from ecocc.system import NetworkSystem

RTOL = 1e-7


def _small():
    ct = (CrossTraffic("bottleneck", kind="schedule", schedule=((1.5, 2000.0), (2.5, 0.0))),)
    return dumbbell(12500.0, [0.05, 0.1, 0.2, 0.4], starts_s=[0.0, 0.0, 1.0, 2.3],
                    stops_s=[math.inf, 3.0, math.inf, math.inf], buffer_pkts=400.0, cross_traffic=ct,
                    initial_rate_pps=200.0)


def _rand():
    return random_network(300, 20, max_hops=3, seed=1)


def _single(model, net, t_end, params=None, **kw):
    m = get_model(model)
    return NetworkSystem(m, net, m.make_params(**(params or {})), t_end, **kw)


def _mixed(net, protos, default, t_end, overrides=None, **kw):
    flows = tuple(Flow(f.name, f.route, f.rtt_s, start_s=f.start_s, stop_s=f.stop_s,
                       initial_rate_pps=f.initial_rate_pps, protocol=protos[i % len(protos)])
                  for i, f in enumerate(net.flows))
    net = Network(net.links, flows, cross_traffic=net.cross_traffic)
    members, fm = resolve_protocols(net, default, None, None, overrides or {})
    return MixedSystem(Mixed(members, fm), net, t_end, **kw)


def cases():
    yield "symbiosis_small_steady", _single("symbiosis", _small(), 4.0, past="steady"), 4.0
    yield "symbiosis_small_silent", _single("symbiosis", _small(), 4.0), 4.0
    yield "symbiosis_rand_steady", _single("symbiosis", _rand(), 1.0, past="steady"), 1.0
    yield "symbiosis_rand_steady_sent", _single("symbiosis", _rand(), 1.0, past="steady", load_rtt="sent"), 1.0
    yield "symbiosis_rand_steady_sdd", _single("symbiosis", _rand(), 1.0, past="steady",
                                               rtt_includes_queueing=True), 1.0
    yield "reno_rand_steady", _single("reno", _rand(), 1.0, past="steady"), 1.0
    yield "reno_rand_steady_sent", _single("reno", _rand(), 1.0, past="steady", load_rtt="sent"), 1.0
    yield "xcp_small_steady", _single("xcp", _small(), 4.0, past="steady"), 4.0
    yield "petcp_rand_steady", _single("petcp", _rand(), 1.0, past="steady"), 1.0
    yield "mixed_symb_aecp_steady", _mixed(_rand(), ["symbiosis", "aecp"], "aecp", 1.0, past="steady"), 1.0
    yield "mixed_symb_reno_steady", _mixed(_rand(), ["symbiosis", "reno"], "reno", 1.0, past="steady"), 1.0
    yield "mixed_symb_reno_steady_sent", _mixed(_rand(), ["symbiosis", "reno"], "reno", 1.0, past="steady",
                                                load_rtt="sent"), 1.0
    # drop-tail Reno: a load read by the signal (lazily), per flow with the current queueing delay ("current") or
    # summed per link ("sent")
    dt = {"aqm": "droptail"}
    yield "reno_dt_rand_steady", _single("reno", _rand(), 1.0, dt, past="steady"), 1.0
    yield "reno_dt_rand_steady_sent", _single("reno", _rand(), 1.0, dt, past="steady", load_rtt="sent"), 1.0
    yield "mixed_symb_reno_dt_steady_sent", _mixed(_rand(), ["symbiosis", "reno"], "reno", 1.0,
                                                   {"reno__aqm": "droptail"}, past="steady", load_rtt="sent"), 1.0


def run_all(only=None):
    out = {}
    for name, sysm, t_end in cases():
        if only and name not in only:
            continue
        te = output_grid(t_end, 0.05)
        got = engine.solve_adaptive(sysm, t_end, rtol=RTOL, atol=sysm.default_atol(), t_eval=te)
        assert got.status == "success", (name, got.message)
        out[name] = got.y
        out[name + "__t"] = np.asarray(got.t)
        print(name, got.y.shape, flush=True)
    # the fixed-step kernel (its history has no aggregated columns: the per-flow sum, now the per-link one)
    from ecocc import simulate
    if not only or "symbiosis_fixed_steady" in only:
        r = simulate(_rand(), "symbiosis", solver="fixed", step_s=1e-3, engine="numba", past="steady", t_end_s=1.0,
                     output_dt_s=0.05)
        out["symbiosis_fixed_steady"] = np.asarray(r.rate_pps)
        print("symbiosis_fixed_steady", flush=True)
    return out


if __name__ == "__main__":
    what, path = sys.argv[1], sys.argv[2]
    only = sys.argv[3:] or None
    res = run_all(only)
    if what == "save":
        np.savez(path, **res)
    else:
        ref = np.load(path)
        bad = [k for k in res if k in ref and not np.array_equal(res[k], ref[k])]
        missing = [k for k in res if k not in ref]
        for k in res:
            if k in ref and not k.endswith("__t"):
                d = np.max(np.abs(res[k] - ref[k])) if res[k].shape == ref[k].shape else "shape"
                print(f"{k}: equal={np.array_equal(res[k], ref[k])} maxdiff={d}")
        print("NOT EQUAL:", bad, "missing:", missing)
        sys.exit(1 if bad else 0)
