"""The compiled fixed-step classical RK4 method, generic over models (a source template).

Like :mod:`ecocc.dde.integrator`, this file is Python source that :mod:`ecocc.dde.codegen` copies, verbatim,
under the right-hand side ``_model_rhs`` it generates from a model's laws; it is never compiled on its own.

The algorithm is :func:`ecocc.dde.fixed.solve_fixed`'s, statement for statement: the uniform grid, the stages
at ``t + c h`` (``c = 0, 1/2, 1``) read at ``t + tiny``, ``t + h/2`` and ``t + h - tiny``, saturation masks
taken at the start of a step (no slack), clamped stage derivatives, the queues projected after the step (the
clipped volume booked as lost or as over-counted departures), the derivative at a grid node re-evaluated where
the masks change and on the other side of a kink that falls on the grid, outputs by the cubic Hermite
interpolant of the step (queues clipped and the clipped volume booked), a member whose state becomes non-finite frozen and reported.

The past: ``solve_fixed`` keeps a ring buffer of grid segments with precomputed Hermite weights; here the
grid nodes are the nodes of the Hermite history the generated right-hand side reads (the same segments and
the same interpolant: the weights are computed per lookup, so the two agree to round-off).  A delay shorter
than a stage's offset reads the last completed segment extrapolated (in the first step, before any segment,
the initial state), as ``solve_fixed`` does.
"""
import math  # noqa: F401

import numpy as np
from numba import njit

from ecocc.dde.kernels import _clamp, _hermite, _history_new, _history_room, _masks, _project, _shift_segments  # noqa: F401


