"""Bit-identity check of the lazy arrival lookup (docs/notes/lazyarr.md).

    python docs/notes/lazyarr_tools/bits.py save OUT.npz      # on the old code
    python docs/notes/lazyarr_tools/bits.py compare OUT.npz   # on the new code

Stores, per case: what the compiled engine reads from ``sysm.problem()`` (positive delays, delayed_checked,
breakpoints, jump images, startup_jumps) *before* anything touches the lookups' entries; then every lookup's
comps and delays and the arr*/fwdq* arrays; compiled trajectories (adaptive and fixed-step), NumPy
trajectories (adaptive, fixed, a batch) and one linearization.  ``compare`` checks np.array_equal on each.
"""
import math
import sys

import numpy as np

from ecocc import dumbbell, random_network, simulate
from ecocc.batch import simulate_batch
from ecocc.dde import engine
from ecocc.models import get_model
from ecocc.network import CrossTraffic, Flow, Network
from ecocc.simulate import output_grid
from ecocc.system import NetworkSystem


def _small():
    ct = (CrossTraffic("bottleneck", kind="schedule", schedule=((1.5, 2000.0), (2.5, 0.0))),)
    return dumbbell(12500.0, [0.05, 0.1, 0.2, 0.4], starts_s=[0.0, 0.0, 1.0, 2.3],
                    stops_s=[math.inf, 3.0, math.inf, math.inf], buffer_pkts=400.0, cross_traffic=ct,
                    initial_rate_pps=200.0)


def _rand():
    return random_network(300, 20, max_hops=3, seed=1)


def _rand_fwd():
    """Forward delays on every hop (different per hop), a third of the flows starting later."""
    net = random_network(200, 15, max_hops=3, seed=2)
    flows = []
    for i, f in enumerate(net.flows):
        n = len(f.route)
        fd = tuple(f.rtt_s * (0.1 + 0.5 * (j + 1) / (n + 1)) * (0.5 + 0.5 * ((i * 7 + j) % 5) / 4) for j in range(n))
        flows.append(Flow(f.name, f.route, f.rtt_s, start_s=0.0 if i % 3 else 0.2 + 0.01 * (i % 7),
                          initial_rate_pps=f.initial_rate_pps, forward_delays_s=fd))
    return Network(net.links, tuple(flows))


def _rand_late():
    """No forward delays, a third of the flows starting later (startup_jumps' partial-silent branch)."""
    net = random_network(200, 15, max_hops=3, seed=3)
    flows = tuple(Flow(f.name, f.route, f.rtt_s, start_s=0.0 if i % 3 else 0.3, initial_rate_pps=f.initial_rate_pps)
                  for i, f in enumerate(net.flows))
    return Network(net.links, flows)


def _sys(model, net, t_end, params=None, **kw):
    m = get_model(model)
    return NetworkSystem(m, net, m.make_params(**(params or {})), t_end, **kw)


NETS = dict(small=_small, rand=_rand, fwd=_rand_fwd, late=_rand_late)


def system_cases():
    for model, params in (("symbiosis", None), ("petcp", None), ("petcp", {"delayed_feedback": False}), ("xcp", None),
                          ("reno", None), ("reno", {"aqm": "droptail"}), ("aecp", None)):
        for nn in NETS:
            for past in ("silent", "steady"):
                for lr in ("current", "sent"):
                    tag = f"{model}{'' if not params else '_' + '_'.join(map(str, params.values()))}_{nn}_{past}_{lr}"
                    yield tag, (model, nn, 3.0, params, dict(past=past, load_rtt=lr))
    yield "symbiosis_small_sdd", ("symbiosis", "small", 3.0, None, dict(rtt_includes_queueing=True))
    yield "symbiosis_fwd_sdd", ("symbiosis", "fwd", 3.0, None, dict(rtt_includes_queueing=True))


BUILT = []


