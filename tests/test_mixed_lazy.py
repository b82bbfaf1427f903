"""A mixed-protocol system's arrival lookups are built on first use (as the single-model one's,
tests/test_lazy_lookups.py): their sum_l n_l^2 entries, one per (pair of member M, flow of member N on its link),
are what only the NumPy composite gathers through; a compiled mixed run never builds them
(docs/notes/mixlazy.md).

Fast except the last test (nothing compiled: ``engine.generic_args`` assembles everything the compiled composite
kernel is called with).
"""
import dataclasses
import math
import pickle

import numpy as np
import pytest

from ecocc import dumbbell, random_network
from ecocc.dde import engine
from ecocc.dde.problem import LazyLookup, Lookup, sorted_unique
from ecocc.mixed import Mixed, MixedSystem, resolve_protocols
from ecocc.network import CrossTraffic, Flow, Network
from ecocc.system import sent_queue_entries

PROTS = {
    "symreno": (["symbiosis", "reno"], {"reno": {"model": "reno", "aqm": "droptail"}}),
    "peteno": (["petcp", "reno"], {}),
    "three": (["aecp", "petcp", "reno"], {"reno": {"model": "reno", "aqm": "droptail"}}),
    "nofb": (["petcp", "symbiosis"], {"petcp": {"model": "petcp", "delayed_feedback": False}}),
}


def _assign(net, names):
    return Network(net.links, tuple(dataclasses.replace(f, protocol=names[i % len(names)])
                                    for i, f in enumerate(net.flows)), net.cross_traffic)


def _small(names):
    ct = (CrossTraffic("bottleneck", kind="schedule", schedule=((1.5, 2000.0), (2.5, 0.0))),)
    return dumbbell(12500.0, [0.05, 0.1, 0.2, 0.4], starts_s=[0.0, 0.0, 1.0, 2.3],
                    stops_s=[math.inf, 3.0, math.inf, math.inf], buffer_pkts=400.0, cross_traffic=ct,
                    initial_rate_pps=200.0, protocols=[names[i % len(names)] for i in range(4)])


def _late(names):
    """A third of the flows starting later (the partly silent start-up); members only on some links."""
    net = random_network(150, 12, max_hops=3, seed=3)
    return Network(net.links, tuple(Flow(f.name, f.route, f.rtt_s, start_s=0.0 if i % 3 else 0.3,
                                         initial_rate_pps=f.initial_rate_pps,
                                         protocol=names[0] if f.route[0] in ("l0", "l1") else names[i % len(names)])
                                    for i, f in enumerate(net.flows)))


def _fwd(names):
    """Forward delays on every hop (the NumPy composite only), a third of the flows starting later."""
    net = random_network(120, 10, max_hops=3, seed=2)
    flows = []
    for i, f in enumerate(net.flows):
        n = len(f.route)
        fd = tuple(f.rtt_s * (0.1 + 0.5 * (j + 1) / (n + 1)) * (0.5 + 0.5 * ((i * 7 + j) % 5) / 4) for j in range(n))
        flows.append(Flow(f.name, f.route, f.rtt_s, start_s=0.0 if i % 3 else 0.2 + 0.01 * (i % 7),
                          initial_rate_pps=f.initial_rate_pps, forward_delays_s=fd, protocol=names[i % len(names)]))
    return Network(net.links, tuple(flows))


NETS = {"small": _small, "rand": lambda names: _assign(random_network(150, 12, max_hops=3, seed=1), names),
        "late": _late, "fwd": _fwd}


def _system(pk, nn, kw, t_end=2.0):
    names, prot = PROTS[pk]
    net = NETS[nn](names)
    members, fm = resolve_protocols(net, names[0], None, prot, {})
    return MixedSystem(Mixed(members, fm), net, t_end, **kw)


KWS = (dict(), dict(past="steady"), dict(load_rtt="sent"))
COMPILED = [(pk, nn, kw) for pk in PROTS for nn in ("small", "rand", "late") for kw in KWS]
ALL = COMPILED + [(pk, nn, kw) for pk in ("symreno", "three") for nn in ("fwd", "small")
                  for kw in (dict(load_rtt="sent"), dict(rtt_includes_queueing=True))]


