"""The compiled Dormand--Prince 5(4) method of steps, generic over models (a source template).

This file is Python source that :mod:`ecocc.dde.codegen` copies, verbatim, under the right-hand side it
generates from a model's laws, into one module per model (written to the kernel cache and compiled by
numba with ``cache=True``).  It is never compiled on its own: :func:`adaptive_kernel` calls
``_model_rhs`` (and, in the overlap passes, ``_model_rhs_cur``: the same with the lookups inside the step being
taken, :func:`ecocc.dde.codegen.rhs_variants`), which only the generated module defines.  Keeping the integrator in a module of the
generated file (rather than passing the right-hand side as a function argument) lets numba inline the
right-hand side into the stage loop and cache the whole kernel on disk.

The algorithm is :func:`ecocc.dde.adaptive.solve_dde`'s (method ``"RK45"``), statement for statement
(two differences: output samples inside a step whose queue crossed a bound book the clipped volume as the
projection does, so they conserve packets; the NumPy solver of this revision only clips the queue; and a
generated module's own history columns, an aggregated link load that the NumPy solver does not keep, are
error-checked at mid-step too where a positive delay reads the history, ``MODEL_HIST_CHECK``):
max-norm error control, the mid-step check of the Hermite history of every component read through a
delay, steps no longer than the smallest positive delay, breakpoints stepped onto, queue crossings
located on the step's Hermite segment and projected onto ``[0, buffer]`` (the clipped volume booked as
lost or as over-counted departures), a held queue released where its raw derivative turns inward (unless
negligible: ``history.release_matters``), a step that carries a queue across a level of its link's drop fraction
(``_model_drop_levels``, generated: RED's ``min_th`` and ``max_th``) retaken to end at the crossing, dense
output from the pair's continuous extension.  The state layout is :attr:`ecocc.system.NetworkSystem.layout`.

The history stores only the components the model reads through a delay (``hsrc``: a model's link
signal, the flow states its load and own-load laws read); ``dcomp`` (the components whose Hermite
segments are error-checked at mid-step) is the NumPy solver's, so both take the same steps.

Arguments ``D`` (the network and model data) and ``Wk`` (work arrays: queueing delays, rates,
arrivals, the history segment of each pair's and each flow's last lookup) are tuples that only
``_model_rhs`` reads; see :func:`ecocc.dde.codegen.kernel_args`.
"""
import math  # noqa: F401  (the generated module's right-hand side uses it too)

import numpy as np
from numba import njit

from ecocc.dde.kernels import (DBP_CAP, HOLD_BAND_REL, OVERLAP_CAP, OVERLAP_RELAX, OVERLAP_TOL, PREDICT_MARGIN,  # noqa: F401
                               _absmax, _add_kink, _clamp, _cubic_end,
                               _derivative_fit, _first_crossing, _hermite, _history_grow, _history_grow_cm,
                               _history_new, _history_new_cm, _levels_crossing, _masks, _overlap_diff, _overlap_done,
                               _overlap_extension, _overlap_first_stage, _overlap_inside, _pop_kinks, _project, _release_matters, _release_negligible,
                               _segment_tail, _shift_segments, _skip_kinks, _tiny)


@njit(cache=True)
def _model_hist_cols(D):
    """How many history columns the model keeps after the delayed components (none here; a generated module
    whose right-hand side keeps per-segment data, ecocc.dde.codegen's aggregated link load, redefines this
    and :func:`_model_hist_seg` below this template)."""
    return 0


@njit(cache=True)
def _model_hist_seg(t, h, y, y_new, fa, fe, HY, HFA, HFB, r, nh, D):
    """Write the model's own columns of history row ``r`` (the accepted segment ``[t, t + h]``, states ``y`` and
    ``y_new``, derivatives ``fa`` and ``fe`` at its ends): nothing here (see :func:`_model_hist_cols`)."""
    return


#: whether the model's own history columns are error-checked at mid-step like a stored component (not here; a
#: generated module that keeps an aggregated link load redefines this and :func:`_model_hist_err` below this
#: template: ecocc.dde.codegen._agg_hooks)
MODEL_HIST_CHECK = False


@njit(cache=True)
def _model_hist_err(t, h, y, K, n_st, Pd, half_pow, rtol, HY, HFA, HFB, r, nh, D):
    """The error, in tolerance units, of the model's own columns of history row ``r`` (just written by
    :func:`_model_hist_seg` for the step ``[t, t + h]`` being tried, stages ``K``) at mid-step against the step's
    continuous extension (``Pd``, ``half_pow``): none here (see :data:`MODEL_HIST_CHECK`)."""
    return 0.0


