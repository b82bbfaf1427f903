"""Compiled (numba) kernels for the AECP / CLTCP network model.

The generic solvers (:mod:`ecocc.dde.fixed`, :mod:`ecocc.dde.adaptive`)
call :meth:`ecocc.system.NetworkSystem.rhs`, a NumPy function with a fixed
Python overhead per call.  The kernels here do the *whole* integration
loop of the AECP model in compiled code (the Python entry points, which
prepare the arrays and read the results, are in :mod:`ecocc.dde.engine`):

* :func:`_fixed_kernel`: classical RK4 on a uniform grid, batched over
  ``B`` members (alpha, beta, T, q0 and per-member delays), with a ring
  buffer of cubic Hermite segments for the delayed rate factors.  It is a
  statement-by-statement transcription of :func:`ecocc.dde.fixed.solve_fixed`
  (same offsets and Hermite weights, taken from ``fixed._Plan``; same
  masks, clamps, nudges, special nodes), so it agrees with it to round-off.
  Members are integrated in parallel (``numba.prange``).
* The adaptive Dormand--Prince 5(4) kernel is no longer here: it is generated
  for each model from its laws (:mod:`ecocc.dde.codegen`) around the generic
  integrator template :mod:`ecocc.dde.integrator`; this module keeps the
  history helpers that template and the lock-step map kernel share.

State layout: exactly :attr:`NetworkSystem.layout` (``flow:x`` as
``u = ln x``, ``link:r`` as ``v = ln r``, ``queue``, ``lost``, ``arrived``,
``departed``, ``queue_area``, ``sent``).

Only the delayed link rate factors ``v(t - d_b)`` are stored in the
history (the AECP signal is ``r``; the queue the generic lookup also
fetches is not used by the model), so memory is ``O(links x delay / h)``
plus the flow/link state, linear in the network size.

Importing this module imports numba (the ``fast`` extra).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from .history import first_crossing, hermite, nudge, release_matters

#: flows above which one run spreads its right-hand side over the cores
PAR_MIN_FLOWS = 5000

# ---------------------------------------------------------------------------
# the model: one right-hand side evaluation for one member
# ---------------------------------------------------------------------------

# The loops over flows and links live inside these helpers (called once per range): a call per flow,
# inlined or not, keeps numba's reference counting of the array arguments in the loop and costs ~15x
# (measured: 1.6 s against 0.1 s for 26,000 evaluations of 1,000 flows).

@njit(cache=True, inline="always")
def _flow_terms(p0, p1, tt, y, zv, out, rate, fps, start, stop, alpha, isent):
    for p in range(p0, p1):
        if start[p] <= tt and tt < stop[p]:
            vmin = zv[fps[p]]
            for j in range(fps[p] + 1, fps[p + 1]):
                if zv[j] < vmin:
                    vmin = zv[j]
            # NumPy: alpha x (ln min_j e^{v_j} - ln x) / x; the same up to round-off (ln e^v = v (1 + eps))
            out[p] = alpha * (vmin - y[p])
            rate[p] = math.exp(y[p])
        else:
            out[p] = 0.0
            rate[p] = 0.0
        out[isent + p] = rate[p]


@njit(cache=True, inline="always")
def _link_terms(l0, l1, y, out, rate, lptr, lflows, cross, sat_lo, sat_hi, C, beta, Tq, q0, P, L):
    iv, iq = P, P + L
    ilost, iarr, idep, iqa = P + 2 * L, P + 3 * L, P + 4 * L, P + 5 * L
    for l in range(l0, l1):
        s = 0.0
        for j in range(lptr[l], lptr[l + 1]):
            s += rate[lflows[j]]
        arrival = s + cross[l]
        q = y[iq + l]
        # NumPy: beta r (1 - ...) / r with r = e^v; the same up to round-off
        out[iv + l] = beta * (1 - (arrival + (q - q0[l]) / Tq) / C[l])
        dq = arrival - C[l]
        out[iq + l] = dq
        out[ilost + l] = (dq if dq > 0.0 else 0.0) if sat_hi[l] else 0.0
        out[iarr + l] = arrival
        out[idep + l] = (arrival if arrival < C[l] else C[l]) if sat_lo[l] else C[l]
        out[iqa + l] = q


@njit(cache=True, inline="always")
def _index_at(ctimes, tt):
    """The last index with ``ctimes[i] <= tt`` (``searchsorted(ctimes, tt, 'right') - 1``, clipped at 0): the
    cross-traffic row in force at ``tt``, or a history node."""
    lo_i, hi_i = 0, ctimes.size
    while lo_i < hi_i:
        mid = (lo_i + hi_i) // 2
        if ctimes[mid] <= tt:
            lo_i = mid + 1
        else:
            hi_i = mid
    return max(lo_i - 1, 0)


@njit(cache=True, inline="always")
def _rhs1(tt, y, zv, sat_lo, sat_hi, out, rate, P, L, fps, lptr, lflows, start, stop, C, ctimes, ctable,
          alpha, beta, Tq, q0):
    """NetworkSystem.rhs for AECP: ``zv[j]`` is ``v`` of pair ``j``'s link at its delay (serial: no
    threading layer, so the adaptive kernel compiles ahead of time too)."""
    _flow_terms(0, P, tt, y, zv, out, rate, fps, start, stop, alpha, P + 6 * L)
    _link_terms(0, L, y, out, rate, lptr, lflows, ctable[_index_at(ctimes, tt)], sat_lo, sat_hi, C, beta, Tq,
                q0, P, L)


# Per-element forms of _flow_terms / _link_terms / _lookup_terms for the prange loops: inside a parallel
# loop, straight-line per-element code runs ~1.7x faster than calling the range helpers per element (N = 1e5);
# the serial forms are the range helpers above.  test_fixed_kernel_parallel_path_matches_numpy checks that
# the two agree with the NumPy solver to round-off.

@njit(cache=True, inline="always")
def _flow_term(p, tt, y, zv, out, rate, fps, start, stop, alpha, isent):
    act = start[p] <= tt and tt < stop[p]
    if act:
        vmin = zv[fps[p]]
        for j in range(fps[p] + 1, fps[p + 1]):
            if zv[j] < vmin:
                vmin = zv[j]
        # NumPy: alpha x (ln min_j e^{v_j} - ln x) / x; the same up to round-off (ln e^v = v (1 + eps))
        out[p] = alpha * (vmin - y[p])
        rate[p] = math.exp(y[p])
    else:
        out[p] = 0.0
        rate[p] = 0.0
    out[isent + p] = rate[p]


@njit(cache=True, inline="always")
def _link_term(l, y, out, rate, lptr, lflows, cross, sat_lo, sat_hi, C, beta, Tq, q0, P, L):
    iv, iq = P, P + L
    ilost, iarr, idep, iqa = P + 2 * L, P + 3 * L, P + 4 * L, P + 5 * L
    s = 0.0
    for j in range(lptr[l], lptr[l + 1]):
        s += rate[lflows[j]]
    arrival = s + cross
    q = y[iq + l]
    # NumPy: beta r (1 - ...) / r with r = e^v; the same up to round-off
    out[iv + l] = beta * (1 - (arrival + (q - q0[l]) / Tq) / C[l])
    dq = arrival - C[l]
    out[iq + l] = dq
    out[ilost + l] = (dq if dq > 0.0 else 0.0) if sat_hi[l] else 0.0
    out[iarr + l] = arrival
    out[idep + l] = (arrival if arrival < C[l] else C[l]) if sat_lo[l] else C[l]
    out[iqa + l] = q


@njit(cache=True, parallel=True)
def _rhs_par(tt, y, zv, sat_lo, sat_hi, out, rate, P, L, fps, lptr, lflows, start, stop, C, ctimes, ctable,
             alpha, beta, Tq, q0):
    """:func:`_rhs1` with the flow and link loops spread over the cores (one run of a large network)."""
    for p in prange(P):
        _flow_term(p, tt, y, zv, out, rate, fps, start, stop, alpha, P + 6 * L)
    kc = _index_at(ctimes, tt)
    for l in prange(L):
        _link_term(l, y, out, rate, lptr, lflows, ctable[kc, l], sat_lo, sat_hi, C, beta, Tq, q0, P, L)


@njit(cache=True, inline="always")
def _rhs(tt, y, zv, sat_lo, sat_hi, out, rate, P, L, fps, lptr, lflows, start, stop, C, ctimes, ctable,
         alpha, beta, Tq, q0, par):
    """:func:`_rhs_par` for one run of a large network (``par``), else :func:`_rhs1` inlined (inside an
    already parallel batch: every call with array arguments costs reference counting, which dominates
    small networks)."""
    if par:
        _rhs_par(tt, y, zv, sat_lo, sat_hi, out, rate, P, L, fps, lptr, lflows, start, stop, C, ctimes, ctable,
                 alpha, beta, Tq, q0)
    else:
        _rhs1(tt, y, zv, sat_lo, sat_hi, out, rate, P, L, fps, lptr, lflows, start, stop, C, ctimes, ctable,
              alpha, beta, Tq, q0)


@njit(cache=True, inline="always")
def _clamp(f, sat_lo, sat_hi, iq, L):
    for l in range(L):
        v = f[iq + l]
        if sat_lo[l] and v < 0.0:
            f[iq + l] = 0.0
        if sat_hi[l] and v > 0.0:
            f[iq + l] = 0.0


@njit(cache=True, inline="always")
def _masks(y, f_raw, iq, L, lo, hi, sat_lo, sat_hi, slack_rel=0.0):
    """Saturation masks (``slack_rel``: a queue within ``slack_rel * max(1, |q|)``
    of a bound counts as on it, as the adaptive solver does).  Returns whether they changed."""
    changed = False
    for l in range(L):
        yb = y[iq + l]
        slack = slack_rel * max(1.0, abs(yb))
        a = yb <= lo[l] + slack and f_raw[iq + l] <= 0.0
        b = yb >= hi[l] - slack and f_raw[iq + l] >= 0.0
        if a != sat_lo[l] or b != sat_hi[l]:
            changed = True
        sat_lo[l] = a
        sat_hi[l] = b
    return changed


# ---------------------------------------------------------------------------
# fixed-step RK4, batched
# ---------------------------------------------------------------------------

@njit(cache=True, inline="always")
def _lookup_terms(j0, j1, k, st, b, off, W, kneed, ring, M, Y0, pl, iv, zv):
    for j in range(j0, j1):
        o = off[st, b, j]
        if k < kneed[st] and k + o < 0:
            zv[j] = Y0[b, iv + pl[j]]
        else:
            slot = (k + o) % M
            l = pl[j]
            zv[j] = (ring[slot, l, 0] * W[st, b, j, 0] + ring[slot, l, 1] * W[st, b, j, 1]
                     + ring[slot, l, 2] * W[st, b, j, 2] + ring[slot, l, 3] * W[st, b, j, 3])


@njit(cache=True, inline="always")
def _lookup_term(j, k, st, b, off, W, kneed, ring, M, Y0, pl, iv, zv):
    o = off[st, b, j]
    if k < kneed[st] and k + o < 0:
        zv[j] = Y0[b, iv + pl[j]]
    else:
        slot = (k + o) % M
        l = pl[j]
        zv[j] = (ring[slot, l, 0] * W[st, b, j, 0] + ring[slot, l, 1] * W[st, b, j, 1]
                 + ring[slot, l, 2] * W[st, b, j, 2] + ring[slot, l, 3] * W[st, b, j, 3])


@njit(cache=True, parallel=True)
def _lookup_par(k, st, b, off, W, kneed, ring, M, Y0, pl, iv, zv):
    for j in prange(pl.size):
        _lookup_term(j, k, st, b, off, W, kneed, ring, M, Y0, pl, iv, zv)


@njit(cache=True, inline="always")
def _fixed_lookup(k, st, b, off, W, kneed, ring, M, Y0, pl, iv, zv, par):
    if par:
        _lookup_par(k, st, b, off, W, kneed, ring, M, Y0, pl, iv, zv)
    else:
        _lookup_terms(0, pl.size, k, st, b, off, W, kneed, ring, M, Y0, pl, iv, zv)


@njit(cache=True, parallel=True)
def _fixed_kernel(Y0, t0, h, n_grid, tiny, special, off, W, kneed, M, t_eval, out_y,
                  P, L, fps, pl, lptr, lflows, start, stop, C, buf, ctimes, ctable, alpha, beta, Tq, q0,
                  t_failed, n_clamp_out, nfev_out, k_reached):
    B = Y0.shape[0]
    if B == 1:  # one run: parallel inside the right-hand side (large networks)
        _fixed_member(0, Y0, t0, h, n_grid, tiny, special, off, W, kneed, M, t_eval, out_y, P, L, fps, pl, lptr,
                      lflows, start, stop, C, buf, ctimes, ctable, alpha, beta, Tq, q0, t_failed, n_clamp_out,
                      nfev_out, k_reached, P >= PAR_MIN_FLOWS)
    else:  # a batch: one member per thread
        for b in prange(B):
            _fixed_member(b, Y0, t0, h, n_grid, tiny, special, off, W, kneed, M, t_eval, out_y, P, L, fps, pl,
                          lptr, lflows, start, stop, C, buf, ctimes, ctable, alpha, beta, Tq, q0, t_failed,
                          n_clamp_out, nfev_out, k_reached, False)


@njit(cache=True)
def _fixed_member(b, Y0, t0, h, n_grid, tiny, special, off, W, kneed, M, t_eval, out_y,
                  P, L, fps, pl, lptr, lflows, start, stop, C, buf, ctimes, ctable, alpha, beta, Tq, q0,
                  t_failed, n_clamp_out, nfev_out, k_reached, par):
    n = Y0.shape[1]
    ne = t_eval.size
    iv, iq = P, P + L
    zeros_lo = np.zeros(L)
    ring = np.zeros((M, L, 4))
    zv = np.empty(pl.size)
    rate = np.empty(P)
    y = Y0[b].copy()
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
    a_, be_, T_, q0_ = alpha[b], beta[b], Tq[b], q0[b]
    nfev = 0
    n_clamp = 0
    ie = 0
    while ie < ne and t_eval[ie] <= t0:
        out_y[ie, b, :] = y
        ie += 1
    _fixed_lookup(0, 0, b, off, W, kneed, ring, M, Y0, pl, iv, zv, par)
    _rhs(t0 + tiny, y, zv, e0, e0, k1, rate, P, L, fps, lptr, lflows, start, stop, C, ctimes, ctable,
         a_, be_, T_, q0_, par)
    nfev += 1
    _masks(y, k1, iq, L, zeros_lo, buf, sat_lo, sat_hi)
    if sat_lo.any() or sat_hi.any():
        _rhs(t0 + tiny, y, zv, sat_lo, sat_hi, k1, rate, P, L, fps, lptr, lflows, start, stop, C, ctimes,
             ctable, a_, be_, T_, q0_, par)
        nfev += 1
    _clamp(k1, sat_lo, sat_hi, iq, L)  # k1 holds f
    alive = True
    k = 0
    while k < n_grid:
        t = t0 + k * h
        slot = k % M
        for i in range(n):
            ys[i] = y[i] + (0.5 * h) * k1[i]
        _fixed_lookup(k, 1, b, off, W, kneed, ring, M, Y0, pl, iv, zv, par)
        _rhs(t + 0.5 * h, ys, zv, sat_lo, sat_hi, k2, rate, P, L, fps, lptr, lflows, start, stop, C, ctimes,
             ctable, a_, be_, T_, q0_, par)
        _clamp(k2, sat_lo, sat_hi, iq, L)
        for i in range(n):
            ys[i] = y[i] + (0.5 * h) * k2[i]
        _rhs(t + 0.5 * h, ys, zv, sat_lo, sat_hi, k3, rate, P, L, fps, lptr, lflows, start, stop, C, ctimes,
             ctable, a_, be_, T_, q0_, par)
        _clamp(k3, sat_lo, sat_hi, iq, L)
        for i in range(n):
            ys[i] = y[i] + h * k3[i]
        _fixed_lookup(k, 2, b, off, W, kneed, ring, M, Y0, pl, iv, zv, par)
        _rhs(t + h - tiny, ys, zv, sat_lo, sat_hi, k4, rate, P, L, fps, lptr, lflows, start, stop, C, ctimes,
             ctable, a_, be_, T_, q0_, par)
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
        for l in range(L):
            ring[slot, l, 0] = y[iv + l]
            ring[slot, l, 1] = h * k1[iv + l]
            ring[slot, l, 2] = y_new[iv + l]
            ring[slot, l, 3] = h * k4[iv + l]
        sp = special[k + 1]
        _fixed_lookup(k + 1, 0, b, off, W, kneed, ring, M, Y0, pl, iv, zv, par)
        _rhs(t_new - (tiny if sp else -tiny), y_new, zv, sat_lo, sat_hi, fe, rate, P, L, fps, lptr, lflows,
             start, stop, C, ctimes, ctable, a_, be_, T_, q0_, par)
        nfev += 1
        # fe holds the raw derivative at the new node; k4 becomes f_end (clamped copy)
        fin = True
        for i in range(n):
            k4[i] = fe[i]
            if not (math.isfinite(y_new[i]) and math.isfinite(fe[i])):
                fin = False
        _clamp(k4, sat_lo, sat_hi, iq, L)
        if not fin:
            t_failed[b] = t_new
            alive = False
            for i in range(n):
                y_new[i] = y[i]
                k4[i] = 0.0
                fe[i] = 0.0
        for l in range(L):
            ring[slot, l, 3] = h * k4[iv + l]
        while ie < ne and t_eval[ie] <= t_new + 1e-12 * max(1.0, abs(t_new)):
            s = min(max((t_eval[ie] - t) / h, 0.0), 1.0)
            for i in range(n):
                out_y[ie, b, i] = _hermite(s, h, y[i], y_new[i], k1[i], k4[i])
            for l in range(L):
                qv = out_y[ie, b, iq + l]
                out_y[ie, b, iq + l] = min(max(qv, 0.0), buf[l])
            ie += 1
        k += 1
        t = t_new
        for i in range(n):
            y[i] = y_new[i]
        if not alive:
            break
        if sp and k < n_grid:
            _fixed_lookup(k, 0, b, off, W, kneed, ring, M, Y0, pl, iv, zv, par)
            _rhs(t + tiny, y, zv, sat_lo, sat_hi, fe, rate, P, L, fps, lptr, lflows, start, stop, C, ctimes,
                 ctable, a_, be_, T_, q0_, par)
            nfev += 1
        changed = _masks(y, fe, iq, L, zeros_lo, buf, sat_lo, sat_hi)
        if k < n_grid and changed:
            _fixed_lookup(k, 0, b, off, W, kneed, ring, M, Y0, pl, iv, zv, par)
            _rhs(t + tiny, y, zv, sat_lo, sat_hi, fe, rate, P, L, fps, lptr, lflows, start, stop, C, ctimes,
                 ctable, a_, be_, T_, q0_, par)
            nfev += 1
        for i in range(n):
            k1[i] = fe[i]
        _clamp(k1, sat_lo, sat_hi, iq, L)
    # outputs after a failure: NaN (as solve_fixed does for a batch)
    while ie < ne:
        for i in range(n):
            out_y[ie, b, i] = np.nan
        ie += 1
    n_clamp_out[b] = n_clamp
    nfev_out[b] = nfev
    k_reached[b] = k


# ---------------------------------------------------------------------------
# adaptive Dormand--Prince 5(4) method of steps
# ---------------------------------------------------------------------------

@njit(cache=True, inline="always")
def _project(y, iq, ilost, idep, L, buf):
    """NetworkSystem.project: clip queues to [0, buffer], book the excess as lost
    and the deficit as over-counted departures."""
    for l in range(L):
        qv = y[iq + l]
        over = max(qv - buf[l], 0.0)
        under = max(-qv, 0.0)
        y[ilost + l] += over
        y[idep + l] -= under
        y[iq + l] = min(max(qv, 0.0), buf[l])


# the NumPy solver's own helpers, compiled (one definition for both engines)
_hermite = njit(cache=True)(hermite)
_first_crossing = njit(cache=True)(first_crossing)
_tiny = njit(cache=True)(nudge)
_release_matters = njit(cache=True)(release_matters)


@njit(cache=True)
def _history_new(t0, v0):
    """An empty Hermite history of the delayed components (nodes ``HT``, values ``HY``, derivatives ``HFA``
    at the node and ``HFB`` at the next one) with room for 256 nodes, its first node ``(t0, v0)``.
    Returns ``(HT, HY, HFA, HFB, m)``; shared by the adaptive kernels."""
    cap = 256
    HT = np.empty(cap)
    HY = np.empty((cap, v0.size))
    HFA = np.zeros((cap, v0.size))
    HFB = np.zeros((cap, v0.size))
    HT[0] = t0
    HY[0] = v0
    return HT, HY, HFA, HFB, 1


@njit(cache=True)
def _history_room(HT, HY, HFA, HFB, m, keep_s):
    """Room for one more node in a full history (``m == HT.size``): drop the nodes older than ``keep_s``
    before the last one (keeping two before that boundary), and double the capacity when that frees less
    than half.  Returns ``(HT, HY, HFA, HFB, m, cut)`` (``cut``: nodes dropped, so segment indices move
    down by it).  Shared by the adaptive kernels; called rarely, so its array arguments cost nothing."""
    cap = HT.size
    # searchsorted(T[:m], t_last - keep_s, 'right') - 2, at least 0
    cut = max(_index_at(HT[:m], HT[m - 1] - keep_s) - 1, 0)
    if cut > 0:
        kk = m - cut
        HT[:kk] = HT[cut:m].copy()
        HY[:kk] = HY[cut:m].copy()
        HFA[:kk] = HFA[cut:m].copy()
        HFB[:kk] = HFB[cut:m].copy()
        m = kk
    if cut == 0 or m + 1 > cap // 2 + 1:
        ncap = max(2 * cap, m + 1)
        T2 = np.empty(ncap)
        Y2 = np.empty((ncap, HY.shape[1]))
        A2 = np.zeros((ncap, HY.shape[1]))
        B2 = np.zeros((ncap, HY.shape[1]))
        T2[:m] = HT[:m]
        Y2[:m] = HY[:m]
        A2[:m] = HFA[:m]
        B2[:m] = HFB[:m]
        return T2, Y2, A2, B2, m, cut
    return HT, HY, HFA, HFB, m, cut


@njit(cache=True, inline="always")
def _segment_at(HT, m, k, tsel):
    """The history segment ``[HT[k], HT[k + 1]]`` that holds ``tsel`` (of the ``m`` nodes), walked from the
    segment ``k`` of the previous lookup (delays move little between lookups).  Inlined, so the history
    array costs no reference counting in the hot loops of both adaptive kernels."""
    k = min(max(k, 0), m - 2)
    while k < m - 2 and HT[k + 1] <= tsel:
        k += 1
    while k > 0 and HT[k] > tsel:
        k -= 1
    return k


@njit(cache=True, inline="always")
def _hseg(s, nud, d, t0, HT, m, k):
    """Where the history is read at ``s - d`` (as ``adaptive._Evaluator.lookups``): returns ``(mode, segment,
    theta, length)``; mode 0: a zero delay reads the current state, 1: before ``t0`` the initial state, 2: a
    history of one node, 3: the Hermite segment ``k`` (found from the previous lookup's segment ``k``)."""
    if d <= 0.0:
        return 0, k, 0.0, 0.0
    tau = s - d
    tsel = tau + nud
    if tsel < t0:
        return 1, k, 0.0, 0.0
    if m < 2:
        return 2, k, 0.0, 0.0
    k = _segment_at(HT, m, k, tsel)
    ta = HT[k]
    hh = HT[k + 1] - ta
    hs = hh if hh > 0 else 1.0
    return 3, k, (tau - ta) / hs, hh


@njit(cache=True, inline="always")
def _hval(mode, k, th, hh, c, si, y, y0, HY, HFA, HFB):
    """History column ``c`` (state component ``si``) at the place :func:`_hseg` found."""
    if mode == 0:
        return y[si]
    if mode == 1:
        return y0[si]
    if mode == 2:
        return HY[0, c]
    return _hermite(th, hh, HY[k, c], HY[k + 1, c], HFA[k, c], HFB[k, c])


@njit(cache=True, inline="always")
def _shift_segments(Wk, cut):
    """The history dropped ``cut`` nodes: move the cached segment indices (``Wk[3]`` per pair, ``Wk[4]`` per
    flow) down with it."""
    if cut > 0:
        Wk[3][:] -= cut
        Wk[4][:] -= cut
