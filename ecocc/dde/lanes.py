"""The compiled lock-step ("lanes") adaptive method, generic over models (a source template).

Like :mod:`ecocc.dde.integrator`, this file is Python source that :mod:`ecocc.dde.codegen` copies, verbatim,
under the right-hand side it generates from a model's laws; here the generated function is
``_model_rhs_lanes``, which evaluates the model for ``W = LANES`` members at once (every state-like array
flat, component-major with the lane last, ``[q * W + w]``; the history segment of a lookup and its Hermite
weights shared by the lanes, the values per lane).  It is never compiled on its own.

``W`` members that share the network *and its delays* (the points of a map row at one RTT scale; any
sweep of the model's numeric parameters) share the steps, so the step's bookkeeping (stage loops, history
lookups, error norm, step control) is paid once per ``W`` members.  The algorithm is the generated adaptive
kernel's (:func:`adaptive_kernel`), line by line, with the step decisions taken over the lanes:

* the error of a step is the largest over the live lanes (a step is rejected if any lane's error exceeds
  the tolerance), so every lane meets its tolerance on every step;
* a free queue that crosses a bound in any lane cuts the step at the first crossing over the lanes (every
  lane gets that mesh point; each lane projects only its own crossing queues);
* breakpoints are the same for all lanes (same delays, same flow starts);
* saturation masks, clamps, projections and status are per lane; a lane whose state becomes non-finite at
  the smallest step is marked failed (status 2) and left out of later decisions while the others go on; so is
  a lane whose error stays above its tolerance at the smallest step (status 4, step-size underflow: the NumPy
  solver fails there too; the single kernel accepts such a step and reports the run inaccurate);
* the single kernel's hold is per lane too: a queue stays held while its raw derivative points outward, one
  whose located crossing ended a retaken step (the first crossing over the lanes) is held even a hair inside
  its bound, and a held queue sits exactly on its bound (moved there with the projection's booking).

With ``W`` identical lanes it takes exactly the single kernel's steps (``tests/test_lanes.py``; not for a model
with ``KINK_NOW``, below).  With
different lanes, each lane's result differs from its own single run by a tolerance-sized amount (another
mesh).

Optionally (``overlap``) steps may be longer than the smallest delay: a delayed value that falls inside the
step is extrapolated in a first pass and then taken from the step's own continuous extension, pass after
pass, until two passes agree to ``OVERLAP_TOL`` of the tolerance; the stages that look only into the
accepted past are not recomputed.  At small RTTs this takes several times fewer steps than the capped
method of steps.

Optionally (``kinks``) the steps end where a queue's kink reaches the flows: a queue that crosses a level at
which its link's signal has a kink (RED's ``min_th``/``max_th``; ``LANES_NLEV`` levels per link and lane,
``_model_levels``, generated from the signal law) or (``KINK_BOUNDS``: a signal linear in the queue) starts
being held at a bound, is seen by each flow one backward delay later, and that time becomes a breakpoint of
the shared mesh.  Without it each such kink was straddled by a step, rejected several times at 20-400 times
the tolerance, and in a lock-step group every lane brings its own kinks (docs/notes/mapsreno.md).  With
identical lanes the kernel then takes other steps than the single kernel.  The code is compiled in only where
the model has such kinks (``KINKS``, generated).  Where the link's AQM drop fraction has its kinks at the same
levels (``KINK_NOW``, generated: RED, whose drops and signal are one probability of the *current* queue), the
queue's own derivative kinks there too: a step rejected on its error in which a failing lane's queue crossed such
a level is retaken ending at the first crossing (located on the step's Hermite segment), instead of shrinking by
the error alone and straddling the kink again (docs/notes/mapsfast.md).  This one is done with or without
``kinks`` (it adds no breakpoint; docs/notes/redkink.md), so for those models (Reno, HSTCP, Scalable TCP) identical
lanes no longer take exactly the single kernel's steps.  With the counters integrated (not a map's dynamics only),
an accepted step that carried a free queue across such a level is retaken to end at the first crossing too, as the
single-run kernels do (the lost counter integrates the drop fraction; docs/notes/redlevels.md).

Where a full buffer's loss signal jumps (``HOLD_IMAGES``, generated: every network model), with or without
``kinks``, the start of a queue's hold at its upper bound and its leaving the bound's band (located on the step's
Hermite segment) are breakpoints one backward delay later, and a queue released a hair below its buffer by a step
retaken to end at the release goes back onto the buffer with a flat last segment, as in the single-run kernels
(``integrator.HOLD_IMAGES``, docs/notes/holdimages.md): without them a drop-tail Scalable TCP map's lanes were about
5 % off a tight run at any rtol while the single-run solvers converged (docs/notes/fuzz52.md).

Where the signal kinks at a sign change of a function of the delayed load and queue (``LANES_NSW`` switching
functions per link and lane, ``_model_switch``, generated from the signal's ``Min``/``Max``/``Abs``: XCP's
aggregate feedback ``phi`` and its shuffled traffic ``max(0, gamma y d - |phi|)``), ``kinks`` also compares each
function's sign at the accepted step's end (from the right-hand side's link loads at its last evaluation, the
step's end) with the last one; a change (larger than ``SW_MIN`` of its terms) is a kink at the link's time,
located by linear interpolation over the step, that each flow on the link sees one backward delay later.  A
misplaced or stale one only costs steps.

The group width ``LANES`` is the model's (``codegen._lanes_count``: the registry model's measured width in
:data:`ecocc.dde.aot.LANES_MODEL`, else :data:`ecocc.dde.aot.LANES`, or :data:`ecocc.dde.aot.LANES_KINKS` for
a model with ``KINKS``), set in the generated module in place of the import below.

Optionally only the dynamics (flow states, link states, queues: the first ``iq + L`` components) are
integrated and error-controlled; the counters that follow them (lost, arrived, departed, queue area, sent)
feed nothing back, and a stability map does not need them.
"""
import math  # noqa: F401