#: how many levels of the current queue the link's AQM drop fraction has a kink or a jump at (none here; a generated
#: module whose drop law has them, RED's ``min_th`` and ``max_th``, redefines this and :func:`_model_drop_levels`
#: below this template: ecocc.dde.codegen._drop_levels_code)
NOW_NLEV = 0


@njit(cache=True)
def _model_drop_levels(D, l, out):
    """Write to ``out`` the queue levels (packets) of link ``l`` where its AQM drop fraction of the current queue
    has a kink or a jump, and return their count (none here; see :data:`NOW_NLEV`)."""
    return 0


#: whether a queue's hold at its upper bound (a full buffer; RED's ``max_th``) starting at a step's end ``t``, or
#: the queue leaving the bound's band (``HOLD_BAND_REL``) at ``t`` inside a step, makes breakpoints at ``t + bwd[j]`` for
#: every (link, flow) pair ``j`` on its link (``D[3]``, ``D[4]``; :func:`ecocc.dde.kernels._add_kink`): the loss
#: signal of a drop-tail or RED link jumps there (``max(0, 1 - C/y)`` at a full buffer), so each flow's
#: right-hand side jumps one backward delay later, and a step straddling that
#: jump passed its error estimate with errors of 1-10 % in Reno's windows at any rtol (drop-tail dumbbell,
#: docs/notes/holdimages.md).  So does a queue crossing one of its drop-law levels (``NOW_NLEV``: RED's ``min_th``,
#: where the drop fraction kinks, and ``max_th``) inside a step, located on its segment.  False here (a user's DDE:
#: ``D`` is another tuple); the network models' generated modules and the mixed composites redefine it below this
#: template (ecocc.dde.codegen, ecocc.dde.codegen_mixed), as :meth:`ecocc.dde.problem.DDEProblem.hold_images` does
#: for the NumPy solver
HOLD_IMAGES = False

#: with :data:`HOLD_IMAGES`, whether a queue's hold at 0 starting at a step's end makes the same breakpoints: a signal
#: linear in the delayed queue (PE-TCP's ``q/T``) kinks where the queue empties (its derivative jumps from ``y - C``
#: to 0), and a step straddling the kink's image was rejected two times in three and left an error of about rtol
#: per image (PE-TCP N = 4: rejected steps 1,017 -> 363 of 2,592 -> 2,217; docs/notes/emptyimages.md).  False here;
#: the generated module of such a model redefines it below this template (ecocc.dde.codegen)
EMPTY_IMAGES = False


@njit(cache=True)
def _model_empty_weight(D, l):
    """How much a unit jump of link ``l``'s queue derivative moves the flows' second derivative (per packet): an
    emptying's images are kept where this times the jump times the step size cubed exceeds rtol (the local error
    of a step straddling the kink; ecocc.dde.codegen._empty_weight).  Here: infinite (every image kept); a
    generated module whose laws give it redefines this below the template."""
    return np.inf


