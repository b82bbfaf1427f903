"""Linearization of a whole network (any routing, heterogeneous delays).

The synchronous single-bottleneck loop of :mod:`ecocc.symbolic` covers the
papers' analysis; real scenarios have flows of different RTTs.  Here the
simulator's own right-hand side (:meth:`ecocc.system.NetworkSystem.rhs`) is
differentiated at the model's analytic equilibrium by central differences:

    z' = A0 z + sum_k A_k z(t - d_k)

over the dynamic states (flow and link variables, in the solver's log
coordinates, and the queues); the cumulative counters are left out (they
are pure integrators that feed nothing back).  Characteristic roots then come
from :func:`ecocc.stability.characteristic_roots` (collocation, Newton and an
argument-principle count that certifies no root lies further right), per
scale factor of every delay, which is what a stability map over (parameter,
RTT) needs.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from ..models import get_model
from ..system import NetworkSystem


@dataclass(frozen=True)
class NetworkLinearization:
    """``z' = A0 z + sum_k A_k z(t - delays_s[k])`` at an equilibrium.

    ``names`` label the rows (``flow:x[f1]`` ...).  ``residual`` is the
    largest ``|f(y_eq)|`` over the dynamic states (0 at an exact equilibrium).
    """

    A0: np.ndarray
    delays_s: np.ndarray
    A_delayed: tuple
    names: tuple
    residual: float


def equilibrium_state(sysm: NetworkSystem) -> np.ndarray:
    """Build the full state vector at the model's analytic equilibrium (all flows active).

    Parameters
    ----------
    sysm : NetworkSystem
        The model on its network (one flow state; the equilibrium from ``model.equilibrium``).

    Returns
    -------
    numpy.ndarray
        Shape ``(n,)``: flow states (rates in packets/s, or windows in packets, logs where the solver keeps
        logs), link states (the rate factor: the largest equilibrium rate through the link, packets/s),
        queues in packets; counters zero.

    Raises
    ------
    InputError
        For a model/network without an analytic equilibrium (e.g. time-varying cross traffic), a model with
        more than one flow state, or a link with a link state that is not saturated at equilibrium.
    """
    m, net, lay = sysm.model, sysm.net, sysm.layout
    eq = m.equilibrium(net, sysm.P)
    if not eq or "rate_pps" not in eq or np.any(~np.isfinite(eq["rate_pps"])):
        raise InputError("equilibrium", m.name, "a model/network with an analytic equilibrium "
                         "(constant cross traffic; see the model's equilibrium())")
    if len(m.flow_states) != 1:
        raise InputError("model", m.name, "a model with one flow state for the analytic equilibrium state "
                         f"(this one has {len(m.flow_states)}: {m.flow_states}); pass y_eq instead")
    y = np.zeros(sysm.n)
    rates = np.asarray(eq["rate_pps"], float)
    (fv,) = m.flow_states
    if "window_pkts" in eq:
        val = np.asarray(eq["window_pkts"], float)
    else:
        val = rates
    b = lay["flow:" + fv]
    y[b.sl] = np.log(val) if b.log else val
    for v in m.link_states:  # the rate factor of AECP/CLTCP: the fair share of its bottlenecked flows
        R = net.arrays.routing.tocsr()
        r = np.array([rates[R.indices[R.indptr[l]:R.indptr[l + 1]]].max() for l in range(net.n_links)])
        sat = np.asarray(eq.get("saturated", np.ones(net.n_links, bool)))
        if not sat.all():
            raise InputError("network", [lk.name for lk, s in zip(net.links, sat) if not s],
                             "links that are all saturated at equilibrium (an idle link's rate factor grows "
                             "without bound: no equilibrium)")
        bl = lay["link:" + v]
        y[bl.sl] = np.log(r) if bl.log else r
    y[lay["queue"].sl] = np.asarray(eq["queue_pkts"], float)
    return y


def network_jacobians(model, network, params=None, *, t_s=None, y_eq=None, rel_step=1e-6, protocols=None,
                      **overrides) -> NetworkLinearization:
    """Compute the Jacobians of the simulated right-hand side at equilibrium (see module docstring).

    Parameters
    ----------
    model : str or NetworkModel
        Registry name or model.
    network : Network
        The network; every flow must be active at ``t_s``.
    params : ModelParams or dict or None, optional
        Model parameters (None: defaults); a dict per protocol on a mixed network.
    t_s : float, optional
        Time at which the right-hand side is evaluated, seconds (default: the last
        start plus the longest lookup delay, at least twice the longest RTT, so that every delayed value is
        read while all flows are active); flow activity and cross traffic are
        read there.
    y_eq : array, optional
        Equilibrium state (default: :func:`equilibrium_state`).
    rel_step : float
        Relative step of the central differences (times ``max(1, |y_c|)``).
    protocols : dict, optional
        Mixed protocols, as for :func:`ecocc.simulate`: a network whose flows name several protocols is
        linearized through the composite :class:`ecocc.mixed.MixedSystem`, i.e. the member laws block by
        block, coupled through the shared queue and arrivals.  A composite has no analytic equilibrium:
        ``y_eq`` is then required (:meth:`ecocc.mixed.MixedSystem.state_at`).
    **overrides
        Model parameter overrides (``member__field`` on a mixed network).

    Returns
    -------
    NetworkLinearization
        ``A0`` and one ``A_k`` per distinct positive delay (seconds, ascending; zero-delay lookups go into
        ``A0``), over the flow, link and queue states (1/s in the solver's coordinates), the row names, and
        the largest ``|f(y_eq)|`` as ``residual``.

    Raises
    ------
    InputError
        For unknown protocols or parameters, a flow stopped before ``t_s``, a mixed network without ``y_eq``,
        or no analytic equilibrium.
    """
    from ..mixed import Mixed, MixedSystem, resolve_protocols
    members, flow_member = resolve_protocols(network, model, params, protocols, overrides)
    if len(members) > 1:
        mixed = Mixed(members, flow_member)
        if y_eq is None:
            raise InputError("y_eq", None, "the rest-point state of a mixed network (a composite has no analytic "
                             "equilibrium; see MixedSystem.state_at)")

        def make(t_end):  # the composite: the member laws block by block
            return MixedSystem(mixed, network, t_end)
    else:
        (m, P), = members.values()

        def make(t_end):
            return NetworkSystem(m, network, P, t_end)
    a = network.arrays
    if t_s is None:
        # late enough that every delayed lookup (up to the longest RTT plus forward delay) reads a time at
        # which all flows were active: right after the last start, a flow's delayed arrival would read as 0
        t = float(np.max(a.start_s)) + 2.0 * float(np.max(a.rtt_s)) + 1e-9
    else:
        t = float(t_s)
    if np.any(a.stop_s <= t):
        raise InputError("network", "flows stopped", f"every flow active at t = {t} s (the last start plus "
                         "twice the longest RTT, so that delayed values see every flow active)")
    sysm = make(t + 1.0)
    if t_s is None and sysm.lookups:
        dmax = max(float(np.max(lk.delays)) for lk in sysm.lookups if np.size(lk.delays))
        if dmax > 2.0 * float(np.max(a.rtt_s)):
            t = float(np.max(a.start_s)) + dmax + 1e-9
            if np.any(a.stop_s <= t):
                raise InputError("network", "flows stopped", f"every flow active at t = {t} s")
            sysm = make(t + 1.0)
    y = equilibrium_state(sysm) if y_eq is None else np.asarray(y_eq, float)
    lay = sysm.layout
    dyn = np.concatenate([np.arange(b.start, b.start + b.size) for name, b in lay.items()
                          if name.startswith(("flow:", "link:")) or name == "queue"])
    pos = {int(c): i for i, c in enumerate(dyn)}
    Z0 = [y[lk.comps].astype(float) for lk in sysm.lookups]
    nb = sysm.problem().bounded.size
    lo = np.zeros(nb, bool)

    def f(yy, ZZ):
        return sysm.rhs(t, yy, ZZ, lo, lo)[dyn]

    f0 = f(y, Z0)
    n = dyn.size
    A0 = np.zeros((n, n))
    for i, c in enumerate(dyn):
        h = rel_step * max(1.0, abs(y[c]))
        yp, ym = y.copy(), y.copy()
        yp[c] += h
        ym[c] -= h
        A0[:, i] = (f(yp, Z0) - f(ym, Z0)) / (2 * h)  # delayed values held
    # delayed: group lookup entries by delay; zero delays belong to A0
    groups = {}
    for k, lk in enumerate(sysm.lookups):
        for j, (c, d) in enumerate(zip(lk.comps, np.ravel(lk.delays))):
            if int(c) in pos:
                groups.setdefault(float(d), []).append((k, j, int(c)))
    delays, mats = [], []
    for d in sorted(groups):
        A = np.zeros((n, n))
        by_comp = {}
        for k, j, c in groups[d]:
            by_comp.setdefault(c, []).append((k, j))
        for c, entries in by_comp.items():
            h = rel_step * max(1.0, abs(y[c]))
            Zp = [z.copy() for z in Z0]
            Zm = [z.copy() for z in Z0]
            for k, j in entries:
                Zp[k][j] += h
                Zm[k][j] -= h
            A[:, pos[c]] = (f(y, Zp) - f(y, Zm)) / (2 * h)
        if d == 0.0:
            A0 = A0 + A
        else:
            delays.append(d)
            mats.append(A)
    names = []
    for name, b in lay.items():
        if name.startswith(("flow:", "link:")) or name == "queue":
            if name.startswith("flow:"):  # a mixed network's flow blocks hold that member's flows only
                idx = sysm.block_flows(name) if hasattr(sysm, "block_flows") else range(network.n_flows)
                labels = [network.flows[i].name for i in idx]
            else:
                labels = [lk.name for lk in network.links]
            names += [f"{name}[{lab}]" for lab in labels]
    return NetworkLinearization(A0, np.array(delays), tuple(mats), tuple(names), float(np.max(np.abs(f0))))


def rightmost_roots_scaled(lin: NetworkLinearization, scales, *, n_nodes=None, tol_real=1e-9, return_status=False):
    """Find the rightmost characteristic root for every delay scale factor (delays ``s * d_k``), certified.

    Each scale goes through :func:`ecocc.stability.characteristic_roots`
    (collocation, Newton, and the argument-principle count right of the
    rightmost root, which finds the roots a coarse collocation drops).

    Parameters
    ----------
    lin : NetworkLinearization
        The linearization at the reference delays.
    scales : array_like of float
        Factors applied to every delay (dimensionless, > 0).
    n_nodes : int or None, optional
        Chebyshev degree of the collocation; None: automatic.
    tol_real : float, optional
        Real parts within this of 0 (1/s) are marginal.
    return_status : bool, optional
        Also return the status per scale.

    Returns
    -------
    rightmost_per_s : numpy.ndarray
        Complex rightmost root per scale (real part 1/s, imaginary part rad/s).
    residual : numpy.ndarray
        Its residual (``inf`` when no root converged).
    status : numpy.ndarray
        Only with ``return_status``: ``"certified"``, ``"marginal"``, ``"uncertain"`` or ``"unconverged"``
        per scale.
    """
    from .roots import characteristic_roots
    scales = np.asarray(scales, float)
    out, res = np.empty(scales.size, complex), np.empty(scales.size)
    status = np.empty(scales.size, dtype=object)
    for i, s in enumerate(scales):
        taus = s * lin.delays_s
        cr = characteristic_roots(lin.A0, list(lin.A_delayed), taus, n_nodes=n_nodes, n_roots=4, tol_real=tol_real)
        out[i] = cr.rightmost_per_s
        res[i] = cr.residuals[0] if cr.residuals.size else math.inf
        status[i] = cr.status
    if return_status:
        return out, res, status
    return out, res


def roots_map(model, network, x_name, x_values, rtt_scales, *, n_nodes=None, tol_real=1e-9, **params):
    """Map linear stability over (``x_name``, RTT scale) from certified characteristic roots.

    Parameters
    ----------
    model : str or NetworkModel
        Registry name or model.
    network : Network
        The network at RTT scale 1.
    x_name : str
        A numeric model parameter.
    x_values : array_like of float
        Its values, in the parameter's unit.
    rtt_scales : array_like of float
        Factors applied to every delay.
    n_nodes : int or None, optional
        Chebyshev degree of the collocation; None: automatic.
    tol_real : float, optional
        Stability margin on the real part, 1/s.
    **params
        Other model parameters for every point.

    Returns
    -------
    xarray.Dataset
        ``rightmost_real_per_s`` (1/s), ``rightmost_imag_rad_s`` (rad/s), ``residual``, ``root_status`` and
        ``stable`` (certified or marginal, and real part below ``-tol_real``) on dims
        ``(rtt_scale, x_name)``.

    Raises
    ------
    InputError
        As :func:`network_jacobians` for any ``x`` value.
    """
    import xarray as xr
    xs = np.asarray(x_values, float)
    sc = np.asarray(rtt_scales, float)
    re = np.empty((sc.size, xs.size))
    im = np.empty_like(re)
    rs = np.empty_like(re)
    st = np.empty(re.shape, dtype=object)
    for j, xv in enumerate(xs):
        lin = network_jacobians(model, network, **{**params, x_name: float(xv)})
        r, res, status = rightmost_roots_scaled(lin, sc, n_nodes=n_nodes, tol_real=tol_real, return_status=True)
        re[:, j], im[:, j], rs[:, j], st[:, j] = r.real, r.imag, res, status
    cert = (st == "certified") | (st == "marginal")
    return xr.Dataset(
        {"rightmost_real_per_s": (("rtt_scale", x_name), re, {"units": "1/s"}),
         "rightmost_imag_rad_s": (("rtt_scale", x_name), im, {"units": "rad/s"}),
         "residual": (("rtt_scale", x_name), rs),
         "root_status": (("rtt_scale", x_name), st.astype("U12"), {
             "long_name": "certified: every root right of the rightmost was counted by the argument principle"}),
         "stable": (("rtt_scale", x_name), cert & (re < -tol_real), {
             "long_name": "certified and rightmost real part < -tol_real"})},
        coords={"rtt_scale": sc, x_name: xs},
        attrs={"model": get_model(model).name, "network": network.name,
               "n_nodes": "automatic" if n_nodes is None else n_nodes})
