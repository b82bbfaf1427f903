"""Any ecocc network model written for jitcdde, from the same laws (run by ``models_bench.py``).

The peer of every row of ``models_bench.py`` is jitcdde 1.8.3 integrating the same model.  Instead of a
hand transcription per protocol (``external.py`` has the AECP one), the jitcdde equations are built from
the model's own laws evaluated on symbols (``ecocc.models`` with ``SYMPY_OPS``), in the variables ecocc
integrates (the logarithm of a state where the model says so), for a network whose flows all start at
t = 0, with no cross traffic and the whole RTT on the feedback path (the papers' placement, ecocc's
default).  What differs from ecocc's solver, stated:

* the queue projection onto [0, buffer] is jitcdde's smooth ``conditional`` (width 1e-3 packets and
  1e-3 packets/s), as in ``external.py``: the queue can leave [0, buffer] by a few widths;
* the delayed arrival a link signal reads (PE-TCP, TCP Symbiosis, Reno and the loss-based models) is the
  derivative of an added state A_l (A_l' = sum of the loads on link l) at the delayed time,
  ``dy(A_l, t - tau)``: the loads of every flow at that earlier time.  ecocc's right-hand side evaluates
  the delayed windows with the *current* queueing delay where a model's load depends on it (Reno-type
  ``w / (tau + q/C)``); the two agree where the load does not depend on the queueing delay (AECP, CLTCP,
  PE-TCP, Symbiosis: ``separate_load`` w/tau).

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


def equations(sysm):
    """jitcdde right-hand sides of a :class:`ecocc.system.NetworkSystem` (see the module docstring).

    Parameters
    ----------
    sysm : ecocc.system.NetworkSystem
        The model on its network: every flow starting at 0 s, no cross traffic, no forward delays.

    Returns
    -------
    f : list of symengine expressions
        One right-hand side per jitcdde state: the flow states (flow-major per state), the link states,
        the queues (packets), then one cumulative-arrival helper per link (packets).
    y0 : numpy.ndarray
        The constant past (ecocc's initial state in the same variables).
    layout : dict
        ``"flow"``, ``"link"``, ``"queue"`` and ``"arr"``: the first index of each block.
    """
    import sympy as sp
    import symengine
    from jitcdde import dy, t, y
    from jitcxde_common import conditional

    import types

    from ecocc.models.base import SYMPY_OPS
    # the nonlinear laws on symbols: "sympy" would select the linearization's forms (RED's ramp without its
    # clipping, ecocc.models.loss.red_probability); any other lib name gets the simulator's piecewise laws
    ops = types.SimpleNamespace(**{**vars(SYMPY_OPS), "lib": "sympy-nonlinear"})

    m, P, a = sysm.model, sysm.P, sysm.a
    nP, nL = sysm.n_flows, sysm.n_links
    if sysm.has_fwd or np.any(a.start_s > 0) or np.any(np.isfinite(a.stop_s)) or sysm.net.cross_traffic:
        raise ValueError("jitc_models: flows starting at 0 s, never stopping, no cross traffic, no forward delays")
    nF, nLs = len(m.flow_states), len(m.link_states)
    i_flow, i_link = 0, nF * nP
    i_q = i_link + nLs * nL
    i_A = i_q + nL
    R = a.routing.tocsr()
    flows_on = [R.indices[R.indptr[l]:R.indptr[l + 1]] for l in range(nL)]
    links_of = [[] for _ in range(nP)]
    for l in range(nL):
        for k in flows_on[l]:
            links_of[k].append(l)

    def st_of(p):
        return {k: float(np.broadcast_to(np.asarray(v, dtype=float), (nP,))[p]) for k, v in sysm.st.items()}

    def lst_of(l):
        return {k: float(np.broadcast_to(np.asarray(v, dtype=float), (nL,))[l]) for k, v in sysm.lst.items()}

    # the laws are evaluated in SymPy on placeholder symbols, then turned into symengine and the
    # placeholders replaced by jitcdde's (delayed) states
    u = [sp.Symbol(f"u{i}", real=True) for i in range(nF)]
    fs = {v: (sp.exp(s) if lg else s) for v, lg, s in zip(m.flow_states, m.flow_log, u)}
    lvs = [sp.Symbol(f"v{i}", real=True) for i in range(nLs)]
    ls = {v: (sp.exp(s) if lg else s) for v, lg, s in zip(m.link_states, m.link_log, lvs)}
    qs, ys, fbs, owns, qds = (sp.Symbol(n, real=True) for n in ("q", "yy", "fb", "own", "qd"))

    def to_se(expr, subs):
        e = symengine.sympify(sp.sympify(expr))
        return e.subs({symengine.Symbol(str(k)): v for k, v in subs.items()})

    def flow_sub(p, tt=None):
        return {s: (y(i_flow + i * nP + p) if tt is None else y(i_flow + i * nP + p, tt)) for i, s in enumerate(u)}

    def link_sub(l, tt=None):
        return {s: (y(i_link + i * nL + l) if tt is None else y(i_link + i * nL + l, tt)) for i, s in enumerate(lvs)}

    qdelay = [sum(y(i_q + l) / float(sysm.C[l]) for l in links_of[p]) for p in range(nP)]
    rate_e = [to_se(m.flow_rate(ops, fs, qds, P, st_of(p)), {**flow_sub(p), qds: qdelay[p]}) for p in range(nP)]
    load_e = rate_e
    if m.separate_load:
        load_e = [to_se(m.flow_load(ops, fs, qds, P, st_of(p)), {**flow_sub(p), qds: qdelay[p]}) for p in range(nP)]
    arrival = [sum(rate_e[k] for k in flows_on[l]) for l in range(nL)]
    arr_load = [sum(load_e[k] for k in flows_on[l]) for l in range(nL)]
    bwd = {(int(l), int(p)): float(d) for l, p, d in zip(a.pair_link, a.pair_flow, sysm.bwd)}
    rtt = np.broadcast_to(np.asarray(a.rtt_s, dtype=float), (nP,))
    agg = {"min": symengine.Min, "max": symengine.Max, "sum": lambda *xs: sum(xs)}[m.path_aggregate]

    f = [None] * (i_A + nL)
    for p in range(nP):
        sigs = []
        for l in links_of[p]:
            tt = t - bwd[(l, p)]
            sig = m.link_signal(ops, ls, qs, ys if m.signal_uses_arrival else None, float(sysm.C[l]), P, lst_of(l))
            sigs.append(to_se(sig, {**link_sub(l, tt), qs: y(i_q + l, tt), ys: dy(i_A + l, tt)}))
        fb = agg(*sigs) if len(sigs) > 1 else sigs[0]
        own = None
        if m.needs_own_delayed:
            own = to_se(m.own_load(ops, fs, P, st_of(p)), flow_sub(p, t - rtt[p]))
        d = m.flow_law(ops, fs, fbs, owns if own is not None else None, qds, P, st_of(p))
        for i, (v, lg) in enumerate(zip(m.flow_states, m.flow_log)):
            e = sp.sympify(d[v]) / fs[v] if lg else sp.sympify(d[v])
            f[i_flow + i * nP + p] = to_se(e, {**flow_sub(p), fbs: fb, qds: qdelay[p],
                                               **({owns: own} if own is not None else {})})
    buf = np.broadcast_to(np.asarray(a.buffer_pkts, dtype=float), (nL,))
    for l in range(nL):
        C = float(sysm.C[l])
        sub = {**link_sub(l), qs: y(i_q + l), ys: arrival[l]}
        if nLs:
            dl = m.link_law(ops, ls, qs, ys, C, P, lst_of(l))
            for i, (v, lg) in enumerate(zip(m.link_states, m.link_log)):
                e = sp.sympify(dl[v]) / ls[v] if lg else sp.sympify(dl[v])
                f[i_link + i * nL + l] = to_se(e, sub)
        pdrop = m.link_drop_fraction(ops, ls, qs, ys, C, P, lst_of(l))
        early = 0 if pdrop is None else arrival[l] * to_se(pdrop, sub)
        dq = arrival[l] - early - C
        q = y(i_q + l)
        lo = conditional(dq, 0, conditional(q, 0, 0, dq, 1e-3), dq, 1e-3)  # held at 0 while empty and draining
        if np.isfinite(buf[l]):
            lo = conditional(dq, 0, lo, conditional(q, float(buf[l]), dq, 0, 1e-3), 1e-3)  # and at the buffer
        f[i_q + l] = lo
        f[i_A + l] = arr_load[l]
    y0 = np.zeros(i_A + nL)
    s0 = sysm.initial_state()
    for v in m.flow_states:
        b = sysm.layout["flow:" + v]
        i = m.flow_states.index(v)
        y0[i_flow + i * nP:i_flow + (i + 1) * nP] = s0[b.sl]
    for v in m.link_states:
        b = sysm.layout["link:" + v]
        i = m.link_states.index(v)
        y0[i_link + i * nL:i_link + (i + 1) * nL] = s0[b.sl]
    y0[i_q:i_q + nL] = s0[sysm.layout["queue"].sl]
    return f, y0, {"flow": i_flow, "link": i_link, "queue": i_q, "arr": i_A}


def run(case: dict, out_path: str, t_wall0: float | None = None) -> dict:
    """Integrate one case with jitcdde and write ``out_path`` (.npz).

    Parameters
    ----------
    case : dict
        ``model``, ``capacity_pps``, ``rtts_s``, ``buffer_pkts`` (or null), ``params`` (dict), ``t_end_s``,
        ``t_out_s`` (sample times), ``rtol``, ``atol``.
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
    from jitcdde import jitcdde

    from ecocc.models import get_model
    from ecocc.network import dumbbell
    from ecocc.system import NetworkSystem

    m = get_model(case["model"])
    buf = case.get("buffer_pkts")
    net = dumbbell(case["capacity_pps"], case["rtts_s"], buffer_pkts=float("inf") if buf is None else float(buf))
    Pm = m.make_params(**case.get("params", {}))
    sysm = NetworkSystem(m, net, Pm, case["t_end_s"])
    f, y0, lay = equations(sysm)
    dde = jitcdde(f, max_delay=float(max(case["rtts_s"])), verbose=False)
    dde.constant_past(list(y0))
    t_setup = time.perf_counter()
    dde.compile_C(simplify=False, do_cse=False, chunk_size=100)
    t_comp = time.perf_counter()
    dde.set_integration_parameters(rtol=case["rtol"], atol=case["atol"], first_step=1e-4,
                                   max_step=float(min(case["rtts_s"])))
    dde.adjust_diff()
    nP = net.n_flows
    t_out = np.asarray(case["t_out_s"], dtype=float)
    S, Q = np.empty(t_out.size), np.empty(t_out.size)
    rate_fn = None
    for j, tt in enumerate(t_out):
        st = dde.integrate(float(tt)) if tt > dde.t else dde.get_state()
        st = np.asarray(st)
        fsv = {v: (np.exp(st[lay["flow"] + i * nP:lay["flow"] + (i + 1) * nP]) if lg
                   else st[lay["flow"] + i * nP:lay["flow"] + (i + 1) * nP])
               for i, (v, lg) in enumerate(zip(m.flow_states, m.flow_log))}
        q = st[lay["queue"]]
        from ecocc.models.base import NUMPY_OPS
        rate_fn = m.flow_rate(NUMPY_OPS, fsv, q / sysm.C[0], Pm, sysm.st)
        S[j], Q[j] = float(np.sum(rate_fn)), float(q)
    t_end = time.perf_counter()
    timing = {"setup_s": t_setup - t_wall0, "compile_s": t_comp - t_setup, "integrate_s": t_end - t_comp,
              "wall_s": t_end - t_wall0}
    np.savez(out_path, t=t_out, S=S, q=Q, **{k: np.float64(v) for k, v in timing.items()})
    return timing


if __name__ == "__main__":
    run(json.loads(sys.argv[1]), sys.argv[2], T_START)