import numpy as np
from numba import njit

from ecocc.dde.aot import LANES
from ecocc.dde.kernels import (DBP_CAP, HOLD_BAND_REL, OVERLAP_CAP, OVERLAP_PASSES, OVERLAP_RELAX, OVERLAP_TOL,  # noqa: F401
                               _add_kink, _first_crossing, _history_grow,
                               _history_new, _index_at, _levels_crossing, _overlap_done, _overlap_first_stage, _overlap_inside,
                               _pop_kinks, _release_matters, _segment_at, _shift_segments, _tiny)

# overlap mode's constants and step helpers (OVERLAP_TOL, OVERLAP_PASSES: ecocc.dde.kernels) are shared with the
# single adaptive kernel (ecocc.dde.integrator)
#: kinks: a switching function of the signal (``LANES_NSW``) whose change over a step is below this fraction of the
#: sum of its terms' magnitudes adds no breakpoint when it changes sign: a settled signal's switching function
#: hovers at 0 (XCP's ``phi`` at its rest point, where the kink's size vanishes with the flows' unequal shares), and
#: each such crossing cut the group's steps (a 100 x 100 XCP map: 3,439 steps per group without this test against
#: 405; the same map with 1e-4 and 1e-3 within 2 % of each other, docs/notes/mapswitch.md).  Only steps are at stake
SW_MIN = 3e-4
@njit(cache=True)
def lanes_kernel(y0, t_end, rtol, atol_v, logc, max_step, first_step, max_steps, bps, t_eval, out_y, orow, n_int, ocomp,
                 overlap, kinks, Cc, A, Bw, E, Pd, expo, dmin, keep_s, max_hist_bytes, dcomp, hsrc, iq, L, buf, D, Wk,
                 counters, reals, codes):
    """The generated adaptive kernel (:func:`adaptive_kernel`) for ``W = LANES`` lanes of one model: ``y0``
    ``(n * W,)`` flat (``[q * W + w]``); the per-lane fields of ``D`` (static fields ``FST`` ``(n_st, P * W)``,
    ``LST`` ``(n_lst, L * W)``, parameters ``par`` ``(n_par * W,)``) and work arrays ``Wk`` as
    :func:`ecocc.dde.codegen.lanes_data` builds them; outputs: lane ``w``'s in ``out_y[orow[w]]``
    ``(len(t_eval), len(ocomp))`` (components ``ocomp``; ``out_y`` holds every member of the batch, so that a
    member's outputs need no copy afterwards; a failed lane's rows from ``counters[w, 5]`` on mean nothing),
    ``counters`` ``(W, 6)``, ``reals`` ``(W, 7)`` and status ``codes`` ``(W,)`` as the single kernel's.
    ``max_hist_bytes`` bounds the group's history as in the single kernel: a group whose past would need more
    stops, every live lane with code 5 (``reals[:, 3:7]``, the single kernel's figures for that message, are not
    filled: the batch reports a status only).

    Only the first ``n_int`` components are integrated and error-controlled: ``n`` for the whole state,
    or ``iq + L`` for the dynamics (flow states, link states, queues).  ``ocomp`` must lie below ``n_int``.

    ``overlap``: steps may be longer than the smallest delay ``dmin``.  A delayed value that falls inside
    the step being taken is then predicted by extrapolating the last history segment and corrected with
    the step's own continuous extension, pass after pass, until the step's end values of two passes
    differ by at most ``OVERLAP_TOL`` of the error tolerance (at most ``OVERLAP_PASSES`` passes, else the
    step is halved and retaken, and the later steps are bounded by ``OVERLAP_CAP`` of the one that failed, a bound
    that grows by ``OVERLAP_RELAX`` per accepted step).  Without it, steps never exceed ``dmin`` and no delayed value is
    extrapolated (the generated adaptive kernel's method).

    ``kinks``: breakpoints where a queue's kink reaches the flows (module docstring; only where the generated
    ``KINKS`` is true, else ignored): pending ones in ``dbp[:dbn[0]]``, the earliest in the scalar ``dnext``."""
    W = LANES
    nW = y0.size
    n = nW // W
    full = n_int == n
    m_int = n_int * W
    n_st = Cc.size
    t0 = 0.0
    LW = L * W
    # the history holds only the components the model reads through a delay (hsrc), lane-flat
    nh = hsrc.size
    nhW = max(nh, 1) * W
    # then the model's own columns (_lanes_hist_cols, generated: the aggregated link load, or none)
    h0 = np.zeros(nhW + (_lanes_hist_cols(D) * W if LANES_AGG else 0))  # noqa: F821
    for c in range(nh):
        for w in range(W):
            h0[c * W + w] = y0[hsrc[c] * W + w]
    HT, HY, HFA, HFB, m = _history_new(t0, h0)
    kcur = Wk[3]
    acc = np.empty(W)
    # state rows: y, the stage value, the step's end value
    YY, YI, YN, YP = 0, 1, 2, 3  # YP: the step's end value of the previous pass (overlap)
    Y = np.empty((4, nW))
    for r in range(4):
        for k in range(nW):
            Y[r, k] = y0[k]
    # derivative rows: the stages K[0..n_st], then f_raw, f_new_raw, a scratch row and f
    FRAW, FNEW, FTMP, FF = n_st + 1, n_st + 2, n_st + 3, n_st + 4
    F = np.zeros((n_st + 5, nW))
    err_vec = np.empty(nW)
    err_w = np.empty(W)
    sat_lo = np.zeros(LW, dtype=np.bool_)
    sat_hi = np.zeros(LW, dtype=np.bool_)
    changed = np.zeros(W, dtype=np.bool_)
    used_lo = np.zeros(LW, dtype=np.bool_)  # the masks the step just accepted was taken with
    used_hi = np.zeros(LW, dtype=np.bool_)
    loc_lo = np.zeros(LW, dtype=np.bool_)  # the queues whose located crossing ended the retaken step
    loc_hi = np.zeros(LW, dtype=np.bool_)
    loc_rel = np.zeros(LW, dtype=np.bool_)  # the held queues whose located release ended it (HOLD_IMAGES)
    s_cross = np.ones(LW)  # each free queue's first crossing in the step (fraction of h; 1: none)
    alive = np.ones(W, dtype=np.bool_)
    viol = np.zeros(W, dtype=np.bool_)
    n_clamp = np.zeros(W, dtype=np.int64)
    nd = Pd.shape[1]
    half_pow = np.empty(nd)
    for j in range(nd):
        half_pow[j] = 0.5 ** (j + 1)
    no = ocomp.size
    # where each link's queue, lost and departed counters are among the outputs (-1: not output)
    oc_q = np.full(L, -1, dtype=np.int64)
    oc_lost = np.full(L, -1, dtype=np.int64)
    oc_dep = np.full(L, -1, dtype=np.int64)
    for c in range(no):
        q = ocomp[c]
        if iq <= q < iq + L:
            oc_q[q - iq] = c
        elif iq + L <= q < iq + 2 * L:
            oc_lost[q - iq - L] = c
        elif iq + 3 * L <= q < iq + 4 * L:
            oc_dep[q - iq - 3 * L] = c
    Qd = np.empty((nd, no * W))
    # propagated breakpoints (pending, ascending): where a queue's kink reaches the flows that read it
    pl_, bwd_ = D[3], D[4]
    dbp = np.empty(DBP_CAP)
    dbw = np.empty(DBP_CAP)  # their weights (ecocc.dde.history.add_images; every one inf here: always a breakpoint)
    dbn = np.zeros(1, dtype=np.int64)
    dnext = np.inf  # the earliest pending one (a scalar: the loop reads it on every step)
    klev = np.empty(LANES_NLEV + 1)  # noqa: F821 (LANES_NLEV, KINK_BOUNDS, _model_levels: generated, codegen)
    # <switches> (lines to the closing mark are left out of a model without switching functions: codegen)
    ksw = np.empty(2 * LANES_NSW + 1)  # noqa: F821 (LANES_NSW, _model_switch: generated, codegen)
    gsw = np.empty(LW * (LANES_NSW + 1))  # noqa: F821 (each link and lane's switching values at the last step's end)
    gok = np.zeros(LW, dtype=np.bool_)
    arr_ = Wk[2]  # the right-hand side's link loads at its last evaluation (the accepted step's end, FSAL)
    # </switches>
    spow = np.empty(nd)
    vacc = np.empty(W)
    QV = np.zeros((nd, nhW))  # overlap: continuous-extension coefficients of the history in the step taken
    n_pass = 0  # overlap: the pass of the step being taken (0: delayed values in the step extrapolated)
    h_ov = np.inf  # overlap: the bound on the step after passes that did not settle (OVERLAP_CAP)
    t_cur, h_cur = t0, 1.0

    # Helpers as closures: numba inlines them with the arrays they use taken from this scope, so no array is
    # passed (a helper with array arguments costs two reference-count updates per array and call).  The
    # model's right-hand side with its history lookups, _model_rhs_lanes, is generated (a call, compiled without
    # reference counting: ecocc.dde.codegen._lanes_rhs).

    def ext_coeff(j, o):
        """``acc[w]``: the ``j``-th coefficient of the step's continuous extension of the component at flat
        offset ``o`` (``sum_s K[s] Pd[s, j]``, as the single kernel)."""
        for w in range(W):
            acc[w] = 0.0
        for s_ in range(n_st + 1):
            pk = Pd[s_, j]
            for w in range(W):
                acc[w] += F[s_, o + w] * pk

    def clamp(fr):
        """Zero the queue derivatives that push a saturated queue out of its bounds."""
        for lw in range(LW):
            v = F[fr, iq * W + lw]
            if (sat_lo[lw] and v < 0.0) or (sat_hi[lw] and v > 0.0):
                F[fr, iq * W + lw] = 0.0

    def masks(yr, fr):
        """``kernels._masks`` per lane (a queue within 1e-12 max(1, |q|) of a bound counts as on it);
        ``changed[w]``: lane ``w``'s masks changed.  Returns whether any lane's did."""
        anyc = False
        for w in range(W):
            changed[w] = False
        for l in range(L):
            for w in range(W):
                i = (iq + l) * W + w
                yb = Y[yr, i]
                slack = 1e-12 * max(1.0, abs(yb))
                a = yb <= 0.0 + slack and F[fr, i] <= 0.0
                b = yb >= buf[l] - slack and F[fr, i] >= 0.0
                lw = l * W + w
                if a != sat_lo[lw] or b != sat_hi[lw]:
                    changed[w] = True
                    anyc = True
                sat_lo[lw] = a
                sat_hi[lw] = b
        return anyc

    for w in range(W):
        codes[w] = 0
    nfev = 0
    ne = t_eval.size
    ie = 0
    while ie < ne and t_eval[ie] <= t0:
        for c in range(no):
            for w in range(W):
                out_y[orow[w], ie, c] = y0[ocomp[c] * W + w]
        ie += 1
    n_alive = W
    t = t0
    t_prev = t0
    h = 0.0
    h_last = 1.0  # the nudge at t0 is _tiny(t0, 1.0), as the single kernel's
    need_eval = True  # at the start and after a breakpoint; else the last stage is the derivative (FSAL)
    first = True
    err = 0.0
    rej_step = False  # an attempt of the current step was rejected
    ip = 0
    n_steps = 0
    n_rej = 0
    hmin_seen = np.inf
    hmax_seen = 0.0
    status_all = 0
    retake = False
    was_retake = False  # the step just accepted was retaken to end at a located crossing
    eps = 2.220446049250313e-16
    while True:
        # arrival at t (the start, or after an accepted step): the derivative there, the masks, f
        nud = _tiny(t, h_last)
        for rep in range(2):
            if rep == 0:
                if not need_eval:
                    for k in range(nW):
                        F[FRAW, k] = F[FNEW, k]
                    continue
                fr = FRAW
            else:
                if first:
                    if not masks(YY, FRAW):
                        break
                else:
                    for lw in range(LW):
                        used_lo[lw] = sat_lo[lw]
                        used_hi[lw] = sat_hi[lw]
                    masks(YY, FRAW)
                    # per lane, as the single kernel: a queue stays held while its raw derivative points outward
                    # (a held step does not move it), and one that a step retaken to end at its located crossing
                    # brought to the bound is held too, even a hair (10 x its tolerance) inside (left free, the
                    # next step crossed unlocated and ran free past the bound); a held queue sits exactly on its
                    # bound: moved there from a hair inside, booked (departed or lost), the history's last node too
                    anyc = False
                    for w in range(W):
                        changed[w] = False
                    for l in range(L):
                        q = iq + l
                        for w in range(W):
                            lw = l * W + w
                            k = q * W + w
                            if alive[w] and not (sat_lo[lw] or sat_hi[lw]):
                                yb = Y[YY, k]
                                if (used_lo[lw] or (was_retake and loc_lo[lw])) and F[FRAW, k] <= 0.0 and \
                                        yb <= 10.0 * atol_v[q]:
                                    sat_lo[lw] = True
                                elif (used_hi[lw] or (was_retake and loc_hi[lw])) and F[FRAW, k] >= 0.0 and \
                                        buf[l] - yb <= 10.0 * (atol_v[q] + rtol * abs(buf[l])):
                                    sat_hi[lw] = True
                            if sat_lo[lw] != used_lo[lw] or sat_hi[lw] != used_hi[lw]:
                                changed[w] = True
                            lvl = 0.0 if sat_lo[lw] else buf[l]
                            if alive[w] and (sat_lo[lw] or sat_hi[lw]) and Y[YY, k] != lvl:
                                if sat_lo[lw]:
                                    Y[YY, k + 3 * LW] += Y[YY, k]  # departed: iq + 3 L + l
                                else:
                                    Y[YY, k + LW] -= lvl - Y[YY, k]  # lost: iq + L + l
                                Y[YY, k] = lvl
                                for c in range(nh):
                                    if hsrc[c] == q:
                                        HY[m - 1, c * W + w] = lvl
                                changed[w] = True
                            elif HOLD_IMAGES and alive[w] and was_retake and loc_rel[lw] and used_hi[lw] and \
                                    not sat_hi[lw] and \
                                    Y[YY, k] < buf[l] and buf[l] - Y[YY, k] <= 10.0 * (atol_v[q] + rtol * abs(buf[l])):  # noqa: F821
                                # released at t from its upper bound, a hair below it, by a step retaken to end at
                                # its own located release (after another lane's, this one is below the bound by its
                                # true outflow since an early release, not a hair): back onto the bound, its last
                                # segment flat, the hair taken back from the departures (integrator.py, as the
                                # single kernel: the history the loss signal reads keeps the buffer full until the
                                # release)
                                Y[YY, k + 3 * LW] -= buf[l] - Y[YY, k]  # departed: iq + 3 L + l
                                Y[YY, k] = buf[l]
                                for c in range(nh):
                                    if hsrc[c] == q:
                                        HY[m - 1, c * W + w] = buf[l]
                                        HFB[m - 2, c * W + w] = 0.0
                                changed[w] = True
                            if changed[w]:
                                anyc = True
                    if not anyc:
                        break
                fr = FTMP  # the lanes whose masks changed re-evaluate with the new masks
            _model_rhs_lanes(t, nud, Y, YY, sat_lo, sat_hi, F, fr, full, D, Wk, t0, y0, HT, HY, HFA, HFB, m,
                             n_pass, t_cur, h_cur, QV, YY)
            nfev += 1
            if rep == 1:
                for q in range(n):
                    for w in range(W):
                        if changed[w]:
                            F[FRAW, q * W + w] = F[FTMP, q * W + w]
        if KINKS and kinks and KINK_BOUNDS and n_steps > 0:  # noqa: F821
            # a queue held from here: its derivative jumps to 0 at t (a release is smoother: the raw derivative
            # turns inward through 0, so the queue's derivative stays continuous)
            for l in range(L):
                for w in range(W):
                    lw = l * W + w
                    if alive[w] and ((sat_lo[lw] and not used_lo[lw]) or (sat_hi[lw] and not used_hi[lw])):
                        dnext = _add_kink(dbp, dbw, dbn, pl_, bwd_, t, l, t_end, np.inf)
                        break
        if HOLD_IMAGES and n_steps > 0:  # noqa: F821
            # a queue held at its upper bound from here: the loss signal (a full buffer's) jumps on at t and each
            # flow on the link sees it one backward delay later (integrator.py HOLD_IMAGES, as the single kernel;
            # without it Scalable TCP's drop-tail map lanes were ~5 % off a tight run at any rtol: docs/notes/
            # fuzz52.md)
            for l in range(L):
                for w in range(W):
                    lw = l * W + w
                    if alive[w] and sat_hi[lw] and not used_hi[lw]:
                        dnext = _add_kink(dbp, dbw, dbn, pl_, bwd_, t, l, t_end, np.inf)
                        break
        for k in range(nW):
            F[FF, k] = F[FRAW, k]
        clamp(FF)
        if first:
            first = False
            for w in range(W):
                for i in range(n_int):
                    if not math.isfinite(F[FF, i * W + w]):
                        codes[w] = 2
                if codes[w] == 2:
                    alive[w] = False
                    n_alive -= 1
                    counters[w, 5] = ie
                    reals[w, 2] = t0
            if n_alive == 0:
                return
            if first_step > 0:
                h = first_step
            else:
                h = np.inf
                for w in range(W):
                    if not alive[w]:
                        continue
                    d0 = 0.0
                    d1 = 0.0
                    for i in range(n_int):
                        yv = 1.0 if logc[i] != 0.0 else abs(Y[YY, i * W + w])  # a log component: 1
                        sc = atol_v[i] + rtol * yv
                        d0 = max(d0, yv / sc)
                        d1 = max(d1, abs(F[FF, i * W + w]) / sc)
                    h = min(h, 1e-6 if (d0 < 1e-5 or d1 < 1e-5) else 0.01 * d0 / d1)
            h = min(h, max_step, dmin, t_end - t0)
        else:
            gmax = 1.0 if rej_step else 5.0  # no growth right after a rejected attempt (as the single kernel)
            if err > 0:
                h = (t - t_prev) * min(gmax, max(0.2, 0.9 * err ** expo))
            else:
                h = (t - t_prev) * gmax
            if n_steps >= max_steps:
                status_all = 3
                break
        if not t < t_end:
            break
        rej_step = False
        lev_retake = False  # an attempt of this step was shortened to end at a located level crossing (below)
        while True:  # one step from t, retaken until accepted
            while ip < bps.size and bps[ip] <= t + 1e-12 * max(1.0, abs(t)):
                ip += 1
            next_bp = bps[ip] if ip < bps.size else t_end
            if (KINKS or HOLD_IMAGES) and dnext < next_bp:  # noqa: F821
                next_bp = dnext
            hmin = 16 * eps * max(1.0, abs(t))
            h = min(h, max_step, h_ov) if overlap else min(h, max_step, dmin)
            hit_bp = False
            if t + h >= next_bp - hmin or t + 1.0001 * h >= next_bp:
                h = next_bp - t
                hit_bp = True
            tn = _tiny(t, h)
            for k in range(m_int):
                F[0, k] = F[FF, k]
            t_cur, h_cur = t, h
            n_pass = 0
            # a delayed value can fall inside this step (the last stage looks up t + h - dmin - tn / 2)
            overlapping = overlap and _overlap_inside(h, dmin, tn)
            # the first stage that looks inside the step: the stages before it see only the accepted past
            # and K[0], so later passes keep them
            i_first = _overlap_first_stage(Cc, h, dmin, tn)
            diff = 0.0
            while True:  # passes (one unless overlapping)
                for i in range(1 if n_pass == 0 else i_first, n_st + 1):
                    if i < n_st:  # stage i
                        yr = YI
                        c = Cc[i]
                        nud = (0.5 - c) * tn
                        s_t = t + c * h
                    else:  # the step's end value and its derivative (first same as last)
                        yr = YN
                        nud = -0.5 * tn
                        s_t = t + h
                    for k in range(m_int):
                        Y[yr, k] = Y[YY, k]
                    for s_ in range(i):
                        a_ = h * (A[i, s_] if i < n_st else Bw[s_])
                        if a_ != 0.0:
                            for k in range(m_int):
                                Y[yr, k] += a_ * F[s_, k]
                    _model_rhs_lanes(s_t, nud, Y, yr, sat_lo, sat_hi, F, i, full, D, Wk, t0, y0, HT, HY, HFA, HFB,
                                     m, n_pass, t_cur, h_cur, QV, YY)
                    nfev += 1
                    if i == n_st:  # unclamped: the derivative at the step's end if it is accepted
                        for k in range(nW):
                            F[FNEW, k] = F[i, k]
                    clamp(i)
                if not overlapping:
                    break
                if n_pass > 0:  # converged: the step's end values of the last two passes agree
                    diff = 0.0
                    for q in range(n_int):
                        aq = atol_v[q]
                        lq = logc[q] != 0.0
                        for w in range(W):
                            if alive[w]:
                                k = q * W + w
                                sc = aq + rtol * (1.0 if lq else max(abs(Y[YY, k]), abs(Y[YN, k])))
                                diff = max(diff, abs(Y[YN, k] - Y[YP, k]) / sc)
                    if _overlap_done(diff, n_pass):  # (NaN: stop here, the finiteness check below decides)
                        break
                for k in range(m_int):
                    Y[YP, k] = Y[YN, k]
                for jd in range(nd):  # the step's continuous extension of the history, for the next pass
                    for c in range(nh):
                        ext_coeff(jd, hsrc[c] * W)
                        for w in range(W):
                            QV[jd, c * W + w] = acc[w]
                n_pass += 1
            if overlapping and n_pass + 1 >= OVERLAP_PASSES and diff > OVERLAP_TOL:
                h_ov = OVERLAP_CAP * h  # the passes did not settle: the next steps shorter (OVERLAP_CAP)
                n_rej += 1
                rej_step = True
                h *= 0.5
                continue
            for k in range(m_int):
                err_vec[k] = 0.0
            for s_ in range(n_st + 1):
                e_ = h * E[s_]
                if e_ != 0.0:
                    for k in range(m_int):
                        err_vec[k] += e_ * F[s_, k]
            # non-finite lanes: a smaller step, and at the smallest step the lane fails and leaves the decisions
            bad = False
            for w in range(W):
                viol[w] = False
                if not alive[w]:
                    continue
                chk = 0.0
                for q in range(n_int):
                    chk += Y[YN, q * W + w] * 0.0 + err_vec[q * W + w] * 0.0  # nan unless every entry is finite
                if chk != 0.0:
                    viol[w] = True
                    bad = True
            if bad:
                if h > hmin * 4:
                    h *= 0.25
                    n_rej += 1
                    rej_step = True
                    continue
                for w in range(W):
                    if viol[w]:
                        alive[w] = False
                        n_alive -= 1
                        codes[w] = 2
                        counters[w, 5] = ie
                        reals[w, 2] = t
                if n_alive == 0:
                    status_all = 2
                    break  # (out of the step; the run ends below)
                continue
            # error norm per lane (max norm and the history check); the step's error is the largest over live lanes
            for w in range(W):
                err_w[w] = 0.0
            for q in range(n_int):
                aq = atol_v[q]
                lq = logc[q] != 0.0
                for w in range(W):
                    k = q * W + w
                    sc = aq + rtol * (1.0 if lq else max(abs(Y[YY, k]), abs(Y[YN, k])))
                    err_w[w] = max(err_w[w], abs(err_vec[k]) / sc)
            for jj in range(dcomp.size):
                q = dcomp[jj]
                o = q * W
                for w in range(W):
                    vacc[w] = 0.0
                for j in range(nd):
                    ext_coeff(j, o)
                    for w in range(W):
                        vacc[w] += acc[w] * half_pow[j]
                for w in range(W):
                    y_a, y_b = Y[YY, o + w], Y[YN, o + w]
                    mid_dense = y_a + h * vacc[w]
                    # history.hermite at s = 0.5
                    mid_herm = 0.5 * y_a + 0.125 * h * F[FF, o + w] + 0.5 * y_b + (-0.125) * h * F[n_st, o + w]
                    sc = atol_v[q] + rtol * (1.0 if logc[q] != 0.0 else max(abs(y_a), abs(y_b)))
                    err_w[w] = max(err_w[w], abs(mid_dense - mid_herm) / sc)
            # the model's own history columns (generated: the aggregated link load), written into row m - 1 on
            # every attempt (the accepted one's stay; only the queues change after this), and the same check where
            # a positive delay reads the history (as the single kernel's MODEL_HIST_CHECK)
            if LANES_AGG:  # noqa: F821 (generated constant: compiled out where the model keeps no columns)
                _lanes_agg_seg(t, h, Y, F, FF, n_st, Pd, half_pow, rtol, err_w, HY, HFA, HFB, m - 1, D,  # noqa: F821
                               dcomp.size > 0)
            err = 0.0
            for w in range(W):
                if alive[w] and err_w[w] > err:
                    err = err_w[w]
            if err > 1.0:
                # a step retaken to end at a located bound crossing is error-controlled like any other (as
                # solve_dde; it was accepted unchecked here): if it fails, a shorter step ends before the crossing
                retake = False
                if h <= hmin * 4:
                    # step-size underflow (the NumPy solver's rule): a lane whose error stays above its tolerance
                    # at the smallest step fails and leaves the decisions, the step is retaken for the others
                    # (accepting it as inaccurate would keep the shared mesh at the smallest step for all lanes)
                    for w in range(W):
                        if alive[w] and err_w[w] > 1.0:
                            alive[w] = False
                            n_alive -= 1
                            codes[w] = 4
                            counters[w, 5] = ie
                            reals[w, 2] = t
                    if n_alive == 0:
                        status_all = 4
                        break
                    continue
                else:
                    n_rej += 1
                    rej_step = True
                    s_lev = 1.0
                    # once per step: an attempt that ends at the crossing and fails again has the crossing at its
                    # end (s_lev just under 1 by rounding), and shortening it by that factor again and again
                    # hung a map (Reno at rtol 1e-4: docs/notes/redlevels.md); it shrinks by its error instead
                    if KINKS and KINK_NOW and not lev_retake:  # noqa: F821
                        # the current queue's derivative kinks at a level (AQM drops): a failing lane whose queue
                        # crossed one in the step retakes it ending at the first such crossing (located on the
                        # step's Hermite segment), rather than shrinking past it or straddling it again; with or
                        # without ``kinks`` (it propagates nothing: docs/notes/redkink.md)
                        for l in range(L):
                            for w in range(W):
                                if not (alive[w] and err_w[w] > 1.0):
                                    continue
                                k = (iq + l) * W + w
                                s_lev = min(s_lev, _levels_crossing(klev, _model_levels(D, l, w, klev), Y[YY, k],  # noqa: F821
                                                                    Y[YN, k], F[FF, k], F[n_st, k], h, -1.0, 0.0))
                    if s_lev < 1.0 - 1e-9 and s_lev * h > 4 * hmin:
                        h *= s_lev
                        lev_retake = True
                    else:
                        h *= max(0.2, 0.9 * err ** expo)
                    continue
            # bound crossings of free queues inside the step: the first over the lanes
            any_viol = False
            s_star = 1.0
            for l in range(L):
                for w in range(W):
                    lw = l * W + w
                    k = (iq + l) * W + w
                    qv = Y[YN, k]
                    if not retake:
                        s_cross[lw] = 1.0
                    if alive[w] and not (sat_lo[lw] or sat_hi[lw]) and (qv < 0.0 or qv > buf[l]):
                        viol[w] = True
                        any_viol = True
                        if not retake:
                            level = 0.0 if qv < 0.0 else buf[l]
                            s_cross[lw] = _first_crossing(Y[YY, k], qv, F[FF, k], F[n_st, k], h, level)
                            s_star = min(s_star, s_cross[lw])
            if not retake:
                # a saturated queue that leaves its bound inside the step: its raw derivative (arrival -
                # capacity) changes sign; the root of its linear interpolant ends the step there
                for l in range(L):
                    for w in range(W):
                        lw = l * W + w
                        k = (iq + l) * W + w
                        d_a, d_b = F[FRAW, k], F[FNEW, k]
                        if alive[w] and ((sat_lo[lw] and d_a <= 0.0 < d_b) or (sat_hi[lw] and d_b < 0.0 <= d_a)) \
                                and _release_matters(d_a, h, atol_v[iq + l], rtol, Y[YY, k]):
                            s_cross[lw] = d_a / (d_a - d_b)
                            s_star = min(s_star, s_cross[lw])
                if KINKS and KINK_NOW and full:  # noqa: F821
                    # with the counters integrated (not a map's dynamics only), a step that carries a free queue
                    # across a level of its drop fraction (RED's min_th, max_th) ends at the first crossing over
                    # the lanes, as in the single-run kernels (integrator.py): the lost counter integrates the drop
                    # fraction, whose kink a straddling step's dense output dipped under, and with the single-run
                    # solvers locating it the lanes' counters were 6-830 x less accurate (docs/notes/redlevels.md).
                    # A map keeps the rejected-step retake above alone (this one cost Reno's 20 x 20 map +23 %
                    # steps: docs/notes/redkink.md)
                    for l in range(L):
                        for w in range(W):
                            lw = l * W + w
                            if not alive[w] or sat_lo[lw] or sat_hi[lw]:
                                continue
                            k = (iq + l) * W + w
                            s_star = min(s_star, _levels_crossing(klev, _model_levels(D, l, w, klev), Y[YY, k],  # noqa: F821
                                                                  Y[YN, k], F[FF, k], F[n_st, k], h, atol_v[iq + l], rtol))
            if (any_viol or s_star < 1.0) and not retake:
                if s_star * h > 4 * hmin and s_star < 1.0 - 1e-9:
                    # the queues whose crossing ends the retaken step (the first over the lanes): held at their
                    # bound after it (at the arrival above), as the single kernel
                    for l in range(L):
                        for w in range(W):
                            lw = l * W + w
                            qv = Y[YN, (iq + l) * W + w]
                            located = s_cross[lw] <= s_star * (1 + 1e-9)
                            loc_lo[lw] = located and qv < 0.0
                            loc_hi[lw] = located and qv > buf[l]
                            loc_rel[lw] = located and sat_hi[lw]
                    h = s_star * h
                    retake = True
                    continue
            for w in range(W):
                if viol[w]:  # kernels._project, for this lane
                    n_clamp[w] += 1
                    for l in range(L):
                        k = (iq + l) * W + w
                        qv = Y[YN, k]
                        Y[YN, k + L * W] += max(qv - buf[l], 0.0)  # lost: component iq + L + l
                        Y[YN, k + 3 * L * W] -= max(-qv, 0.0)  # departed: iq + 3 L + l
                        Y[YN, k] = min(max(qv, 0.0), buf[l])
            was_retake = retake
            retake = False
            break
        if status_all:
            break
        if HOLD_IMAGES:  # noqa: F821
            # a queue leaving its upper bound's band (HOLD_BAND_REL) in this step: the loss signal switches off
            # there, located on the step's Hermite segment (the history's), seen by the flows one backward delay
            # later (as the single kernel)
            for l in range(L):
                band = buf[l] * (1.0 - HOLD_BAND_REL)
                for w in range(W):
                    k = (iq + l) * W + w
                    if alive[w] and Y[YN, k] < band <= Y[YY, k]:
                        tc = t + h * _first_crossing(Y[YY, k], Y[YN, k], F[FF, k], F[n_st, k], h, band)
                        dnext = _add_kink(dbp, dbw, dbn, pl_, bwd_, tc, l, t_end, np.inf)
        if KINKS and kinks and LANES_NLEV > 0:  # noqa: F821 (a queue that crossed a kink level of its link's signal in this step)
            for l in range(L):
                for w in range(W):
                    if not alive[w]:
                        continue
                    k = (iq + l) * W + w
                    ya, yb = Y[YY, k], Y[YN, k]
                    nlev = _model_levels(D, l, w, klev)  # noqa: F821
                    for i_ in range(nlev):
                        lev = klev[i_]
                        if (ya < lev) != (yb < lev):
                            tc = t + h * _first_crossing(ya, yb, F[FF, k], F[n_st, k], h, lev)
                            dnext = _add_kink(dbp, dbw, dbn, pl_, bwd_, tc, l, t_end, np.inf)
        # <switches>
        if KINKS and kinks and LANES_NSW > 0:  # noqa: F821 (a switching function of the signal changed sign)
            for l in range(L):
                for w in range(W):
                    if not alive[w]:
                        continue
                    lw_ = l * W + w
                    nsw = _model_switch(D, l, w, Y[YN, (iq + l) * W + w], arr_[lw_], ksw)  # noqa: F821
                    for i_ in range(nsw):
                        gb = ksw[i_]
                        o_ = lw_ * (LANES_NSW + 1) + i_  # noqa: F821
                        ga = gsw[o_]
                        if gok[lw_] and (ga < 0.0) != (gb < 0.0) and abs(gb - ga) > SW_MIN * ksw[nsw + i_]:
                            dnext = _add_kink(dbp, dbw, dbn, pl_, bwd_, t + h * (ga / (ga - gb)), l, t_end, np.inf)
                        gsw[o_] = gb
                    gok[lw_] = True
        # </switches>
        # accept: history append (prune / grow first, within max_hist_bytes), as the single kernel
        if m + 1 > HT.size:
            HT, HY, HFA, HFB, m, cut, room = _history_grow(HT, HY, HFA, HFB, m, keep_s, max_hist_bytes)
            _shift_segments(Wk, cut)
            if not room:
                # the step from t was accepted but cannot be stored: every live lane ends at t (code 5)
                status_all = 5
                break
        for c in range(nh):
            o = hsrc[c] * W
            for w in range(W):
                HFA[m - 1, c * W + w] = F[FF, o + w]
                HFB[m - 1, c * W + w] = F[n_st, o + w]
                HY[m, c * W + w] = Y[YN, o + w]
        HT[m] = t + h
        m += 1
        # dense output from the pair's continuous extension (coefficients once per step)
        if ie < ne and t_eval[ie] <= t + h:
            for j in range(nd):
                for c in range(no):
                    ext_coeff(j, ocomp[c] * W)
                    for w in range(W):
                        Qd[j, c * W + w] = acc[w]
        while ie < ne and t_eval[ie] <= t + h:
            s = (t_eval[ie] - t) / h
            sp_ = 1.0
            for j in range(nd):
                sp_ *= s
                spow[j] = sp_
            for c in range(no):
                q = ocomp[c]
                for w in range(W):
                    val = 0.0
                    for j in range(nd):
                        val += Qd[j, c * W + w] * spow[j]
                    out_y[orow[w], ie, c] = Y[YY, q * W + w] + h * val
            # a queue's continuous extension may overshoot a bound inside the step: clipped, the clipped volume
            # booked as lost or as over-counted departures where those counters are output (the projection's
            # rule, kernels._project), so the samples conserve packets
            for l in range(L):
                if oc_q[l] >= 0:
                    for w in range(W):
                        qv = out_y[orow[w], ie, oc_q[l]]
                        if oc_lost[l] >= 0:
                            out_y[orow[w], ie, oc_lost[l]] += max(qv - buf[l], 0.0)
                        if oc_dep[l] >= 0:
                            out_y[orow[w], ie, oc_dep[l]] -= max(-qv, 0.0)
                        out_y[orow[w], ie, oc_q[l]] = min(max(qv, 0.0), buf[l])
            ie += 1
        n_steps += 1
        h_ov *= OVERLAP_RELAX  # overlap: the bound after unsettled passes grows back (OVERLAP_CAP)
        hmin_seen = min(hmin_seen, h)
        hmax_seen = max(hmax_seen, h)
        t_prev = t
        t = next_bp if hit_bp else t + h
        if (KINKS or HOLD_IMAGES) and dnext <= t + 1e-12 * max(1.0, abs(t)):  # noqa: F821 (kinks, hold images: passed, the next pending one)
            dnext = _pop_kinks(dbp, dbw, dbn, t)
        for k in range(nW):
            Y[YY, k] = Y[YN, k]
        need_eval = hit_bp
        h_last = h
    for w in range(W):
        if alive[w]:
            codes[w] = status_all
            counters[w, 5] = ie
            reals[w, 2] = t
        counters[w, 0] = n_steps
        counters[w, 1] = n_rej
        counters[w, 2] = nfev
        counters[w, 3] = n_clamp[w]
        counters[w, 4] = 0  # no step is accepted above its tolerance (code 4 instead)
        reals[w, 0] = hmin_seen
        reals[w, 1] = hmax_seen


