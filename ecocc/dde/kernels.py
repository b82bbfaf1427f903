"""Compiled (numba) helpers shared by the generated kernels.

Every compiled integrator is generated per model (:mod:`ecocc.dde.codegen`): the model's right-hand side
from its laws, under the method templates :mod:`ecocc.dde.integrator` (adaptive), :mod:`ecocc.dde.lanes`
(adaptive, lock-step) and :mod:`ecocc.dde.rk4` (fixed-step RK4).  This module keeps what those templates
share: the queue masks, clamps and projection of :class:`ecocc.system.NetworkSystem`, the Hermite history
(creation, growth and pruning, segment search) and the NumPy solver's own helpers compiled (one definition
for both engines).  (Until this revision it also held the hand-written AECP fixed-step kernel.)

Importing this module imports numba (the ``fast`` extra).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .history import (HOLD_BAND_REL, HOLD_CAP, PREDICT_MARGIN, add_images, cubic_end, derivative_fit, first_crossing,  # noqa: F401
                      grown_capacity, hermite, nudge, pop_images, release_matters, release_negligible, segment_tail,
                      skip_images)

#: propagated breakpoints (the lock-step kernel's ``kinks``, the single-run kernel's ``HOLD_IMAGES``): at most this
#: many pending (:data:`ecocc.dde.history.HOLD_CAP`; more are dropped: they only save steps)
DBP_CAP = HOLD_CAP
#: out of line, not closures of the kernels: called only at a kink, and the kernels' loops are sensitive to their size
#: (docs/notes/mapsreno.md)
_add_kink = njit(cache=True)(add_images)
_pop_kinks = njit(cache=True)(pop_images)
_skip_kinks = njit(cache=True)(skip_images)

#: overlap mode (steps longer than the smallest delay; the lock-step kernel, :mod:`ecocc.dde.lanes`, and the
#: single adaptive kernel, :mod:`ecocc.dde.integrator`): a step's passes stop when two successive end values
#: differ by at most this fraction of the tolerance (in the error norm's units); after OVERLAP_PASSES passes
#: without that, the step is halved
OVERLAP_TOL = 0.1
OVERLAP_PASSES = 8
#: overlap mode: after a step whose passes did not settle, the later steps are at most OVERLAP_CAP of it, a bound
#: that grows by OVERLAP_RELAX per accepted step (back to the failed step's length after 35 steps).  The passes
#: converge like a fixed-point iteration whose contraction grows with the step: without the bound the step
#: controller grew the step straight back and the passes failed again, 21.8 times per lock-step group of a 40 x 40
#: XCP map, each failure 8 passes.  Right-hand sides per group of that map: 5,609 without, 4,622 with these values
#: (a bound that never grows: 4,464, but FAST's map then took 5,277 against 3,633, its first failure binding it for
#: the rest of the run; with these values FAST's map is unchanged); docs/notes/mappost.md.
OVERLAP_CAP = 0.5
OVERLAP_RELAX = 1.02


@njit(cache=True, inline="always")
def _overlap_inside(h, dmin, tn):
    """overlap: whether a delayed value can fall inside a step of ``h`` (nudge scale ``tn``): the last stage
    looks up ``t + h - dmin - tn / 2``."""
    return h - dmin > 0.5 * tn


@njit(cache=True, inline="always")
def _overlap_first_stage(Cc, h, dmin, tn):
    """overlap: the first stage of a step of ``h`` whose lookups can fall inside the step (``Cc.size``: none);
    the stages before it see only the accepted past and the step's first derivative, so the later passes keep
    them."""
    for i in range(1, Cc.size):
        if Cc[i] * h - dmin + (0.5 - Cc[i]) * tn > 0.0:
            return i
    return Cc.size


@njit(cache=True, inline="always")
def _overlap_done(diff, n_pass):
    """overlap: whether pass ``n_pass`` (> 0), whose end value differs by ``diff`` (error-norm units) from the
    previous pass's, ends the passes: converged (or NaN: the finiteness check decides), or the last pass."""
    return not diff > OVERLAP_TOL or n_pass + 1 >= OVERLAP_PASSES