@njit(cache=True, nogil=True)
def adaptive_kernel(y0, t_end, rtol, atol_v, logc, max_step, first_step, max_steps, bps, t_eval, out_y, overlap,
                    Cc, A, Bw, E, Pd, expo, dmin, keep_s, max_hist_bytes, dcomp, hsrc, iq, L, buf, D, Wk, counters,
                    reals):
    """Returns the status code (0 success, 2 failed: non-finite, 3 failed: max_steps, 4 failed: step size underflow, 5 failed:
    the history would need more than ``max_hist_bytes`` bytes; ``reals[3:7]`` then hold the step size, the
    largest ``|y|``, the history's bytes and its nodes)."""
    n = y0.size
    n_st = Cc.size
    t0 = 0.0
    zeros_lo = np.zeros(L)
    # the history holds only the components the model reads through a delay (hsrc)
    nh = hsrc.size
    # after them, the model's own per-segment columns (_model_hist_cols: none unless the generator defines them)
    h0 = np.zeros(max(nh + _model_hist_cols(D), 1))
    for c in range(nh):
        h0[c] = y0[hsrc[c]]
    # the history column-major and interleaved (kernels._history_views: a lookup reads 32 contiguous bytes);
    # row-major in the user-DDE shared integrator (ecocc.dde.userint.source)
    HT, HY, HFA, HFB, m = _history_new_cm(t0, h0)
    y = y0.copy()
    K = np.empty((n_st + 1, n))
    yi = np.empty(n)
    y_new = np.empty(n)
    y_prev = np.empty(n)  # overlap: the step's end value of the previous pass
    # overlap: the continuous extension's coefficients of the history components in the step being taken
    QV = np.zeros((Pd.shape[1], max(nh, 1)))
    f = np.empty(n)
    f_raw = np.empty(n)
    f_new_raw = np.empty(n)
    err_vec = np.empty(n)
    sat_lo = np.zeros(L, dtype=np.bool_)
    sat_hi = np.zeros(L, dtype=np.bool_)
    e0 = np.zeros(L, dtype=np.bool_)
    used_lo = np.zeros(L, dtype=np.bool_)
    used_hi = np.zeros(L, dtype=np.bool_)
    loc_lo = np.zeros(L, dtype=np.bool_)
    loc_hi = np.zeros(L, dtype=np.bool_)
    s_cross = np.ones(L)
    # queue-event prediction (as solve_dde): per queue, whether its last step's cubic may be extrapolated
    # (pred_ok) and that cubic's second and third Taylor coefficients at the step's end; its raw derivative at the
    # last dv_n (<= 4) accepted points (times dv_t, newest first); the predicted crossings' and releases' places
    pred_ok = np.zeros(L, dtype=np.bool_)
    pred_c2 = np.zeros(L)
    pred_c3 = np.zeros(L)
    dv_t = np.zeros(4)
    dv = np.zeros((4, L))
    s_lo = np.ones(L)
    s_rel = np.ones(L)
    dlev = np.empty(NOW_NLEV + 1)  # a link's drop-law levels (_model_drop_levels)
    pred_rel = np.zeros(L, dtype=np.bool_)
    pred_negl = np.zeros(L)
    nd = Pd.shape[1]
    half_pow = np.empty(nd)
    for j in range(nd):
        half_pow[j] = 0.5 ** (j + 1)
    nfev = 0
    ne = t_eval.size
    ie = 0
    while ie < ne and t_eval[ie] <= t0:
        out_y[ie, :] = y
        ie += 1
    # initial derivative
    nudge = _tiny(t0, 1.0)
    _model_rhs(t0, nudge, y, e0, e0, f_raw, D, Wk, t0, y0, HT, HY, HFA, HFB, m, 0, t0, 1.0, QV, y)
    nfev += 1
    _masks(y, f_raw, iq, L, zeros_lo, buf, sat_lo, sat_hi, 1e-12)
    if sat_lo.any() or sat_hi.any():
        _model_rhs(t0, nudge, y, sat_lo, sat_hi, f_raw, D, Wk, t0, y0, HT, HY, HFA, HFB, m, 0, t0, 1.0, QV, y)
        nfev += 1
    f[:] = f_raw
    _clamp(f, sat_lo, sat_hi, iq, L)
    # the model's own columns are checked only where a positive delay reads the history (as the stored components:
    # dcomp empty when every delay is zero, e.g. PE-TCP with delayed_feedback=False, whose laws read the current
    # state; checking columns no law reads took 35 steps where the NumPy solver takes 22, tests/test_queue.py)
    hist_check = MODEL_HIST_CHECK and dcomp.size > 0
    dv_t[0] = t0
    for l in range(L):
        dv[0, l] = f_raw[iq + l]
    dv_n = 1
    for i in range(n):
        if not math.isfinite(f[i]):
            counters[0] = 0
            counters[5] = ie
            reals[2] = t0
            return 2
    if first_step > 0:
        h = first_step
    else:
        d0 = 0.0
        d1 = 0.0
        for i in range(n):
            mag = 1.0 if logc[i] != 0.0 else abs(y[i])  # a log component's size is 1 in relative terms
            sc = atol_v[i] + rtol * mag
            d0 = max(d0, mag / sc)
            d1 = max(d1, abs(f[i]) / sc)
        h = 1e-6 if (d0 < 1e-5 or d1 < 1e-5) else 0.01 * d0 / d1
    h = min(h, max_step, dmin, t_end - t0)
    t = t0
    ip = 0
    n_steps = 0
    n_rej = 0
    n_clamp = 0
    hmin_seen = np.inf
    hmax_seen = 0.0
    status = 0
    retake = False
    rej_step = False  # an attempt of the current step was rejected
    h_ov = np.inf  # overlap: the bound on the step after passes that did not settle (OVERLAP_CAP)
    # where the attempts go (counters[6:11] when the caller passes 11 counters: a measurement's, not the engine's)
    n_att = 0
    n_retake = 0
    n_retake_rel = 0
    n_pred = 0
    n_pred_retaken = 0
    eps = 2.220446049250313e-16
    # HOLD_IMAGES: the pending propagated breakpoints of the upper-bound holds (ascending), the earliest in dnext
    dbp = np.empty(DBP_CAP if HOLD_IMAGES else 1)
    dbw = np.empty(DBP_CAP if HOLD_IMAGES else 1)  # their weights (ecocc.dde.history.skip_images)
    dbn = np.zeros(1, dtype=np.int64)
    dnext = np.inf
    while t < t_end:
        while ip < bps.size and bps[ip] <= t + 1e-12 * max(1.0, abs(t)):
            ip += 1
        next_bp = bps[ip] if ip < bps.size else t_end
        hmin = 16 * eps * max(1.0, abs(t))
        # overlap: steps may be longer than the smallest delay (delayed values inside the step: passes below)
        h = min(h, max_step, h_ov) if overlap else min(h, max_step, dmin)
        if HOLD_IMAGES:
            if dnext <= t + 1e-12 * max(1.0, abs(t)):
                dnext = _pop_kinks(dbp, dbw, dbn, t)
            if EMPTY_IMAGES and dnext <= t + h:
                # an emptying's image that this step straddles within rtol is no breakpoint (skip_images)
                dnext = _skip_kinks(dbp, dbw, dbn, t + h, h, rtol)
            if dnext < next_bp:
                next_bp = dnext
        hit_bp = False
        if t + h >= next_bp - hmin or t + 1.0001 * h >= next_bp:
            h = next_bp - t
            hit_bp = True
        # queue-event prediction (as solve_dde; not for a step retaken to end at a located event): end the step
        # where a free queue's last cubic, extrapolated, reaches PREDICT_MARGIN tolerances above zero, or where an
        # empty held queue's raw derivative, extrapolated, comes within half the negligible size
        # (history.release_negligible) of turning inward; a step that overshoots after all is located and retaken
        # Not in overlap mode (steps past the smallest delay, which solve_dde never takes): there it made the overlap
        # runs with queueing delays less accurate than tests/test_overlap_single.py allows (docs/notes/xpred2.md)
        predicted = False
        if L > 0 and not retake and not overlap:
            s_star = 1.0
            x1 = dv_t[1] - dv_t[0]
            x2 = dv_t[2] - dv_t[0]
            x3 = dv_t[3] - dv_t[0]
            for l in range(L):
                ci = iq + l
                q = y[ci]
                s_lo[l] = 1.0
                s_rel[l] = 1.0
                if pred_ok[l] and not (sat_lo[l] or sat_hi[l]):
                    lev = 0.0 + PREDICT_MARGIN * (atol_v[ci] + rtol * 0.0)
                    y1, f1 = _cubic_end(q, f[ci], pred_c2[l], pred_c3[l], h)
                    if q > lev and y1 < lev:
                        s_lo[l] = _first_crossing(q, y1, f[ci], f1, h, lev)
                pred_negl[l] = _release_negligible(h, atol_v[ci], rtol, q)
                if dv_n >= 3 and sat_lo[l]:
                    d0 = dv[0, l]
                    c1, c2, c3 = _derivative_fit(x1, x2, x3, d0, dv[1, l], dv[2, l], dv[3, l], dv_n)
                    e1, g1 = _cubic_end(d0, c1, c2, c3, h)
                    lev = -0.5 * pred_negl[l]
                    if _release_matters(d0, h, atol_v[ci], rtol, q) and d0 < lev and e1 > lev:
                        s_rel[l] = _first_crossing(d0, e1, c1, g1, h, lev)
                s_star = min(s_star, s_lo[l], s_rel[l])
            if s_star * h > 4 * hmin and s_star < 1.0 - 1e-9:
                # the queues predicted to reach zero are held there after the step as if it were retaken to end at
                # their located crossing (below); those predicted to turn inward are released
                for l in range(L):
                    loc_lo[l] = s_lo[l] <= s_star * (1 + 1e-9)
                    loc_hi[l] = False
                    pred_rel[l] = s_rel[l] <= s_star * (1 + 1e-9)
                h = s_star * h
                hit_bp = False
                predicted = True
                n_pred += 1
        n_att += 1
        tn = _tiny(t, h)
        K[0, :] = f
        t_cur, h_cur = t, h
        # overlap (as the lock-step kernel, ecocc.dde.lanes): a delayed value can fall inside this step; pass 0
        # extrapolates the last history segment, each later pass reads the previous pass's continuous extension
        # (QV) of the step, until the end values of two passes agree (_overlap_done); the stages before
        # i_first look only into the accepted past and are kept
        overlapping = overlap and _overlap_inside(h, dmin, tn)
        i_first = _overlap_first_stage(Cc, h, dmin, tn)
        n_pass = 0
        diff = 0.0
        while True:  # passes (one unless overlapping)
            for i in range(1 if n_pass == 0 else i_first, n_st):
                # stage value, accumulated one stage row at a time (contiguous, vectorizable)
                yi[:] = y
                for s_ in range(i):
                    a_ = h * A[i, s_]
                    if a_ != 0.0:
                        for q in range(n):
                            yi[q] += a_ * K[s_, q]
                c = Cc[i]
                nud = (0.5 - c) * tn
                s_t = t + c * h
                if n_pass == 0:
                    _model_rhs(s_t, nud, yi, sat_lo, sat_hi, K[i], D, Wk, t0, y0, HT, HY, HFA, HFB, m, 0, t_cur, h_cur,
                               QV, y)
                else:  # the lookups inside the step read its extension (the generated _model_rhs_cur)
                    _model_rhs_cur(s_t, nud, yi, sat_lo, sat_hi, K[i], D, Wk, t0, y0, HT, HY, HFA, HFB, m, n_pass,
                                   t_cur, h_cur, QV, y)
                _clamp(K[i], sat_lo, sat_hi, iq, L)
                nfev += 1
            y_new[:] = y
            for s_ in range(n_st):
                b_ = h * Bw[s_]
                if b_ != 0.0:
                    for q in range(n):
                        y_new[q] += b_ * K[s_, q]
            nud = -0.5 * tn
            if n_pass == 0:
                _model_rhs(t + h, nud, y_new, sat_lo, sat_hi, f_new_raw, D, Wk, t0, y0, HT, HY, HFA, HFB, m, 0, t_cur,
                           h_cur, QV, y)
            else:
                _model_rhs_cur(t + h, nud, y_new, sat_lo, sat_hi, f_new_raw, D, Wk, t0, y0, HT, HY, HFA, HFB, m, n_pass,
                               t_cur, h_cur, QV, y)
            nfev += 1
            K[n_st, :] = f_new_raw
            _clamp(K[n_st], sat_lo, sat_hi, iq, L)
            if not overlapping:
                break
            if n_pass > 0:
                diff = _overlap_diff(y_new, y_prev, y, atol_v, rtol, logc, n)
                if _overlap_done(diff, n_pass):
                    break
            y_prev[:] = y_new
            _overlap_extension(K, Pd, hsrc, QV)
            # the model's own history columns (an aggregated link load) over the step, from this pass: in row m - 1,
            # free until the step is accepted (then written again from the accepted pass), where the right-hand
            # side's lookups inside the step read them (ecocc.dde.codegen._agg_cur_code)
            _model_hist_seg(t, h, y, y_new, f, K[n_st], HY, HFA, HFB, m - 1, nh, D)
            n_pass += 1
        if overlapping and diff > OVERLAP_TOL:
            # the passes did not settle: a shorter step (as the lock-step kernel), and the next ones shorter too
            h_ov = OVERLAP_CAP * h
            n_rej += 1
            rej_step = True
            h *= 0.5
            continue
        err_vec[:] = 0.0
        for s_ in range(n_st + 1):
            e_ = h * E[s_]
            if e_ != 0.0:
                for q in range(n):
                    err_vec[q] += e_ * K[s_, q]
        chk = 0.0
        for q in range(n):
            chk += y_new[q] * 0.0 + err_vec[q] * 0.0  # nan unless every entry is finite
        finite = chk == 0.0
        if not finite:
            if h > hmin * 4:
                h *= 0.25
                n_rej += 1
                rej_step = True
                continue
            status = 2
            break
        err = 0.0
        for q in range(n):
            sc = atol_v[q] + rtol * (1.0 if logc[q] != 0.0 else max(abs(y[q]), abs(y_new[q])))
            e = abs(err_vec[q]) / sc
            if e > err:
                err = e
        for jj in range(dcomp.size):
            q = dcomp[jj]
            val = 0.0
            for j in range(nd):
                Qj = 0.0
                for s_ in range(n_st + 1):
                    Qj += K[s_, q] * Pd[s_, j]
                val += Qj * half_pow[j]
            mid_dense = y[q] + h * val
            mid_herm = _hermite(0.5, h, y[q], y_new[q], f[q], K[n_st, q])
            sc = atol_v[q] + rtol * (1.0 if logc[q] != 0.0 else max(abs(y[q]), abs(y_new[q])))
            e = abs(mid_dense - mid_herm) / sc
            if e > err:
                err = e
        if hist_check:
            # the model's own history columns (an aggregated link load), whose cubic a delayed lookup reads, are
            # checked at mid-step too; written to row m - 1, free until the step is accepted (and written again there
            # only after a queue projection, any_viol: the sent reading's load reads the queues)
            _model_hist_seg(t, h, y, y_new, f, K[n_st], HY, HFA, HFB, m - 1, nh, D)
            e = _model_hist_err(t, h, y, K, n_st, Pd, half_pow, rtol, HY, HFA, HFB, m - 1, nh, D)
            if e > err:
                err = e
        if err > 1.0:
            # a step retaken to end at a located bound crossing is error-controlled like any other (as solve_dde;
            # it was accepted unchecked here): if it fails, a shorter step ends before the crossing, which is
            # found again
            retake = False
            if h <= hmin * 4:
                # step size underflow: no step that t can resolve meets the tolerance (as solve_dde and the
                # lock-step lanes; accepting it as "inaccurate" would crawl at 64 ulp per step to max_steps)
                status = 4
                break
            n_rej += 1
            rej_step = True
            h *= max(0.2, 0.9 * err ** expo)
            continue
        # bound crossings of free queues inside the step
        any_viol = False
        for l in range(L):
            qv = y_new[iq + l]
            if not (sat_lo[l] or sat_hi[l]) and (qv < 0.0 or qv > buf[l]):
                any_viol = True
        if not retake:
            s_star = 1.0
            for l in range(L):
                qv = y_new[iq + l]
                ci = iq + l
                s_cross[l] = 1.0
                s_rel[l] = 1.0
                if not (sat_lo[l] or sat_hi[l]) and (qv < 0.0 or qv > buf[l]):
                    level = 0.0 if qv < 0.0 else buf[l]
                    s_cross[l] = _first_crossing(y[ci], y_new[ci], f[ci], K[n_st, ci], h, level)
                    s_star = min(s_star, s_cross[l])
                # a held queue leaves its bound where its raw derivative turns inward (as solve_dde), unless the
                # clamped inward flow before that is negligible (history.release_matters)
                d_a, d_b = f_raw[ci], f_new_raw[ci]
                if ((sat_lo[l] and d_a <= 0.0 < d_b) or (sat_hi[l] and d_b < 0.0 <= d_a)) and \
                        _release_matters(d_a, h, atol_v[ci], rtol, y[ci]):
                    s_rel[l] = d_a / (d_a - d_b)
                    s_star = min(s_star, s_rel[l])
                # the link's AQM drop fraction of the current queue has a kink or a jump at a level (RED's min_th,
                # max_th), and so have the queue's and the lost counter's derivatives: a step that carries a free
                # queue across one is retaken to end at the first crossing (located on the step's Hermite
                # segment), so that no step and no dense output straddles it (the lost counter's Hermite output
                # dipped below its start at RED's onset); a queue that starts the step within its tolerance of the
                # level is at its kink already (as solve_dde)
                if NOW_NLEV > 0 and not (sat_lo[l] or sat_hi[l]):
                    s_star = min(s_star, _levels_crossing(dlev, _model_drop_levels(D, l, dlev), y[ci], y_new[ci],
                                                          f[ci], K[n_st, ci], h, atol_v[ci], rtol))
            if s_star * h > 4 * hmin and s_star < 1.0 - 1e-9:
                # the queues whose crossing ends the retaken step: held at their bound after it (below)
                for l in range(L):
                    located = s_cross[l] <= s_star * (1 + 1e-9)
                    loc_lo[l] = located and y_new[iq + l] < 0.0
                    loc_hi[l] = located and y_new[iq + l] > buf[l]
                h = s_star * h
                retake = True
                n_retake += 1
                for l in range(L):
                    if s_rel[l] <= s_star:
                        n_retake_rel += 1
                        break
                if predicted:
                    n_pred_retaken += 1
                predicted = False
                continue
        # the crossing prediction of the next step extrapolates this step's cubic (not across a breakpoint, nor
        # for a queue held or projected in it)
        for l in range(L):
            ci = iq + l
            qv = y_new[ci]
            pred_c2[l], pred_c3[l] = _segment_tail(y[ci], qv, f[ci], K[n_st, ci], h)
            pred_ok[l] = not (sat_lo[l] or sat_hi[l] or qv < 0.0 or qv > buf[l] or hit_bp)
        if any_viol:
            n_clamp += 1
            _project(y_new, iq, iq + L, iq + 3 * L, L, buf)
        # a predicted step that landed inside the bounds ends at its events as a retaken one does
        was_retake = retake or predicted
        retake = False
        # accept: history append (prune / grow first, within max_hist_bytes)
        if m + 1 > HT.size:
            HT, HY, HFA, HFB, m, cut, room = _history_grow_cm(HT, HY, HFA, HFB, m, keep_s, max_hist_bytes)
            _shift_segments(Wk, cut)
            if not room:
                # the step from t was accepted but cannot be stored: the run ends at t (outputs up to t kept)
                reals[3] = h
                reals[4] = _absmax(y)
                reals[5] = HT.size * 8.0 * (1 + 3 * HY.shape[1])
                reals[6] = m
                status = 5
                break
        for c in range(nh):
            HFA[m - 1, c] = f[hsrc[c]]
            HFB[m - 1, c] = K[n_st, hsrc[c]]
            HY[m, c] = y_new[hsrc[c]]
        if not hist_check or any_viol:  # else row m - 1 holds this step's columns from its check
            _model_hist_seg(t, h, y, y_new, f, K[n_st], HY, HFA, HFB, m - 1, nh, D)
        HT[m] = t + h
        m += 1
        # dense output from the pair's continuous extension
        if ie < ne and t_eval[ie] <= t + h:
            while ie < ne and t_eval[ie] <= t + h:
                s = (t_eval[ie] - t) / h
                for q in range(n):
                    val = 0.0
                    sp_ = 1.0
                    for j in range(nd):
                        Qj = 0.0
                        for s_ in range(n_st + 1):
                            Qj += K[s_, q] * Pd[s_, j]
                        sp_ *= s
                        val += Qj * sp_
                    out_y[ie, q] = y[q] + h * val
                # a sample inside a step whose queue crossed a bound (the step was then projected): clip it
                # the way the projection does, booking the clipped volume (lost above the buffer,
                # over-counted departures below zero), so that arrived = departed + lost + queue holds in
                # every sample, not only at the steps
                _project(out_y[ie], iq, iq + L, iq + 3 * L, L, buf)
                ie += 1
        n_steps += 1
        h_ov *= OVERLAP_RELAX  # overlap: the bound after unsettled passes grows back (OVERLAP_CAP)
        hmin_seen = min(hmin_seen, h)
        hmax_seen = max(hmax_seen, h)
        if HOLD_IMAGES:
            # a queue leaving its upper bound's band (HOLD_BAND_REL) in this step: the loss signal switches off
            # there, located on the step's Hermite segment (the history's), and the flows see it one backward
            # delay later
            for l in range(L):
                ci = iq + l
                if y_new[ci] < buf[l] * (1.0 - HOLD_BAND_REL) <= y[ci]:
                    tc = t + h * _first_crossing(y[ci], y_new[ci], K[0, ci], K[n_st, ci], h,
                                                 buf[l] * (1.0 - HOLD_BAND_REL))
                    dnext = _add_kink(dbp, dbw, dbn, D[3], D[4], tc, l, t_end, np.inf)
                # a queue crossing a drop-law level in this step (NOW_NLEV: RED's min_th, max_th): the drop
                # fraction's kink, located on the step's Hermite segment, reaches the flows one backward delay
                # later (as solve_dde)
                if NOW_NLEV > 0:
                    for i in range(_model_drop_levels(D, l, dlev)):
                        if (y[ci] < dlev[i]) != (y_new[ci] < dlev[i]):
                            tc = t + h * _first_crossing(y[ci], y_new[ci], K[0, ci], K[n_st, ci], h, dlev[i])
                            dnext = _add_kink(dbp, dbw, dbn, D[3], D[4], tc, l, t_end, np.inf)
        t_prev = t
        t = next_bp if hit_bp else t + h
        y[:] = y_new
        nud = _tiny(t, h)
        if hit_bp:
            _model_rhs(t, nud, y, sat_lo, sat_hi, f_raw, D, Wk, t0, y0, HT, HY, HFA, HFB, m, 0, t0, 1.0, QV, y)
            nfev += 1
        else:
            f_raw[:] = f_new_raw
        used_lo[:] = sat_lo
        used_hi[:] = sat_hi
        _masks(y, f_raw, iq, L, zeros_lo, buf, sat_lo, sat_hi, 1e-12)
        # a queue stays held while its raw derivative points outward (a held step does not move it), and one
        # that a step retaken to end at its located crossing brought to the bound is held too, even a hair
        # (10 x its tolerance) inside: as solve_dde (see there; left free, the next step crossed unlocated)
        changed = False
        for l in range(L):
            ci = iq + l
            if not (sat_lo[l] or sat_hi[l]):
                if (used_lo[l] or (was_retake and loc_lo[l])) and f_raw[ci] <= 0.0 and \
                        y[ci] <= 10.0 * atol_v[ci]:
                    sat_lo[l] = True
                elif (used_hi[l] or (was_retake and loc_hi[l])) and f_raw[ci] >= 0.0 and \
                        buf[l] - y[ci] <= 10.0 * (atol_v[ci] + rtol * abs(buf[l])):
                    sat_hi[l] = True
            # a step predicted to end where a held queue's raw derivative comes within half the negligible size
            # of turning inward releases it if it is within that size (as solve_dde)
            if predicted and pred_rel[l] and f_raw[ci] >= -pred_negl[l]:
                sat_lo[l] = False
            if sat_lo[l] != used_lo[l] or sat_hi[l] != used_hi[l]:
                changed = True
            # a held queue sits exactly on its bound: moved there from a hair inside, booked (departed or
            # lost), the history's last node too (as solve_dde: a drop-tail queue held a hair below its buffer
            # was not "full" for the loss signal)
            lvl = 0.0 if sat_lo[l] else buf[l]
            if (sat_lo[l] or sat_hi[l]) and y[ci] != lvl:
                if sat_lo[l]:
                    y[iq + 3 * L + l] += y[ci]
                else:
                    y[iq + L + l] -= lvl - y[ci]
                y[ci] = lvl
                for c in range(nh):
                    if hsrc[c] == ci:
                        HY[m - 1, c] = lvl
                changed = True
            elif HOLD_IMAGES and was_retake and used_hi[l] and not sat_hi[l] and y[ci] < buf[l] and \
                    buf[l] - y[ci] <= 10.0 * (atol_v[ci] + rtol * abs(buf[l])):
                # released at t from its upper bound, a hair below it, by a step that ended at its located or
                # predicted release (the held step's clamped derivative turned inward inside the step; after
                # any other held step the queue is below the bound by the true outflow since an early release
                # that was not retaken, as solve_dde): back onto the bound and its segment flat, so that the history the loss
                # signal reads (full within HOLD_BAND_REL, far inside the queue's tolerance) keeps the buffer full
                # until the release; the hair's dip had switched the signal off up to 1.7e-5 s early (Reno's
                # window 1.8e-4 off, docs/notes/holdimages.md).  The hair is volume that left at the capacity after
                # the true release: taken back from the departures (the lost counter, which a held queue's move
                # up takes it from, must not step back: the overflow had stopped)
                y[iq + 3 * L + l] -= buf[l] - y[ci]
                y[ci] = buf[l]
                for c in range(nh):
                    if hsrc[c] == ci:
                        HY[m - 1, c] = buf[l]
                        HFB[m - 2, c] = 0.0
                changed = True
        if HOLD_IMAGES:
            for l in range(L):
                if sat_hi[l] and not used_hi[l]:  # held at the bound from t: the loss signal is on from t
                    dnext = _add_kink(dbp, dbw, dbn, D[3], D[4], t, l, t_end, np.inf)
                elif EMPTY_IMAGES and sat_lo[l] and not used_lo[l]:
                    # empty from t: the signal's kink is at t, the flows' second derivatives jump by the weight
                    # times the queue's outflow rate (skipped where a step straddles it within rtol; as solve_dde)
                    dnext = _add_kink(dbp, dbw, dbn, D[3], D[4], t, l, t_end,
                                      _model_empty_weight(D, l) * abs(f_raw[iq + l]))
        if changed:
            # counters that depend on the masks (lost, departed) see the masks of the new step
            _model_rhs(t, nud, y, sat_lo, sat_hi, f_raw, D, Wk, t0, y0, HT, HY, HFA, HFB, m, 0, t0, 1.0, QV, y)
            nfev += 1
        f[:] = f_raw
        _clamp(f, sat_lo, sat_hi, iq, L)
        # the raw derivatives at the last accepted points, for the release prediction (from the breakpoint on,
        # after one: the derivative jumps there)
        dv_n = 1 if hit_bp else min(dv_n + 1, 4)
        for k in range(3, 0, -1):
            dv_t[k] = dv_t[k - 1]
            for l in range(L):
                dv[k, l] = dv[k - 1, l]
        dv_t[0] = t
        for l in range(L):
            dv[0, l] = f_raw[iq + l]
        gmax = 1.0 if rej_step else 5.0  # no growth right after a rejected attempt
        rej_step = False
        if err > 0:
            h = (t - t_prev) * min(gmax, max(0.2, 0.9 * err ** expo))
        else:
            h = (t - t_prev) * gmax
        if n_steps >= max_steps:
            status = 3
            break
    counters[0] = n_steps
    counters[1] = n_rej
    counters[2] = nfev
    counters[3] = n_clamp
    counters[4] = 0  # steps accepted above tolerance: none (underflow fails, code 4)
    counters[5] = ie
    if counters.size >= 11:
        counters[6] = n_att
        counters[7] = n_retake
        counters[8] = n_retake_rel
        counters[9] = n_pred
        counters[10] = n_pred_retaken
    reals[0] = hmin_seen
    reals[1] = hmax_seen
    reals[2] = t
    return status
