"""Any ecocc network model written for jitcdde, from the same laws (run by ``models_bench.py``).

The peer of every row of ``models_bench.py`` is jitcdde 1.8.3 integrating the same model.  Instead of a
hand transcription per protocol (``external.py`` has the AECP one), the jitcdde equations are built from
the model's own laws evaluated on symbols (``ecocc.models`` with ``SYMPY_OPS``), in the variables ecocc
integrates (the logarithm of a state where the model says so), for a network whose flows all start at
t = 0, with no cross traffic and the whole RTT on the feedback path (the papers' placement, ecocc's
default).  What differs from ecocc's solver, stated:

* the queue projection onto [0, buffer] is jitcdde's smooth ``conditional`` (width 1e-3 packets and
  1e-3 packets/s), as in ``external.py``: the queue can leave [0, buffer] by a few widths (a held queue sat
  6e-3 to 1e-2 packets above its buffer), so the link laws read it clipped at the buffer, where the exact queue
  always is: a full buffer's signal holds in a band of 1e-9 relative (``ecocc.models.loss``), which the unclipped
  queue missed (docs/notes/redbuffer.md);
* the delayed arrival a link signal reads (PE-TCP, TCP Symbiosis, Reno and the loss-based models) is the
  derivative of an added state A_l (A_l' = sum of the loads on link l) at the delayed time,
  ``dy(A_l, t - tau)``: the loads of every flow at that earlier time.  ecocc's right-hand side evaluates
  the delayed windows with the *current* queueing delay where a model's load depends on it (Reno-type
  ``w / (tau + q/C)``) by default (``load_rtt="current"``); ``simulate(load_rtt="sent")`` (``models_bench.py
  --load-rtt sent``) reads it at the sending time, as here -- then both integrate the same model.  The two
  readings agree where the load does not depend on the queueing delay (AECP, CLTCP, PE-TCP, Symbiosis:
  ``separate_load`` w/tau).

Run as a script: integrates one case given as JSON on the command line and writes an ``.npz`` with the
wall-clock split (set-up, C compilation, integration) -- in a subprocess, so that a compilation or an
integration that fails or hangs is recorded, not fatal.
"""
from __future__ import annotations

import time

T_START = time.perf_counter()  # the whole-process clock starts before numpy's import

import json  # noqa: E402
import sys  # noqa: E402

import numpy as np  # noqa: E402


def values_in_branches(f):
    """The delayed values (jitcdde's ``past_y(...)`` / ``past_dy(...)`` calls) inside a ``Piecewise`` of the
    expressions ``f``, as a set: the lookups :func:`jitcdde_hoisted` turns into helpers."""
    import symengine
    from jitcdde._jitcdde import past_dy, past_y
    from jitcxde_common.symbolic import collect_arguments
    return {fn(*args) for e in f for pw in symengine.sympify(e).atoms(symengine.Piecewise) for fn in (past_y, past_dy)
            for args in collect_arguments(pw, fn)}