@njit(cache=True)
def _overlap_diff(y_new, y_prev, y, atol_v, rtol, logc, n):
    """overlap: the largest difference of two passes' end values ``y_new``, ``y_prev`` of the first ``n``
    components, in the error norm's units (step from ``y``)."""
    diff = 0.0
    for q in range(n):
        sc = atol_v[q] + rtol * (1.0 if logc[q] != 0.0 else max(abs(y[q]), abs(y_new[q])))
        diff = max(diff, abs(y_new[q] - y_prev[q]) / sc)
    return diff


@njit(cache=True)
def _overlap_extension(K, Pd, hsrc, QV):
    """overlap: ``QV[j, c]`` = the ``j``-th coefficient of the step's continuous extension of history column
    ``c`` (state component ``hsrc[c]``; stages ``K``): ``y(t + th h) = y(t) + h sum_j QV[j, c] th^(j+1)``."""
    for j in range(Pd.shape[1]):
        for c in range(hsrc.size):
            q = hsrc[c]
            v = 0.0
            for s_ in range(Pd.shape[0]):
                v += K[s_, q] * Pd[s_, j]
            QV[j, c] = v


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
# queue projection and the Hermite history
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
_release_negligible = njit(cache=True)(release_negligible)
_segment_tail = njit(cache=True)(segment_tail)
_cubic_end = njit(cache=True)(cubic_end)
_derivative_fit = njit(cache=True)(derivative_fit)
_grown_capacity = njit(cache=True)(grown_capacity)


@njit(cache=True)
def _levels_crossing(levels, nlev, ya, yb, fa, fb, h, near_abs, near_rel):
    """Where in a step (a fraction of ``h``) a queue going from ``ya`` to ``yb`` (derivatives ``fa``, ``fb``) first
    crosses one of the first ``nlev`` of ``levels`` (packets), located on its Hermite segment; 1.0 if it crosses
    none.  A level within ``near_abs + near_rel |level|`` packets of ``ya`` is skipped (the step starts at that
    kink; a negative ``near_abs`` skips none).  The single-run kernel (drop-law levels) and the lock-step kernel
    (signal levels) use it alike."""
    s = 1.0
    for i in range(nlev):
        lev = levels[i]
        if (ya < lev) != (yb < lev) and abs(ya - lev) > near_abs + near_rel * abs(lev):
            s = min(s, _first_crossing(ya, yb, fa, fb, h, lev))
    return s


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
def _history_grow(HT, HY, HFA, HFB, m, keep_s, max_bytes):
    """Room for one more node in a full history (``m == HT.size``): drop the nodes older than ``keep_s``
    before the last one (keeping two before that boundary), and grow the store (doubling, up to ``max_bytes``:
    ``history.grown_capacity``, as the NumPy solver's history) when that frees less than half.  Returns
    ``(HT, HY, HFA, HFB, m, cut, ok)`` (``cut``: nodes dropped, so segment indices move down by it; ``ok``
    False: the past to keep needs more than ``max_bytes``, no room was made).  Shared by the adaptive kernels;
    called rarely, so its array arguments cost nothing."""
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
        ncap = _grown_capacity(cap, m, HY.shape[1], max_bytes)
        if ncap == 0:
            return HT, HY, HFA, HFB, m, cut, False
        if ncap == cap:  # at the memory bound, the pruning left room enough
            return HT, HY, HFA, HFB, m, cut, True
        T2 = np.empty(ncap)
        Y2 = np.empty((ncap, HY.shape[1]))
        A2 = np.zeros((ncap, HY.shape[1]))
        B2 = np.zeros((ncap, HY.shape[1]))
        T2[:m] = HT[:m]
        Y2[:m] = HY[:m]
        A2[:m] = HFA[:m]
        B2[:m] = HFB[:m]
        return T2, Y2, A2, B2, m, cut, True
    return HT, HY, HFA, HFB, m, cut, True


