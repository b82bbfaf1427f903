"""The arrival lookup of a NetworkSystem is built on first use (issue 14: its sum_l n_l^2 entries were 5 GiB of a
compiled run's set-up at 100,000 flows on 1,000 links, and the compiled kernels never read them).

Fast: no kernel is compiled (``engine.generic_args`` assembles everything the compiled adaptive kernel is called
with, from ``sysm.problem()``).
"""
import pickle

import numpy as np
import pytest

from ecocc import random_network
from ecocc.dde import engine
from ecocc.dde.problem import LazyLookup, Lookup
from ecocc.models import get_model
from ecocc.network import Flow, Network
from ecocc.system import NetworkSystem, sent_queue_entries


def _fwd_late():
    """Forward delays on every hop (different per hop) and a third of the flows starting later."""
    net = random_network(120, 10, max_hops=3, seed=2)
    flows = []
    for i, f in enumerate(net.flows):
        n = len(f.route)
        fd = tuple(f.rtt_s * (0.1 + 0.5 * (j + 1) / (n + 1)) * (0.5 + 0.5 * ((i * 7 + j) % 5) / 4) for j in range(n))
        flows.append(Flow(f.name, f.route, f.rtt_s, start_s=0.0 if i % 3 else 0.2 + 0.01 * (i % 7),
                          initial_rate_pps=f.initial_rate_pps, forward_delays_s=fd))
    return Network(net.links, tuple(flows))


def _late():
    """No forward delays, a third of the flows starting later (the partly silent start-up)."""
    net = random_network(120, 10, max_hops=3, seed=3)
    return Network(net.links, tuple(Flow(f.name, f.route, f.rtt_s, start_s=0.0 if i % 3 else 0.3,
                                         initial_rate_pps=f.initial_rate_pps) for i, f in enumerate(net.flows)))


NETS = {"rand": lambda: random_network(150, 12, max_hops=3, seed=1), "late": _late, "fwd": _fwd_late}
CASES = [(model, params, nn, kw)
         for model, params in (("symbiosis", {}), ("xcp", {}), ("reno", {"aqm": "droptail"}),
                               ("petcp", {"delayed_feedback": False}))
         for nn in NETS
         for kw in (dict(), dict(past="steady"), dict(load_rtt="sent"))]


def _system(model, params, nn, kw, t_end=2.0):
    m = get_model(model)
    return NetworkSystem(m, NETS[nn](), m.make_params(**params), t_end, **kw)


def _not_built(s):
    lazy = [lk for lk in s.lookups if isinstance(lk, LazyLookup)]
    return bool(lazy) and not any(lk.built for lk in lazy) and not any(
        k in vars(s) for k in ("_arr_entries", "arr_flows", "arr_delays", "arr_rows", "arrq_starts", "arrq_C"))


def _summaries(s):
    p = s.problem()
    return dict(pd=p.positive_delays(), dc=p.delayed_checked(), bp=p.breakpoints(s.t_end), ji=p.jump_images,
                sj=s.startup_jumps())


@pytest.mark.parametrize("model,params,nn,kw", [c for c in CASES if c[0] != "petcp" or c[3] == {}])
def test_compiled_setup_does_not_build_arrival_entries(model, params, nn, kw):
    """Everything the compiled adaptive kernel is called with comes without the arrival entries."""
    s = _system(model, params, nn, kw)
    assert "arr" in s.lk_index and ("arrq" in s.lk_index) == (kw.get("load_rtt") == "sent")
    gen, args = engine.generic_args(s, s.t_end, rtol=1e-7, atol=s.default_atol(), t_eval=np.linspace(0, s.t_end, 5))
    assert _not_built(s)
    assert args["dmin"] > 0 and args["bps"].size >= 1