def jitcdde_hoisted(f, **kwargs):
    """``jitcdde(f, **kwargs)`` with the delayed values inside branches computed at every evaluation (helpers).

    jitcdde 1.8.3 keeps one search cursor per ``anchors(...)`` call site of its generated C code, pointing into
    its linked list of past anchors, and ``forget`` frees the anchors older than ``max_delay`` without moving
    the cursors (it only asserts, in a debug build, that none points at a freed one).  A call site that is not
    evaluated at every step -- a delayed value inside a branch of a ``Piecewise`` that is not taken, such as
    RED's ramp past ``min_th``, or a ``min(W(t - d) p, 1)`` written as one -- keeps its cursor on an anchor that
    is freed meanwhile, and its next search starts from freed memory: a segmentation fault (3 of 5 Reno runs of
    ``first_run.py`` on 2026-11-27) or, when the memory still holds anchors, a result that changes from run
    to run (eleven runs of the N = 4 Reno case gave five different queues at 60 s, 24.295-24.358 packets).
    Reproduced every time with the C compiled at ``-O0``.  jitcdde's own ``automatic_anchor_helpers`` does
    the substitution for every lookup, but matches the anchors through a simplified delay (not always the
    expression in ``f``), resets a given ``max_delay`` when it computes the delays, and holds anchors (too big
    for the C stack at N = 1,000), so it is done here: each distinct delayed value (``y(i, tt)``, ``dy(i, tt)``)
    inside a ``Piecewise`` of ``f`` becomes a helper computed before ``f`` on every evaluation, so every cursor
    moves at every step.  (docs/notes/jitcuaf.md)
    """
    import symengine
    from jitcdde import jitcdde

    f = [symengine.sympify(e) for e in f]
    # only the lookups inside a branch can go stale (min/max become fmin/fmax, both arguments evaluated; jitcxde's
    # conditional is smooth): the other call sites, and so the peers of the models without such branches, stay
    # as jitcdde builds them.  The helpers hold the looked-up values (doubles), not the anchors: an anchor helper
    # is a local copy of two anchors (2 n doubles each) per delay, which at N = 1,000 overflows the C stack
    lookups = sorted(values_in_branches(f), key=str)
    helpers, subs = [], {}
    for k, call in enumerate(lookups):
        h = symengine.Symbol(f"past_value_{k}")
        helpers.append((h, call))
        subs[call] = h
    # jitcdde sorts its helpers recursively, one level per helper (N = 1,000 Reno: 2,000 of them)
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 4 * len(helpers) + 1000))
    return jitcdde([e.subs(subs) for e in f], helpers=helpers + list(kwargs.pop("helpers", None) or []), **kwargs)


def _members(sysm):
    """(name, model, params, flow indices, per-flow static, per-link static) of each member: the one model of a
    NetworkSystem, or each protocol of a mixed composite (:class:`ecocc.mixed.MixedSystem`)."""
    nP, nL = sysm.n_flows, sysm.n_links
    if hasattr(sysm, "mem"):
        return [(M.name, M.model, M.P, [int(k) for k in M.flows], M.st_all,
                 {k: np.broadcast_to(np.asarray(v, dtype=float), (nL,)) for k, v in M.lst.items()})
                for M in sysm.mem]
    st = {k: np.broadcast_to(np.asarray(v, dtype=float), (nP,)) for k, v in sysm.st.items()}
    lst = {k: np.broadcast_to(np.asarray(v, dtype=float), (nL,)) for k, v in sysm.lst.items()}
    return [(sysm.model.name, sysm.model, sysm.P, list(range(nP)), st, lst)]