def _arr_lazy(s):
    return [s.lookups[i] for i in s._arr_of]


def _not_built(s):
    lazy = _arr_lazy(s)
    return (bool(lazy) and all(isinstance(lk, LazyLookup) and not lk.built for lk in lazy)
            and "_mix_cache" not in vars(s))


@pytest.mark.parametrize("pk,nn,kw", COMPILED)
def test_compiled_mixed_setup_does_not_build_arrival_entries(pk, nn, kw):
    """Everything the compiled composite kernel is called with comes without the arrival entries (fails on the
    eager code: its arrival lookups are plain Lookups, built in the constructor)."""
    s = _system(pk, nn, kw)
    assert any(nm.startswith("arr:") for nm in s.lk_index)
    gen, args = engine.generic_args(s, s.t_end, rtol=1e-7, atol=s.default_atol(), t_eval=np.linspace(0, s.t_end, 5))
    assert _not_built(s)
    assert args["dmin"] > 0 and args["bps"].size >= 1


def _old_entries(s, M):
    """The eager construction's per-pair loop (the code before docs/notes/mixlazy.md): ``(rows, ks, dl)``."""
    a = s.a
    pl, pf = a.pair_link, a.pair_flow
    fwd_of = {(int(pl[j]), int(pf[j])): s.fwd[j] for j in range(pl.size)}
    lptr, lflows = a.flows_by_link()
    rows, ks, dl = [], [], []
    for r, j in enumerate(M.pairs):
        ll = pl[j]
        on_l = lflows[lptr[ll]:lptr[ll + 1]]
        rows.append(np.full(on_l.size, r))
        ks.append(on_l)
        dl.append(s.bwd[j] + np.array([fwd_of[(int(ll), int(k))] for k in on_l]))
    return np.concatenate(rows), np.concatenate(ks), np.concatenate(dl)


def _old_startup_jumps(s):
    """The eager code's :meth:`MixedSystem.startup_jumps`: every lookup's entries of silent flows."""
    if s.past != "silent":
        return np.zeros(0)
    silent = np.asarray(s.start_s, dtype=float) <= 0.0
    fc = s.flow_of_component()
    parts = [np.zeros(0)]
    for lk in s.lookups:
        fl = fc[lk.comps]
        sel = fl >= 0
        sel[sel] = silent[fl[sel]]
        parts.append(np.asarray(lk.delays, dtype=float)[sel])
    d = sorted_unique(np.concatenate(parts))
    return d[(d > 0.0) & (d <= s.t_end)]


@pytest.mark.parametrize("pk,nn,kw", ALL)
def test_lazy_mixed_arrival_entries_equal_an_eager_build(pk, nn, kw):
    """What the problem derives without the entries (delays, breakpoints, checked components, start-up jumps)
    equals what it derives from them; the lookups, built on first use, are the eager per-pair loop's, with the
    same names in the same order, and so are the receiving flows of :meth:`MixedSystem.queueing_delays`."""
    lazy, eager = _system(pk, nn, kw), _system(pk, nn, kw)
    p = lazy.problem()
    got = dict(pd=p.positive_delays(), dc=p.delayed_checked(), bp=p.breakpoints(lazy.t_end), ji=p.jump_images,
               sj=lazy.startup_jumps())
    assert _not_built(lazy)
    # the old, eager path: plain Lookups of the built entries
    eager.lookups = [Lookup(lk.comps, lk.delays) for lk in eager.lookups]
    q = eager.problem()
    ref = dict(pd=q.positive_delays(), dc=q.delayed_checked(), bp=q.breakpoints(eager.t_end),
               ji=_old_startup_jumps(eager), sj=_old_startup_jumps(eager))
    for k in ref:
        assert np.array_equal(got[k], ref[k]), k
    # the entries against the eager loop, split by the member of the flow k
    a, lay = lazy.a, lazy.layout
    names = []
    for i, M in enumerate(lazy.mem):
        if not M.model.signal_uses_arrival:
            continue
        rows, ks, dl = _old_entries(lazy, M)
        for j, N in enumerate(lazy.mem):
            sel = lazy.flow_member_index[ks] == j
            if not np.any(sel):
                continue
            k, d, rw = ks[sel], dl[sel], rows[sel]
            nm = f"arr:{M.name}:{N.name}"
            names.append(nm)
            fvN = [lay[f"flow:{N.name}.{v}"].start for v in N.model.flow_states]
            lk = lazy.lookups[lazy.lk_index[nm]]
            assert np.array_equal(lk.comps, np.concatenate([o + N.loc[k] for o in fvN]))
            assert np.array_equal(lk.delays, np.tile(d, len(fvN)))
            recv = a.pair_flow[M.pairs][rw]
            r = lazy._recv[lazy.lk_index[nm]]
            assert np.array_equal(r(), np.tile(recv, len(fvN)))
            if lazy.load_rtt == "sent":
                links, dq, _, rq = sent_queue_entries(a, k, d)
                names.append(nm + ":q")
                lq = lazy.lookups[lazy.lk_index[nm + ":q"]]
                assert np.array_equal(lq.comps, lay["queue"].start + links) and np.array_equal(lq.delays, dq)
                assert np.array_equal(lazy._recv[lazy.lk_index[nm + ":q"]](), recv[rq])
            plain = Lookup(lk.comps, lk.delays)
            assert np.array_equal(lk.positive_delays(), plain.positive_delays())
    assert [n for n in lazy.lk_index if n.startswith("arr:")] == names