@njit(cache=True)
def fixed_kernel(y0, t0, h, n_grid, tiny, special, t_eval, out_y, keep_s, hsrc, iq, L, buf, D, Wk, res):
    """One member on the grid ``t0 + k h``, ``k <= n_grid``; outputs at ``t_eval`` into ``out_y``
    ``(len(t_eval), n)`` (NaN after a failure); ``res``: ``t_failed`` (NaN if none), clamp events, right-hand
    side evaluations, grid steps taken."""
    n = y0.size
    ne = t_eval.size
    zeros_lo = np.zeros(L)
    nh = hsrc.size
    h0 = np.empty(max(nh, 1))
    for c in range(nh):
        h0[c] = y0[hsrc[c]]
    HT, HY, HFA, HFB, m = _history_new(t0, h0)
    QV = np.zeros((1, 1))  # the right-hand side's overlap arguments (the adaptive kernel's): never read here
    y = y0.copy()
    ys = np.empty(n)
    k1 = np.empty(n)
    k2 = np.empty(n)
    k3 = np.empty(n)
    k4 = np.empty(n)
    y_new = np.empty(n)
    fe = np.empty(n)
    sat_lo = np.zeros(L, dtype=np.bool_)
    sat_hi = np.zeros(L, dtype=np.bool_)
    e0 = np.zeros(L, dtype=np.bool_)
    t_failed = np.nan
    nfev = 0
    n_clamp = 0
    ie = 0
    while ie < ne and t_eval[ie] <= t0:
        out_y[ie, :] = y
        ie += 1
    _model_rhs(t0, tiny, y, e0, e0, k1, D, Wk, t0, y0, HT, HY, HFA, HFB, m, 0, t0, 1.0, QV, y)
    nfev += 1
    _masks(y, k1, iq, L, zeros_lo, buf, sat_lo, sat_hi)
    if sat_lo.any() or sat_hi.any():
        _model_rhs(t0, tiny, y, sat_lo, sat_hi, k1, D, Wk, t0, y0, HT, HY, HFA, HFB, m, 0, t0, 1.0, QV, y)
        nfev += 1
    _clamp(k1, sat_lo, sat_hi, iq, L)  # k1 holds f
    alive = True
    k = 0
    while k < n_grid:
        t = t0 + k * h
        for i in range(n):
            ys[i] = y[i] + (0.5 * h) * k1[i]
        _model_rhs(t + 0.5 * h, 0.0, ys, sat_lo, sat_hi, k2, D, Wk, t0, y0, HT, HY, HFA, HFB, m, 0, t0, 1.0, QV, y)
        _clamp(k2, sat_lo, sat_hi, iq, L)
        for i in range(n):
            ys[i] = y[i] + (0.5 * h) * k2[i]
        _model_rhs(t + 0.5 * h, 0.0, ys, sat_lo, sat_hi, k3, D, Wk, t0, y0, HT, HY, HFA, HFB, m, 0, t0, 1.0, QV, y)
        _clamp(k3, sat_lo, sat_hi, iq, L)
        for i in range(n):
            ys[i] = y[i] + h * k3[i]
        _model_rhs(t + h, -tiny, ys, sat_lo, sat_hi, k4, D, Wk, t0, y0, HT, HY, HFA, HFB, m, 0, t0, 1.0, QV, y)
        _clamp(k4, sat_lo, sat_hi, iq, L)
        nfev += 3
        h6 = h / 6.0
        for i in range(n):
            y_new[i] = y[i] + h6 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i])
        for l in range(L):
            qv = y_new[iq + l]
            if qv < 0.0 or qv > buf[l]:
                n_clamp += 1
        _project(y_new, iq, iq + L, iq + 3 * L, L, buf)  # a no-op on queues within bounds
        t_new = t0 + (k + 1) * h
        # the step's segment (its end derivative provisionally the last stage's, as solve_fixed's ring)
        if m + 1 > HT.size:
            HT, HY, HFA, HFB, m, cut = _history_room(HT, HY, HFA, HFB, m, keep_s)
            _shift_segments(Wk, cut)
        for c in range(nh):
            HFA[m - 1, c] = k1[hsrc[c]]
            HFB[m - 1, c] = k4[hsrc[c]]
            HY[m, c] = y_new[hsrc[c]]
        HT[m] = t_new
        m += 1
        sp = special[k + 1]
        _model_rhs(t_new, -tiny if sp else tiny, y_new, sat_lo, sat_hi, fe, D, Wk, t0, y0, HT, HY, HFA, HFB, m, 0, t0, 1.0,
                   QV, y)
        nfev += 1
        # fe holds the raw derivative at the new node; k4 becomes f_end (clamped copy)
        fin = True
        for i in range(n):
            k4[i] = fe[i]
            if not (math.isfinite(y_new[i]) and math.isfinite(fe[i])):
                fin = False
        _clamp(k4, sat_lo, sat_hi, iq, L)
        if not fin:
            t_failed = t_new
            alive = False
            for i in range(n):
                y_new[i] = y[i]
                k4[i] = 0.0
                fe[i] = 0.0
            for c in range(nh):
                HY[m - 1, c] = y_new[hsrc[c]]
        for c in range(nh):
            HFB[m - 2, c] = k4[hsrc[c]]
        while ie < ne and t_eval[ie] <= t_new + 1e-12 * max(1.0, abs(t_new)):
            s = min(max((t_eval[ie] - t) / h, 0.0), 1.0)
            for i in range(n):
                out_y[ie, i] = _hermite(s, h, y[i], y_new[i], k1[i], k4[i])
            # the cubic between two projected nodes may overshoot a bound: clipped, the clipped volume booked as
            # lost or as over-counted departures (as solve_fixed's outputs), so the samples conserve packets
            _project(out_y[ie], iq, iq + L, iq + 3 * L, L, buf)
            ie += 1
        k += 1
        t = t_new
        for i in range(n):
            y[i] = y_new[i]
        if not alive:
            break
        if sp and k < n_grid:
            _model_rhs(t, tiny, y, sat_lo, sat_hi, fe, D, Wk, t0, y0, HT, HY, HFA, HFB, m, 0, t0, 1.0, QV, y)
            nfev += 1
        changed = _masks(y, fe, iq, L, zeros_lo, buf, sat_lo, sat_hi)
        if k < n_grid and changed:
            _model_rhs(t, tiny, y, sat_lo, sat_hi, fe, D, Wk, t0, y0, HT, HY, HFA, HFB, m, 0, t0, 1.0, QV, y)
            nfev += 1
        for i in range(n):
            k1[i] = fe[i]
        _clamp(k1, sat_lo, sat_hi, iq, L)
    # outputs after a failure: NaN (as solve_fixed does for a batch)
    while ie < ne:
        for i in range(n):
            out_y[ie, i] = np.nan
        ie += 1
    res[0] = t_failed
    res[1] = n_clamp
    res[2] = nfev
    res[3] = k


@njit(cache=True, nogil=True)  # nogil: engine.solve_fixed_batch calls it from a thread pool
def fixed_kernel_strided(first, stride, Y0, t0, h, n_grid, tiny, special, t_eval, out_y, keep_s, hsrc, iq, L, buf,
                         Dg, FST, LST, par, bwd, rtt, res):
    """:func:`fixed_kernel` for the members ``first, first + stride, ...`` (leading axis of ``Y0``, ``out_y``,
    ``FST``, ``LST``, ``par``, ``bwd``, ``rtt``, ``res``; ``Dg``: the fields of ``D`` the members share)."""
    P, Lg, fps, pl, lptr, lflows, start, stop, C, ctimes, ctable = Dg
    for b in range(first, Y0.shape[0], stride):
        D = (P, Lg, fps, pl, bwd[b], rtt[b], lptr, lflows, start, stop, C, ctimes, ctable, FST[b], LST[b], par[b])
        Wk = (np.zeros(P), np.zeros(P), np.zeros(Lg), np.zeros(pl.size, dtype=np.int64), np.zeros(P, dtype=np.int64))
        fixed_kernel(Y0[b], t0, h, n_grid, tiny, special, t_eval, out_y[b], keep_s, hsrc, iq, L, buf, D, Wk, res[b])