def equations(sysm):
    """jitcdde right-hand sides of a :class:`ecocc.system.NetworkSystem` or a mixed composite.

    Parameters
    ----------
    sysm : ecocc.system.NetworkSystem or ecocc.mixed.MixedSystem
        The model(s) on a network: every flow starting at 0 s, no cross traffic, no forward delays.

    Returns
    -------
    f : list of symengine expressions
        One right-hand side per jitcdde state: per member its flow states and link states, then the queues
        (packets), then one cumulative-arrival helper per (member reading arrivals, link) (packets).
    y0 : numpy.ndarray
        The constant past (ecocc's initial state in the same variables).
    layout : dict
        ``"flow"``: ``{(flow, state): index}``, ``"queue"``: the first queue index.
    """
    import types

    import sympy as sp
    import symengine
    from jitcdde import dy, t, y
    from jitcxde_common import conditional

    from ecocc.models.base import SYMPY_OPS
    # the nonlinear laws on symbols: "sympy" would select the linearization's forms (RED's ramp without its
    # clipping, ecocc.models.loss.red_probability); any other lib name gets the simulator's piecewise laws
    ops = types.SimpleNamespace(**{**vars(SYMPY_OPS), "lib": "sympy-nonlinear"})

    a = sysm.a
    nP, nL = sysm.n_flows, sysm.n_links
    if sysm.has_fwd or np.any(a.start_s > 0) or np.any(np.isfinite(a.stop_s)) or sysm.net.cross_traffic:
        raise ValueError("jitc_models: flows starting at 0 s, never stopping, no cross traffic, no forward delays")
    mixed = hasattr(sysm, "mem")
    members = _members(sysm)
    member_of = {}
    for mi, (_, _, _, flows, _, _) in enumerate(members):
        for k in flows:
            member_of[k] = mi
    # indices: flow states and link states per member, queues, arrival helpers
    fidx, lidx, n = {}, {}, 0
    for mi, (_, m, _, flows, _, _) in enumerate(members):
        for i in range(len(m.flow_states)):
            for k in flows:
                fidx[(k, i)] = n
                n += 1
        for i in range(len(m.link_states)):
            for l in range(nL):
                lidx[(mi, i, l)] = n
                n += 1
    i_q = n
    n += nL
    aidx = {}
    for mi, (_, m, _, _, _, _) in enumerate(members):
        if m.signal_uses_arrival:
            for l in range(nL):
                aidx[(mi, l)] = n
                n += 1
    R = a.routing.tocsr()
    flows_on = [R.indices[R.indptr[l]:R.indptr[l + 1]] for l in range(nL)]
    links_of = [[] for _ in range(nP)]
    for l in range(nL):
        for k in flows_on[l]:
            links_of[k].append(l)

    def st_of(mi, p):
        return {k: float(v[p]) for k, v in members[mi][4].items()}

    def lst_of(mi, l):
        return {k: float(v[l]) for k, v in members[mi][5].items()}

    # the laws are evaluated in SymPy on placeholder symbols, then turned into symengine and the
    # placeholders replaced by jitcdde's (delayed) states
    syms = {}

    def S(name):
        return syms.setdefault(name, sp.Symbol(name, real=True))

    def fs_of(m):
        return {v: (sp.exp(S(f"u{i}")) if lg else S(f"u{i}")) for i, (v, lg) in enumerate(zip(m.flow_states, m.flow_log))}

    def ls_of(m):
        return {v: (sp.exp(S(f"v{i}")) if lg else S(f"v{i}")) for i, (v, lg) in enumerate(zip(m.link_states, m.link_log))}

    qs, ys, fbs, owns, qds = S("q"), S("yy"), S("fb"), S("own"), S("qd")

    def to_se(expr, subs):
        e = symengine.sympify(sp.sympify(expr))
        return e.subs({symengine.Symbol(str(k)): v for k, v in subs.items()})

    def flow_sub(m, p, tt=None):
        return {S(f"u{i}"): (y(fidx[(p, i)]) if tt is None else y(fidx[(p, i)], tt)) for i in range(len(m.flow_states))}

    def link_sub(mi, m, l, tt=None):
        return {S(f"v{i}"): (y(lidx[(mi, i, l)]) if tt is None else y(lidx[(mi, i, l)], tt))
                for i in range(len(m.link_states))}

    qdelay = [sum(y(i_q + l) / float(sysm.C[l]) for l in links_of[p]) for p in range(nP)]
    rate_e, load_e = [None] * nP, [None] * nP
    for p in range(nP):
        mi = member_of[p]
        _, m, P, _, _, _ = members[mi]
        sub = {**flow_sub(m, p), qds: qdelay[p]}
        rate_e[p] = to_se(m.flow_rate(ops, fs_of(m), qds, P, st_of(mi, p)), sub)
        load_e[p] = (to_se(m.flow_load(ops, fs_of(m), qds, P, st_of(mi, p)), sub) if m.separate_load else rate_e[p])
    arrival = [sum(rate_e[k] for k in flows_on[l]) for l in range(nL)]
    bwd = {(int(l), int(p)): float(d) for l, p, d in zip(a.pair_link, a.pair_flow, sysm.bwd)}
    rtt = np.broadcast_to(np.asarray(a.rtt_s, dtype=float), (nP,))

    buf = np.broadcast_to(np.asarray(a.buffer_pkts, dtype=float), (nL,))  # the queues' bounds (packets)
    f = [None] * n
    for p in range(nP):
        mi = member_of[p]
        _, m, P, _, _, _ = members[mi]
        agg = {"min": symengine.Min, "max": symengine.Max, "sum": lambda *xs: sum(xs)}[m.path_aggregate]
        sigs = []
        for l in links_of[p]:
            tt = t - bwd[(l, p)]
            sig = m.link_signal(ops, ls_of(m), qs, ys if m.signal_uses_arrival else None, float(sysm.C[l]), P,
                                lst_of(mi, l))
            # the queue the law reads, clipped at its bound: jitcdde's smooth projection (below) lets a held queue sit
            # up to about 1e-2 packets above it, outside the law's band of 1e-9 relative where a full buffer's signal
            # holds (models.loss), so the peer's flows read RED's ramp instead of the tail drops there
            # (docs/notes/redbuffer.md); the exact queue never exceeds it, so the clip changes nothing else
            qd = y(i_q + l, tt)
            sub = {**link_sub(mi, m, l, tt), qs: symengine.Min(qd, float(buf[l])) if np.isfinite(buf[l]) else qd}
            if m.signal_uses_arrival:
                sub[ys] = dy(aidx[(mi, l)], tt)
            sigs.append(to_se(sig, sub))
        fb = agg(*sigs) if len(sigs) > 1 else sigs[0]
        own = None
        if m.needs_own_delayed:
            own = to_se(m.own_load(ops, fs_of(m), P, st_of(mi, p)), flow_sub(m, p, t - rtt[p]))
        fs = fs_of(m)
        d = m.flow_law(ops, fs, fbs, owns if own is not None else None, qds, P, st_of(mi, p))
        for i, (v, lg) in enumerate(zip(m.flow_states, m.flow_log)):
            e = sp.sympify(d[v]) / fs[v] if lg else sp.sympify(d[v])
            f[fidx[(p, i)]] = to_se(e, {**flow_sub(m, p), fbs: fb, qds: qdelay[p],
                                        **({owns: own} if own is not None else {})})
    for l in range(nL):
        C = float(sysm.C[l])
        early = 0
        for mi, (_, m, P, _, _, _) in enumerate(members):
            ls = ls_of(m)
            sub = {**link_sub(mi, m, l), qs: y(i_q + l), ys: arrival[l]}
            if m.link_states:
                dl = m.link_law(ops, ls, qs, ys, C, P, lst_of(mi, l))
                for i, (v, lg) in enumerate(zip(m.link_states, m.link_log)):
                    e = sp.sympify(dl[v]) / ls[v] if lg else sp.sympify(dl[v])
                    f[lidx[(mi, i, l)]] = to_se(e, sub)
            if not mixed:  # a mixed link's RED is a loss signal only (ecocc.mixed): no early drops
                pdrop = m.link_drop_fraction(ops, ls, qs, ys, C, P, lst_of(mi, l))
                if pdrop is not None:
                    early = arrival[l] * to_se(pdrop, sub)
            if m.signal_uses_arrival:
                # what this member's signal reads: its own flows by flow_load, other protocols' by flow_rate
                f[aidx[(mi, l)]] = sum((load_e[k] if member_of[k] == mi else rate_e[k]) for k in flows_on[l])
        dq = arrival[l] - early - C
        q = y(i_q + l)
        lo = conditional(dq, 0, conditional(q, 0, 0, dq, 1e-3), dq, 1e-3)  # held at 0 while empty and draining
        if np.isfinite(buf[l]):
            lo = conditional(dq, 0, lo, conditional(q, float(buf[l]), dq, 0, 1e-3), 1e-3)  # and at the buffer
        f[i_q + l] = lo
    y0 = np.zeros(n)
    s0 = sysm.initial_state()
    for mi, (nm, m, _, flows, _, _) in enumerate(members):
        for i, v in enumerate(m.flow_states):
            b = sysm.layout[f"flow:{nm}.{v}" if mixed else f"flow:{v}"]
            vals = s0[b.sl]
            for j, k in enumerate(flows):
                y0[fidx[(k, i)]] = vals[j]
        for i, v in enumerate(m.link_states):
            b = sysm.layout[f"link:{nm}.{v}" if mixed else f"link:{v}"]
            for l in range(nL):
                y0[lidx[(mi, i, l)]] = s0[b.sl][l]
    y0[i_q:i_q + nL] = s0[sysm.layout["queue"].sl]
    return f, y0, {"flow": fidx, "queue": i_q, "members": members, "member_of": member_of}