def record(out):
    nets = {k: f() for k, f in NETS.items()}
    for tag, (model, nn, t_end, params, kw) in system_cases():
        s = _sys(model, nets[nn], t_end, params, **kw)
        p = s.problem()
        out[f"{tag}/pd"] = p.positive_delays()
        out[f"{tag}/dc"] = p.delayed_checked()
        out[f"{tag}/bp"] = p.breakpoints(t_end)
        out[f"{tag}/ji"] = p.jump_images
        out[f"{tag}/sj"] = s.startup_jumps(t_end)
        built = [i for i, lk in enumerate(s.lookups) if getattr(lk, "built", None) is True or "_arr_entries" in vars(s)]
        if built:  # the new code: the summaries must not build the arrival entries
            BUILT.append((tag, built))
        for i, lk in enumerate(s.lookups):
            out[f"{tag}/lk{i}c"] = lk.comps
            out[f"{tag}/lk{i}d"] = lk.delays
        for nm in ("arr_flows", "arr_delays", "arr_rows", "arrq_starts", "arrq_rows", "arrq_C", "fwdq_starts", "fwdq_C"):
            if nm.startswith("arrq") and "arrq" not in s.lk_index:
                continue  # the old code set them only for load_rtt="sent" (the new one has them as properties)
            if hasattr(s, nm):
                out[f"{tag}/{nm}"] = np.asarray(getattr(s, nm))
        out[f"{tag}/lk_index"] = np.array(sorted(s.lk_index.items()), dtype=object).astype(str)
    # compiled adaptive runs
    runs = [("symbiosis", "rand", 1.0, None, dict(past="steady")),
            ("symbiosis", "rand", 1.0, None, dict()),
            ("symbiosis", "fwd", 1.0, None, dict(load_rtt="sent")),
            ("symbiosis", "late", 1.0, None, dict()),
            ("petcp", "fwd", 1.0, None, dict(past="steady")),
            ("xcp", "small", 3.0, None, dict()),
            ("reno", "rand", 1.0, {"aqm": "droptail"}, dict(load_rtt="sent")),
            ("aecp", "rand", 1.0, None, dict()),
            ("symbiosis", "small", 3.0, None, dict(rtt_includes_queueing=True))]
    for i, (model, nn, t_end, params, kw) in enumerate(runs):
        s = _sys(model, nets[nn], t_end, params, **kw)
        te = output_grid(t_end, 0.05)
        sol = engine.solve_adaptive(s, t_end, rtol=1e-7, atol=s.default_atol(), t_eval=te)
        out[f"run{i}/y"] = sol.y
        out[f"run{i}/n"] = np.array([sol.n_steps, sol.n_rejected, sol.nfev])
        print(f"run{i}", model, nn, kw, sol.status, sol.n_steps, flush=True)
    # compiled fixed step
    s = _sys("symbiosis", nets["late"], 1.0)
    sol = engine.solve_fixed(s, 1.0, 0.002, t_eval=output_grid(1.0, 0.05))
    out["fixed/y"] = sol.y
    # NumPy adaptive and fixed, through simulate
    tr = simulate(nets["small"], "symbiosis", t_end_s=2.0, output_dt_s=0.05, engine="numpy")
    out["np_small/rate"] = np.asarray(tr.rate_pps) if hasattr(tr, "rate_pps") else np.asarray(tr.to_xarray()["rate"])
    out["np_small/n"] = np.array([tr.solver["n_steps"]])
    tr = simulate(nets["fwd"], "symbiosis", t_end_s=0.4, output_dt_s=0.05, engine="numpy", load_rtt="sent")
    out["np_fwd/rate"] = np.asarray(tr.to_xarray()["rate"])
    out["np_fwd/n"] = np.array([tr.solver["n_steps"]])
    tr = simulate(nets["late"], "xcp", t_end_s=0.5, output_dt_s=0.05, engine="numpy", solver="fixed", step_s=0.002)
    out["np_fixed/rate"] = np.asarray(tr.to_xarray()["rate"])
    ds = simulate_batch(nets["small"], "symbiosis", rtt_scale=[1.0, 1.5], t_end_s=1.0, step_s=0.002, engine="numpy")
    out["batch_np/rate"] = np.asarray(ds["rate"])
    ds = simulate_batch(nets["small"], "symbiosis", rtt_scale=[1.0, 1.5], t_end_s=1.0, step_s=0.002, engine="numba")
    out["batch_nb/rate"] = np.asarray(ds["rate"])
    from ecocc.stability.network_linear import network_jacobians
    lin = network_jacobians("symbiosis", dumbbell(12500.0, [0.05, 0.1, 0.2]))
    out["lin/A0"] = np.asarray(lin.A0)
    out["lin/delays"] = np.asarray(lin.delays_s)
    for j, Ak in enumerate(lin.A_delayed):
        out[f"lin/A{j + 1}"] = np.asarray(Ak.toarray() if hasattr(Ak, "toarray") else Ak)
    return out


if __name__ == "__main__":
    mode, path = sys.argv[1], sys.argv[2]
    out = record({})
    if mode == "save":
        np.savez(path, **out)
        print("saved", len(out))
    else:
        ref = np.load(path, allow_pickle=False)
        bad = [k for k in ref.files if k not in out or not np.array_equal(ref[k], out[k], equal_nan=ref[k].dtype.kind == "f")]
        extra = [k for k in out if k not in ref.files]
        print("arrival entries built by the summaries:", BUILT)
        print(f"compared {len(ref.files)}: {len(bad)} differ, {len(extra)} new")
        for k in bad[:40]:
            print("DIFF", k)
        print("new:", sorted({k.split("/")[1] for k in extra}), sorted({k.split("/")[0].split("_")[-1] for k in extra}))
        sys.exit(1 if bad or extra else 0)