@pytest.mark.parametrize("model,params,nn,kw", CASES)
def test_lazy_arrival_entries_equal_an_eager_build(model, params, nn, kw):
    """What the problem derives without the entries (delays, breakpoints, checked components, start-up jumps)
    equals what it derives from them; the entries, built on first use, are the per-pair loop's."""
    lazy, eager = _system(model, params, nn, kw), _system(model, params, nn, kw)
    for lk in eager.lookups:  # build every entry first: DDEProblem then reads them (the old, eager path)
        lk.comps
    assert all(lk.built for lk in eager.lookups if isinstance(lk, LazyLookup))
    got, ref = _summaries(lazy), _summaries(eager)
    assert _not_built(lazy)
    for k in ref:
        assert np.array_equal(got[k], ref[k]), k
    # the entries themselves, against a per-pair loop: pair j = (l, p) sees every flow k on l at d_b(l, p) + d_f(l, k)
    a = lazy.a
    indptr, indices = a.flows_by_link()
    fwd_of = {(a.pair_link[j], a.pair_flow[j]): lazy.fwd[j] for j in range(a.pair_link.size)}
    rows, ks, dl = [], [], []
    for j, ll in enumerate(a.pair_link):
        on = indices[indptr[ll]:indptr[ll + 1]]
        rows.append(np.full(on.size, j))
        ks.append(on)
        dl.append(lazy.bwd[j] + np.array([fwd_of[(ll, k)] for k in on]))
    rows, ks, dl = np.concatenate(rows), np.concatenate(ks), np.concatenate(dl)
    assert np.array_equal(lazy.arr_rows, rows) and np.array_equal(lazy.arr_flows, ks)
    assert np.array_equal(lazy.arr_delays, dl)
    fv = [lazy.layout["flow:" + v].start for v in lazy.model.flow_states]
    arr = lazy.lookups[lazy.lk_index["arr"]]
    assert np.array_equal(arr.comps, np.concatenate([o + ks for o in fv]))
    assert np.array_equal(arr.delays, np.tile(dl, len(fv)))
    if "arrq" in lazy.lk_index:
        links, dq, starts, qrows = sent_queue_entries(a, ks, dl)
        q = lazy.lookups[lazy.lk_index["arrq"]]
        assert np.array_equal(q.comps, lazy.layout["queue"].start + links) and np.array_equal(q.delays, dq)
        assert np.array_equal(lazy.arrq_starts, starts) and np.array_equal(lazy.arrq_rows, qrows)
        assert np.array_equal(lazy.arrq_C, lazy.C[links])
    # once built, the lookup answers from its entries, as a plain Lookup
    for nm in ("arr", "arrq"):
        if nm in lazy.lk_index:
            lk = lazy.lookups[lazy.lk_index[nm]]
            plain = Lookup(lk.comps, lk.delays)
            assert np.array_equal(lk.positive_delays(), plain.positive_delays())


def test_numpy_rhs_and_pickle_with_lazy_entries():
    """The NumPy right-hand side builds the entries on its first call (the same values as a system whose
    entries were built first); a system pickles before and after."""
    lazy, eager = _system("symbiosis", {}, "fwd", dict(load_rtt="sent")), _system("symbiosis", {}, "fwd",
                                                                                  dict(load_rtt="sent"))
    for lk in eager.lookups:
        lk.comps
    lazy = pickle.loads(pickle.dumps(lazy))
    assert _not_built(lazy)
    y = lazy.initial_state()
    rng = np.random.default_rng(0)
    y = y + 0.01 * rng.standard_normal(y.size) * (y != 0)
    out = []
    for s in (lazy, eager):
        p = s.problem()
        Z = [y[..., np.asarray(lk.comps)] for lk in p.lookups]
        sat = np.zeros(s.n_links, dtype=bool)
        out.append(p.rhs(0.7, y, Z, sat, sat))
    assert not _not_built(lazy)
    assert np.array_equal(out[0], out[1])
    again = pickle.loads(pickle.dumps(lazy))
    assert np.array_equal(again.lookups[again.lk_index["arr"]].delays, eager.lookups[eager.lk_index["arr"]].delays)


@pytest.mark.slow  # compiles the fixed-step kernel on a fresh machine
def test_compiled_batch_does_not_build_arrival_entries(monkeypatch):
    """simulate_batch(engine="numba") runs the members' systems: no stacked lookups, no arrival entries built
    (the NumPy batch builds them, as before)."""
    pytest.importorskip("numba")
    from ecocc import dumbbell
    from ecocc.batch import simulate_batch
    built = []
    orig = NetworkSystem._arr_lookup
    monkeypatch.setattr(NetworkSystem, "_arr_lookup", lambda self: built.append(1) or orig(self))
    net = dumbbell(12500.0, [0.05, 0.1, 0.2], buffer_pkts=400.0, initial_rate_pps=200.0)
    kw = dict(rtt_scale=[1.0, 1.5], t_end_s=0.5, step_s=0.002)
    got = simulate_batch(net, "symbiosis", engine="numba", **kw)
    assert not built and set(got["status"].values) == {"success"}
    ref = simulate_batch(net, "symbiosis", engine="numpy", **kw)
    assert len(built) == 3  # the two members' and the shared structure's
    assert np.allclose(got["rate"], ref["rate"], rtol=1e-6, atol=1e-6)