def run(case: dict, out_path: str, t_wall0: float | None = None) -> dict:
    """Integrate one case with jitcdde and write ``out_path`` (.npz).

    Parameters
    ----------
    case : dict
        ``model``, ``capacity_pps``, ``rtts_s``, ``buffer_pkts`` (or null), ``params`` (dict), ``t_end_s``,
        ``t_out_s`` (sample times), ``rtol``, ``atol``; for a mixed network ``protocols`` (one name per flow)
        and ``members`` (``{name: {"model": ..., **fields}}``, a scenario's ``[protocols.NAME]`` tables).
    out_path : str
        Where the samples (aggregate rate in packets/s, queue in packets) and the timings (s) go.
    t_wall0 : float, optional
        The whole-process clock's start (``time.perf_counter`` value).

    Returns
    -------
    dict
        ``setup_s``, ``compile_s``, ``integrate_s``, ``wall_s`` (seconds).
    """
    t_wall0 = time.perf_counter() if t_wall0 is None else t_wall0

    from ecocc.models import get_model
    from ecocc.network import dumbbell
    from ecocc.system import NetworkSystem

    buf = case.get("buffer_pkts")
    protos = case.get("protocols")  # per flow: a mixed network (ecocc.mixed), members from case["members"]
    net = dumbbell(case["capacity_pps"], case["rtts_s"], buffer_pkts=float("inf") if buf is None else float(buf),
                   protocols=protos)
    if protos is not None:
        from ecocc.mixed import Mixed, MixedSystem, resolve_protocols
        members, flow_member = resolve_protocols(net, case["model"], None, case.get("members"), {})
        sysm = MixedSystem(Mixed(members, flow_member), net, case["t_end_s"])
    else:
        m = get_model(case["model"])
        sysm = NetworkSystem(m, net, m.make_params(**case.get("params", {})), case["t_end_s"])
    f, y0, lay = equations(sysm)
    dde = jitcdde_hoisted(f, max_delay=float(max(case["rtts_s"])), verbose=False)
    dde.constant_past(list(y0))
    t_setup = time.perf_counter()
    dde.compile_C(simplify=False, do_cse=False, chunk_size=100)
    t_comp = time.perf_counter()
    dde.set_integration_parameters(rtol=case["rtol"], atol=case["atol"], first_step=1e-4,
                                   max_step=float(min(case["rtts_s"])))
    dde.adjust_diff()
    from ecocc.models.base import NUMPY_OPS
    nP = net.n_flows
    t_out = np.asarray(case["t_out_s"], dtype=float)
    S, Q = np.empty(t_out.size), np.empty(t_out.size)
    for j, tt in enumerate(t_out):
        st = np.asarray(dde.integrate(float(tt)) if tt > dde.t else dde.get_state())
        q = st[lay["queue"]]
        total = 0.0
        for mi, (_, m, P, flows, st_all, _) in enumerate(lay["members"]):
            for k in flows:
                fsv = {v: (np.exp(st[lay["flow"][(k, i)]]) if lg else st[lay["flow"][(k, i)]])
                       for i, (v, lg) in enumerate(zip(m.flow_states, m.flow_log))}
                total += float(m.flow_rate(NUMPY_OPS, fsv, q / sysm.C[0], P, {kk: vv[k] for kk, vv in st_all.items()}))
        S[j], Q[j] = total, float(q)
    t_end = time.perf_counter()
    timing = {"setup_s": t_setup - t_wall0, "compile_s": t_comp - t_setup, "integrate_s": t_end - t_comp,
              "wall_s": t_end - t_wall0}
    np.savez(out_path, t=t_out, S=S, q=Q, **{k: np.float64(v) for k, v in timing.items()})
    return timing


if __name__ == "__main__":
    run(json.loads(sys.argv[1]), sys.argv[2], T_START)