@njit(cache=True)
def _history_views(ncols, cap):
    """A history store in the column-major, interleaved layout of the single-run adaptive kernel: one buffer
    ``B[column, node, 0:3]`` holding, for each column and node, the value, the derivative at the segment's
    start and at its end, returned as the three ``(node, column)`` arrays ``HY``, ``HFA``, ``HFB`` (strided
    views: the code that indexes them is unchanged).  A lookup of column ``c`` in segment ``k`` reads
    ``HY[k, c]``, ``HFA[k, c]``, ``HFB[k, c]`` and ``HY[k + 1, c]``: 32 contiguous bytes (one or two cache lines)
    instead of four lines of three row-major arrays.  That is what a right-hand side reading many delayed
    columns at scattered times is bound by when the stored past is dense (measured: docs/notes/aecpscale.md)."""
    B = np.zeros((ncols, cap, 3))
    return B[:, :, 0].T, B[:, :, 1].T, B[:, :, 2].T


@njit(cache=True)
def _history_new_cm(t0, v0):
    """:func:`_history_new` in the layout of :func:`_history_views` (the single-run adaptive kernel)."""
    cap = 256
    HT = np.empty(cap)
    HY, HFA, HFB = _history_views(v0.size, cap)
    HT[0] = t0
    HY[0] = v0
    return HT, HY, HFA, HFB, 1


@njit(cache=True)
def _history_grow_cm(HT, HY, HFA, HFB, m, keep_s, max_bytes):
    """:func:`_history_grow` for a store made by :func:`_history_new_cm` (the grown store keeps its layout).
    The same pruning and capacities, node for node."""
    cap = HT.size
    nc = HY.shape[1]
    cut = max(_index_at(HT[:m], HT[m - 1] - keep_s) - 1, 0)
    if cut > 0:
        kk = m - cut
        HT[:kk] = HT[cut:m].copy()
        # column by column, in the buffer's order (a forward copy: each source node is read before it is
        # overwritten, as cut > 0)
        for c in range(nc):
            for k in range(kk):
                HY[k, c] = HY[k + cut, c]
                HFA[k, c] = HFA[k + cut, c]
                HFB[k, c] = HFB[k + cut, c]
        m = kk
    if cut == 0 or m + 1 > cap // 2 + 1:
        ncap = _grown_capacity(cap, m, nc, max_bytes)
        if ncap == 0:
            return HT, HY, HFA, HFB, m, cut, False
        if ncap == cap:  # at the memory bound, the pruning left room enough
            return HT, HY, HFA, HFB, m, cut, True
        T2 = np.empty(ncap)
        Y2, A2, B2 = _history_views(nc, ncap)
        T2[:m] = HT[:m]
        for c in range(nc):
            for k in range(m):
                Y2[k, c] = HY[k, c]
                A2[k, c] = HFA[k, c]
                B2[k, c] = HFB[k, c]
        return T2, Y2, A2, B2, m, cut, True
    return HT, HY, HFA, HFB, m, cut, True


@njit(cache=True)
def _history_room(HT, HY, HFA, HFB, m, keep_s):
    """:func:`_history_grow` without a memory bound.  For the fixed-step kernel (its past, 1.5 x the largest
    delay on a uniform grid, is sized before it runs).  Returns ``(HT, HY, HFA, HFB, m, cut)``."""
    HT, HY, HFA, HFB, m, cut, ok = _history_grow(HT, HY, HFA, HFB, m, keep_s, np.inf)
    return HT, HY, HFA, HFB, m, cut


@njit(cache=True)
def _absmax(y):
    """``max |y_i|`` (NaN if any entry is NaN)."""
    r = 0.0
    for i in range(y.size):
        v = abs(y[i])
        if v > r or v != v:
            r = v
    return r


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