@njit(cache=True, nogil=True)  # nogil: engine.solve_adaptive_batch calls it from a thread pool
def lanes_kernel_strided(first, stride, y0, t_end, rtol, atol_v, logc, max_step, first_step, max_steps, bps, bps_ptr, t_eval,
                         out_y, orow, n_int, ocomp, overlap, kinks, Cc, A, Bw, E, Pd, expo, dmin, keep_s, max_hist_bytes, dcomp, hsrc,
                         iq, L, buf, Dg, FST, LST, par, bwd, rtt, counters, reals, codes):
    """:func:`lanes_kernel` for the groups ``first, first + stride, ...`` (leading axis of the per-group
    arrays: ``y0``, ``orow``, ``dmin``, ``keep_s``, ``FST``, ``LST``, ``par``, ``bwd``, ``rtt``, ``counters``,
    ``reals``, ``codes``; breakpoints ``bps[bps_ptr[g]:bps_ptr[g + 1]]``; ``Dg``: the fields of ``D`` the groups
    share).  The caller (``engine._run_groups``) runs one group per call, ``first = g``, ``stride = G``, each
    thread taking the next group left: groups differ in cost, and that keeps the threads busy to the end."""
    P, Lg, fps, pl, lptr, lflows, start, stop, C, ctimes, ctable = Dg
    W = LANES
    for g in range(first, y0.shape[0], stride):
        D = (P, Lg, fps, pl, bwd[g], rtt[g], lptr, lflows, start, stop, C, ctimes, ctable, FST[g], LST[g], par[g])
        Wk = (np.zeros(P * W), np.zeros(P * W), np.zeros(Lg * W), np.zeros(pl.size, dtype=np.int64),
              np.zeros(P, dtype=np.int64), np.zeros(W), np.zeros(Pd.shape[1]),
              np.zeros(LANES_NEXP * P * W), np.zeros(W), np.zeros(W), np.zeros(LANES_NS * W))  # noqa: F821
        # (LANES_NEXP, LANES_NS: generated with the model, codegen._lanes_rhs)
        lanes_kernel(y0[g], t_end, rtol, atol_v, logc, max_step, first_step, max_steps, bps[bps_ptr[g]:bps_ptr[g + 1]],
                     t_eval, out_y, orow[g], n_int, ocomp, overlap, kinks, Cc, A, Bw, E, Pd, expo, dmin[g], keep_s[g], max_hist_bytes,
                     dcomp, hsrc, iq, L, buf, D, Wk, counters[g], reals[g], codes[g])