@pytest.mark.parametrize("pk,nn,kw", [("symreno", "fwd", dict(load_rtt="sent")),
                                      ("three", "late", dict(rtt_includes_queueing=True))])
def test_numpy_mixed_rhs_and_pickle_with_lazy_entries(pk, nn, kw):
    """The NumPy composite's right-hand side and queueing delays build the entries on first use (the same
    values as a system whose entries were built first); a system pickles before and after."""
    lazy, eager = _system(pk, nn, kw), _system(pk, nn, kw)
    for lk in eager.lookups:
        lk.comps
    lazy = pickle.loads(pickle.dumps(lazy))
    assert _not_built(lazy)
    y = lazy.initial_state()
    rng = np.random.default_rng(0)
    y = y + 0.01 * rng.standard_normal(y.size) * (y != 0)
    y[lazy.layout["queue"].sl] = 3.0 + rng.random(lazy.n_links)
    out = []
    for s in (lazy, eager):
        p = s.problem()
        Z = [y[..., np.asarray(lk.comps)] for lk in p.lookups]
        sat = np.zeros(s.n_links, dtype=bool)
        out.append((p.rhs(0.7, y, Z, sat, sat), s.queueing_delays(0.7, y)))
    assert not _not_built(lazy)
    assert np.array_equal(out[0][0], out[1][0])
    for u, v in zip(out[0][1], out[1][1]):
        assert (u is None and v is None) or np.array_equal(u, v)
    again = pickle.loads(pickle.dumps(lazy))
    for nm, i in again.lk_index.items():
        assert np.array_equal(again.lookups[i].delays, eager.lookups[i].delays), nm


@pytest.mark.slow  # compiles the composite kernels on a fresh machine (adaptive and fixed-step)
def test_compiled_mixed_run_never_builds_arrival_entries(monkeypatch):
    """A compiled mixed run (adaptive and fixed-step) never builds a member's arrival entries; the NumPy run of
    the same network does (their agreement is tests/test_mixed_compiled.py's)."""
    pytest.importorskip("numba")
    from ecocc import simulate
    built = []
    orig = MixedSystem._mix_entries
    monkeypatch.setattr(MixedSystem, "_mix_entries", lambda self, i, j: built.append((i, j)) or orig(self, i, j))
    names, prot = PROTS["symreno"]
    net = _small(names)
    kw = dict(protocols=prot, t_end_s=1.0, output_dt_s=0.1)
    got = simulate(net, "symbiosis", engine="numba", **kw)
    fx = simulate(net, "symbiosis", engine="numba", solver="fixed", step_s=0.001, **kw)
    assert not built
    assert got.status.value == fx.status.value == "success"
    assert got.solver["engine"] == fx.solver["engine"] == "numba"
    ref = simulate(net, "symbiosis", engine="numpy", **kw)
    assert built and ref.status.value == "success"
