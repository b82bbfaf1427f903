"""Linearization of a whole network (any routing, heterogeneous delays).

The synchronous single-bottleneck loop of :mod:`ecocc.symbolic` covers the
papers' analysis; real scenarios have flows of different RTTs.  Here the
simulator's own right-hand side (:meth:`ecocc.system.NetworkSystem.rhs`) is
differentiated at the model's analytic equilibrium by central differences:

    z' = A0 z + sum_k A_k z(t - d_k)

over the dynamic states (flow and link variables, in the solver's log
coordinates, and the queues); the cumulative counters are left out (they
are pure integrators that feed nothing back).  Characteristic roots then come
from Chebyshev collocation (:mod:`ecocc.stability.roots`), batched over a
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
from .roots import _bary_weights, _cheb, _delta, _interp_row, _newton


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
    """The full state vector at the model's analytic equilibrium (all flows active)."""
    m, net, lay = sysm.model, sysm.net, sysm.layout
    eq = m.equilibrium(net, sysm.P)
    if not eq or "rate_pps" not in eq or np.any(~np.isfinite(eq["rate_pps"])):
        raise InputError("equilibrium", m.name, "a model/network with an analytic equilibrium "
                         "(constant cross traffic; see the model's equilibrium())")
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


def network_jacobians(model, network, params=None, *, t_s=None, y_eq=None, rel_step=1e-6,
                      **overrides) -> NetworkLinearization:
    """Jacobians of the simulated right-hand side at equilibrium (see module docstring).

    Parameters
    ----------
    model : registry name or model
    network : Network (every flow active at ``t_s``)
    t_s : float, optional
        Time at which the right-hand side is evaluated (default: after the last
        start); flow activity and cross traffic are read there.
    y_eq : array, optional
        Equilibrium state (default: :func:`equilibrium_state`).
    rel_step : float
        Relative step of the central differences.
    """
    m = get_model(model)
    P = m.make_params(params, **overrides)
    a = network.arrays
    t = float(np.max(a.start_s)) + 1e-9 if t_s is None else float(t_s)
    if np.any(a.stop_s <= t):
        raise InputError("network", "flows stopped", f"every flow active at t = {t} s")
    sysm = NetworkSystem(m, network, P, t + 1.0)
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
            labels = [f.name for f in network.flows] if name.startswith("flow:") else [lk.name for lk in network.links]
            names += [f"{name}[{lab}]" for lab in labels]
    return NetworkLinearization(A0, np.array(delays), tuple(mats), tuple(names), float(np.max(np.abs(f0))))


def _generator(A0, As, taus, n_nodes):
    n = A0.shape[0]
    tmax = max(taus)
    x, D = _cheb(n_nodes)
    theta = tmax / 2 * (x - 1)
    M = np.kron(D * (2.0 / tmax), np.eye(n))
    row0 = np.kron(np.eye(n_nodes + 1)[0], A0)
    w = _bary_weights(n_nodes)
    for A, t in zip(As, taus):
        row0 = row0 + np.kron(_interp_row(theta, w, -t), A)
    M[:n, :] = row0
    return M


def rightmost_roots_scaled(lin: NetworkLinearization, scales, *, n_nodes=12, tol_real=1e-9):
    """Rightmost root for every delay scale factor (delays ``s * d_k``).

    Collocation eigenvalues of all scales in one batched ``eigvals``; the
    rightmost resolved one is refined by Newton on ``Delta(lam) v = 0``.
    Returns ``(rightmost_per_s, residual)`` arrays (complex, float).
    """
    scales = np.asarray(scales, float)
    if lin.delays_s.size == 0:
        ev = np.linalg.eigvals(lin.A0)
        r = ev[np.argmax(ev.real)]
        return np.full(scales.size, r, complex), np.zeros(scales.size)
    Ms = np.stack([_generator(lin.A0, lin.A_delayed, s * lin.delays_s, n_nodes) for s in scales])
    evs = np.linalg.eigvals(Ms)
    normA = 1.0 + np.linalg.norm(lin.A0) + sum(np.linalg.norm(A) for A in lin.A_delayed)
    out, res = np.empty(scales.size, complex), np.empty(scales.size)
    for i, s in enumerate(scales):
        taus = s * lin.delays_s
        ev = evs[i]
        ev = ev[np.abs(ev) < 0.5 * n_nodes / taus.max() * math.pi + 1.0]
        best, best_res = complex("nan"), math.inf
        for lam in ev[np.argsort(-ev.real)][:4]:
            with np.errstate(all="ignore"):
                r = _newton(complex(lam), lin.A0, lin.A_delayed, taus)
                if not np.isfinite(r) or abs(r - lam) > 0.5 * (1 + abs(lam)):
                    continue
                M, _ = _delta(r, lin.A0, lin.A_delayed, taus)
                rs = np.linalg.svd(M, compute_uv=False)[-1] / (normA + abs(r))
            if rs < 1e-8 and (not np.isfinite(best) or r.real > best.real):
                best, best_res = r, rs
        out[i], res[i] = best, best_res
    return out, res


def roots_map(model, network, x_name, x_values, rtt_scales, *, n_nodes=12, tol_real=1e-9, **params):
    """Linear stability over (``x_name``, RTT scale) from characteristic roots.

    Returns an ``xarray.Dataset`` with ``rightmost_real_per_s``,
    ``rightmost_imag_rad_s``, ``residual`` and ``stable`` (real part below
    ``-tol_real``) on dims ``(rtt_scale, x_name)``.
    """
    import xarray as xr
    xs = np.asarray(x_values, float)
    sc = np.asarray(rtt_scales, float)
    re = np.empty((sc.size, xs.size))
    im = np.empty_like(re)
    rs = np.empty_like(re)
    for j, xv in enumerate(xs):
        lin = network_jacobians(model, network, **{**params, x_name: float(xv)})
        r, res = rightmost_roots_scaled(lin, sc, n_nodes=n_nodes, tol_real=tol_real)
        re[:, j], im[:, j], rs[:, j] = r.real, r.imag, res
    return xr.Dataset(
        {"rightmost_real_per_s": (("rtt_scale", x_name), re, {"units": "1/s"}),
         "rightmost_imag_rad_s": (("rtt_scale", x_name), im, {"units": "rad/s"}),
         "residual": (("rtt_scale", x_name), rs),
         "stable": (("rtt_scale", x_name), re < -tol_real)},
        coords={"rtt_scale": sc, x_name: xs},
        attrs={"model": get_model(model).name, "network": network.name, "n_nodes": n_nodes})
