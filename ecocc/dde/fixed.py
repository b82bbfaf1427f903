"""Fixed-step classical Runge--Kutta (RK4) integrator for DDEs, batched.

Design
------
* Uniform grid ``t_k = t0 + k h``.  If ``(t_end - t0) / step_s`` is not an
  integer the step is shrunk slightly so that the grid ends exactly at
  ``t_end`` (``settings["step_s"]`` reports the step used).
* The past is a ring buffer of the last ``ceil(max_delay / h) + 3`` grid
  segments.  Segment ``k`` stores the state at both ends and the derivative
  *of that step* at both ends (as in :mod:`ecocc.dde.history`), so a kink
  at a grid node (a queue reaching zero) or a state jump is represented
  exactly.  Delayed values are cubic Hermite interpolants; because ``h`` and
  the delays are constant, the segment offset and the Hermite weights of
  every lookup and every RK4 stage (``c = 0, 1/2, 1``) are computed once
  (segment index by arithmetic, no search).  Delays need not be multiples
  of the step.
* Delays shorter than the stage offset (``0 < d < c h``) would need the
  current step; they are read by cubic *extrapolation* of the last completed
  segment (local error still ``O(h^4)``; in the very first step, where no
  segment exists yet, the history is used, an ``O(h)`` local error).  Use
  ``step_s <= min positive delay`` to avoid both.  Zero delays read the
  current stage state.  Times before ``t0`` use
  :meth:`DDEProblem.history_values` (for a batch without a user history,
  each member's own ``y0``).
* Bounded components (queues): the derivative is clamped with masks taken
  at the start of the step (``max(f, 0)`` at the lower bound when the raw
  derivative points outward, ``min(f, 0)`` at the upper bound) and the state
  is projected (clipped) after each step; interpolated outputs of bounded
  components are clipped too.  The masks are passed to ``rhs``
  as ``sat_lo``/``sat_hi``.  Near a bound the method is therefore only
  first order (the crossing inside a step is not located, unlike the
  adaptive solver).
* Kinks and jumps: a kink inside a step (not on the grid) costs an ``O(h)``
  local error in the derivative that the step integrates (``O(h^2)`` local,
  ``O(h)`` global contribution per kink); a jump is applied at the first
  grid point ``>= `` its time, so its timing error is ``< h``.  Put kinks
  and jumps on the grid (choose ``step_s`` dividing them) for full order.
* ``rhs`` is called at ``t + c h``, nudged a hair toward the interior of the
  step when ``problem.nudge_time`` is set (as :mod:`ecocc.dde.adaptive`
  does), so piecewise-constant inputs switching on a grid point are read on
  the right side.  Delayed values always select their segment that way.
* Batch: ``y0`` of shape ``(B, n)`` advances ``B`` independent parameter
  sets at once; lookups may have delays ``(m,)`` or ``(B, m)``.  ``rhs``
  receives ``y`` of shape ``(B, n)``, ``Z[k]`` of shape ``(B, m)`` and
  masks ``(B, nb)``.  A member whose state becomes non-finite is frozen at
  its last finite state and reported in ``settings["member_status"]``; the
  others continue.
"""
from __future__ import annotations

import math
import time as _time

import numpy as np

from .adaptive import DDESolution, Status
from .problem import DDEProblem, Throttled

#: stage abscissae of the classical RK4 method and the nudge direction of
#: the time at which each stage reads piecewise-constant inputs
_C = (0.0, 0.5, 1.0)
_NUDGE_SIGN = {0.0: 1.0, 0.5: 0.0, 1.0: -1.0}


def _hermite_weights(s):
    """Weights of ``(y0, h f0, y1, h f1)`` in the cubic Hermite interpolant at ``s``."""
    s2 = s * s
    s3 = s2 * s
    return np.stack([2 * s3 - 3 * s2 + 1, s3 - 2 * s2 + s, -2 * s3 + 3 * s2, s3 - s2], axis=-1)


class _Plan:
    """Precomputed gather indices and Hermite weights of one lookup.

    For stage abscissa ``c`` the delayed time ``t_k + c h - d`` lies in
    segment ``k + off`` at fraction ``s`` (both independent of ``k``).
    """

    def __init__(self, comps, delays, B, n, h, M):
        self.comps = comps  # (m,)
        d = np.broadcast_to(np.asarray(delays, dtype=float), (B, comps.size)) if np.ndim(delays) == 2 \
            else np.broadcast_to(np.asarray(delays, dtype=float)[None, :], (1, comps.size))
        self.d = np.ascontiguousarray(d)  # (B or 1, m)
        Bd = self.d.shape[0]
        self.zero = self.d == 0
        self.any_zero = bool(self.zero.any())
        rows = np.arange(Bd)[:, None] if Bd > 1 else np.zeros((1, 1), dtype=np.int64)
        if Bd == 1 and B > 1:
            rows = np.arange(B)[:, None]
        # flat offset of (member, component) in one ring slot of shape (B, n, 4)
        self.base = ((rows * n + comps[None, :]) * 4).astype(np.int64)  # (B, m)
        self.base4 = self.base[..., None] + np.arange(4)  # the four stored values of each entry
        self.slot_stride = B * n * 4
        self.M = M
        self.stage = {}
        for c in _C:
            v = c - self.d / h  # position relative to t_k in steps
            r = np.round(v)
            on_node = np.abs(v - r) <= 1e-9 * np.maximum(1.0, np.abs(v))
            sign = _NUDGE_SIGN[c]
            off = np.where(on_node, np.where(sign >= 0, r, r - 1), np.floor(v)).astype(np.int64)
            # delays inside the current step: extrapolate the last completed segment
            off = np.where(off >= 0, -1, off)
            s = v - off
            # exactly on a node: the nudge picks the segment, s is exactly 0 (start) or 1 (end)
            s = np.where(on_node & (off == r), 0.0, np.where(on_node & (off == r - 1), 1.0, s))
            W = _hermite_weights(s)  # (Bd, m, 4)
            if W.shape[0] == 1 and B > 1:
                W = np.broadcast_to(W, (B,) + W.shape[1:])
                off = np.broadcast_to(off, (B, off.shape[1]))
            # (offset, weights, number of first steps that may reach before t0)
            self.stage[c] = (np.ascontiguousarray(off), np.ascontiguousarray(W), int(-off.min()))


def solve_fixed(problem: DDEProblem, t_end: float, step_s: float, *, t_eval=None, progress=None,
                max_steps: int = 100_000_000) -> DDESolution:
    """Integrate ``problem`` with classical RK4 on a uniform grid.

    Parameters
    ----------
    problem : DDEProblem
        ``problem.y0`` of shape ``(n,)`` or ``(B, n)`` (a batch of ``B``
        independent members advanced together).
    t_end : float
        Final time in seconds.
    step_s : float
        Step in seconds (shrunk slightly if needed so that the grid ends at
        ``t_end``).
    t_eval : array, optional
        Output times in seconds (default: every grid point).  Values between
        grid points come from the step's cubic Hermite interpolant.
    progress : callable, optional
        Called as ``progress(t)`` about every 0.2 s of wall time.
    max_steps : int
        Largest number of grid steps accepted (a ``step_s`` that would need
        more raises :class:`ecocc.errors.InputError` before anything runs).

    Every option is validated (:mod:`ecocc.dde.options`).

    Returns
    -------
    DDESolution
        ``y`` has shape ``(len(t), n)`` or, for a batch, ``(len(t), B, n)``.
        ``settings`` holds ``step_s``, ``n_grid_steps`` and, for a batch,
        ``member_status`` and ``member_t_failed_s``.
    """
    from . import options as opt
    from ..errors import InputError
    wall0 = _time.perf_counter()
    if not isinstance(problem, DDEProblem):
        raise InputError("problem", type(problem).__name__, "a DDEProblem")
    t0 = float(problem.t0)
    t_end = opt.t_end(t_end, t0)
    step_s = opt.real("step_s", step_s, lo=0.0, lo_open=True, allowed="a finite number of seconds > 0")
    max_steps = opt.integer("max_steps", max_steps, lo=1)
    progress = opt.callable_or_none("progress", progress)
    n_grid_f = math.ceil((t_end - t0) / step_s - 1e-9)
    if n_grid_f > max_steps:
        raise InputError("step_s", step_s, f"a step giving at most max_steps = {max_steps} grid steps over "
                         f"[{t0:g}, {t_end:g}] s (this one gives {n_grid_f:.3g})")
    n_grid = max(1, int(n_grid_f))
    h = (t_end - t0) / n_grid
    if h < 16 * np.finfo(float).eps * max(1.0, abs(t0), abs(t_end)):
        raise InputError("step_s", step_s, f"a step above the resolution of t on [{t0:g}, {t_end:g}] s")
    t_eval = opt.t_eval(t_eval, t0, t_end)
    n = problem.n
    y0 = np.asarray(problem.y0, dtype=float)
    batched = y0.ndim == 2
    Y0 = y0 if batched else y0[None, :]
    B = Y0.shape[0]
    if Y0.shape[1] != n or y0.ndim > 2:
        raise InputError("problem.y0", f"array of shape {y0.shape}", f"shape ({n},) or (B, {n})")
    if not np.all(np.isfinite(Y0)):
        raise InputError("problem.y0", "non-finite values", "finite numbers")
    dmax = float(max((np.max(lk.delays) for lk in problem.lookups if np.size(lk.delays)), default=0.0))
    M = int(math.ceil(dmax / h)) + 3
    ring_bytes = M * B * n * 4 * 8
    if ring_bytes > opt.MAX_RING_BYTES:
        raise InputError("step_s", step_s, f"a step for which the past of the longest delay ({dmax:g} s) fits in "
                         f"{opt.MAX_RING_BYTES / 2**30:g} GiB (it needs {ring_bytes / 2**30:.3g} GiB)")
    ring = np.zeros((M, B, n, 4))  # (y_start, h f_start, y_end, h f_end) of each segment
    ring_flat = ring.reshape(-1)
    plans = [_Plan(lk.comps, lk.delays, B, n, h, M) for lk in problem.lookups]
    bidx = problem.bounded
    lo, hi = problem.lower, problem.upper
    nb = bidx.size
    rows_b = np.arange(B)[:, None]

    def history(plan, c, k, off):
        tau = t0 + (k + c) * h - plan.d
        tau = np.minimum(np.broadcast_to(tau, off.shape), t0)
        need = (k + off) < 0
        if problem.history is None:
            return need, Y0[rows_b, plan.comps[None, :]]
        comps_b = np.broadcast_to(plan.comps[None, :], need.shape)
        vals = np.zeros(need.shape)
        vals[need] = problem.history(tau[need], comps_b[need])
        return need, vals

    def lookups(k, c, ystage):
        out = []
        for pl in plans:
            off, W, kneed = pl.stage[c]
            slot = (k + off) % M
            g = np.take(ring_flat, (slot * pl.slot_stride)[..., None] + pl.base4)
            z = np.einsum("bmj,bmj->bm", g, W)
            if k < kneed:
                need, hv = history(pl, c, k, off)
                if need.any():
                    z = np.where(need, hv, z)
            if pl.any_zero:
                z = np.where(pl.zero, ystage[:, pl.comps], z)
            out.append(z if batched else z[0])
        return out

    nfev = 0

    def raw(k, c, ystage, tt, sat_lo, sat_hi):
        nonlocal nfev
        nfev += 1
        Z = lookups(k, c, ystage)
        if batched:
            f = problem.rhs(tt, ystage, Z, sat_lo, sat_hi)
        else:
            f = problem.rhs(tt, ystage[0], Z, sat_lo[0], sat_hi[0])
        return np.broadcast_to(np.asarray(f, dtype=float), (B, n))

    def clamp(f, sat_lo, sat_hi):
        if nb == 0:
            return f
        fb = f[:, bidx]
        fb = np.where(sat_lo, np.maximum(fb, 0.0), fb)
        fb = np.where(sat_hi, np.minimum(fb, 0.0), fb)
        f = f.copy()
        f[:, bidx] = fb
        return f

    def masks(y, f_raw):
        if nb == 0:
            e = np.zeros((B, 0), dtype=bool)
            return e, e
        yb, fb = y[:, bidx], f_raw[:, bidx]
        return (yb <= lo) & (fb <= 0), (yb >= hi) & (fb >= 0)

    # time nudge into the step for rhs with piecewise-constant inputs (``problem.nudge_time``,
    # as in the adaptive solver); smooth time dependence gets the exact stage times
    tiny = max(1e-7 * h, 8 * np.finfo(float).eps * max(1.0, abs(t0), abs(t_end))) \
        if getattr(problem, "nudge_time", False) else 0.0
    jumps = problem.jumps[(problem.jumps >= t0) & (problem.jumps <= t_end)]
    kinks = problem.kinks[(problem.kinks > t0) & (problem.kinks <= t_end)]
    # grid index of the first grid point >= each jump / kink
    jump_k = np.ceil((jumps - t0) / h - 1e-9).astype(np.int64)
    special_k = set(np.ceil((np.concatenate([jumps, kinks]) - t0) / h - 1e-9).astype(np.int64).tolist())

    y = Y0.copy()
    if problem.apply_jump is not None and np.any(jump_k == 0):
        y = _apply_jump(problem, t0, y, batched)
    alive = np.ones(B, dtype=bool)
    t_failed = np.full(B, np.nan)

    t_eval_arr = t_eval  # validated: finite, increasing, in [t0, t_end]
    out_t, out_y = [], []
    ie = 0
    if t_eval_arr is None:
        out_t.append(t0); out_y.append(y.copy())
    else:
        while ie < t_eval_arr.size and t_eval_arr[ie] <= t0:
            out_t.append(t_eval_arr[ie]); out_y.append(y.copy()); ie += 1

    e0 = np.zeros((B, nb), dtype=bool)
    status, message = Status.SUCCESS, (
        f"integration reached t_end (fixed step h = {h:.6g} s, classical RK4: order 4 in smooth regions, "
        "lower near queue clamps, kinks and jumps off the grid)")
    n_clamp = 0
    tick = Throttled(progress)
    k = 0
    t = t0
    with np.errstate(all="ignore"):
        f_raw = raw(0, 0.0, y, t0 + tiny, e0, e0)
        sat_lo, sat_hi = masks(y, f_raw)
        if sat_lo.any() or sat_hi.any():
            f_raw = raw(0, 0.0, y, t0 + tiny, sat_lo, sat_hi)
        f = clamp(f_raw, sat_lo, sat_hi)
        try:
            while k < n_grid:
                t = t0 + k * h
                slot = k % M
                k1 = f
                k2 = clamp(raw(k, 0.5, y + (0.5 * h) * k1, t + 0.5 * h, sat_lo, sat_hi), sat_lo, sat_hi)
                # the stage lookups of c = 1/2 need the ring slot of this step only through
                # extrapolation of earlier slots, so the ring is written after the stages
                k3 = clamp(raw(k, 0.5, y + (0.5 * h) * k2, t + 0.5 * h, sat_lo, sat_hi), sat_lo, sat_hi)
                k4 = clamp(raw(k, 1.0, y + h * k3, t + h - tiny, sat_lo, sat_hi), sat_lo, sat_hi)
                y_new = y + (h / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
                if nb:
                    yb = y_new[:, bidx]
                    out_of = (yb < lo) | (yb > hi)
                    if out_of.any():
                        n_clamp += int(out_of.sum())
                        y_new = problem.project_state(y_new)
                t_new = t0 + (k + 1) * h
                # raw derivative at the new node: for the end of this step (its masks)
                # and, unless a kink/jump sits at this node, for the start of the next
                ring[slot, :, :, 0] = y
                ring[slot, :, :, 1] = h * f
                ring[slot, :, :, 2] = y_new  # provisional: the end-of-step lookups below use it
                ring[slot, :, :, 3] = h * k4
                special = (k + 1) in special_k
                fe_raw = raw(k + 1, 0.0, y_new, t_new - (tiny if special else -tiny), sat_lo, sat_hi)
                f_end = clamp(fe_raw, sat_lo, sat_hi)
                fin = np.isfinite(y_new).all(axis=1) & np.isfinite(f_end).all(axis=1)
                if not fin.all():
                    bad = ~fin & alive
                    t_failed[bad] = t_new
                    alive &= fin
                    if not batched or not alive.any():
                        status, message = Status.FAILED, f"non-finite state at t = {t_new:.9g} s"
                        break
                    y_new[~fin] = y[~fin]
                    f_end = np.where(fin[:, None], f_end, 0.0)
                    fe_raw = np.where(fin[:, None], fe_raw, 0.0)
                ring[slot, :, :, 3] = h * f_end
                # outputs inside (t, t_new]
                if t_eval_arr is None:
                    out_t.append(t_new); out_y.append(y_new.copy())
                else:
                    while ie < t_eval_arr.size and t_eval_arr[ie] <= t_new + 1e-12 * max(1.0, abs(t_new)):
                        s = min(max((t_eval_arr[ie] - t) / h, 0.0), 1.0)
                        w = _hermite_weights(np.float64(s))
                        out_t.append(t_eval_arr[ie])
                        yo = w[0] * y + w[1] * h * f + w[2] * y_new + w[3] * h * f_end
                        if nb:  # the cubic between two projected nodes may overshoot a bound: the problem's
                            # projection puts it back and books the clipped volume (conservation holds)
                            yo = problem.project_state(yo)
                        out_y.append(yo)
                        ie += 1
                k += 1
                t = t_new
                y = y_new
                jumped = False
                if problem.apply_jump is not None and np.any(jump_k == k):
                    y = _apply_jump(problem, t, y.copy(), batched)
                    jumped = True
                if special or jumped:
                    # kink/jump at this node: re-evaluate with the time nudged into the next step
                    f_raw = raw(k, 0.0, y, t + tiny, sat_lo, sat_hi) if k < n_grid else fe_raw
                else:
                    f_raw = fe_raw
                new_lo, new_hi = masks(y, f_raw)
                if k < n_grid and nb and (np.any(new_lo != sat_lo) or np.any(new_hi != sat_hi)):
                    f_raw = raw(k, 0.0, y, t + tiny, new_lo, new_hi)  # counters (lost, departed) see the new masks
                sat_lo, sat_hi = new_lo, new_hi
                f = clamp(f_raw, sat_lo, sat_hi)
                if not alive.all():
                    f = np.where(alive[:, None], f, 0.0)
                tick(t)
        except KeyboardInterrupt:
            status, message = Status.INTERRUPTED, f"interrupted at t = {t:.9g} s; the part computed so far is returned"
    if status == Status.SUCCESS and not alive.all():
        status = Status.FAILED
        message = (f"{int((~alive).sum())} of {B} member(s) had a non-finite state (first at t = "
                   f"{np.nanmin(t_failed):.9g} s); they were frozen, the others completed")
    tick.final(t)
    ty = np.array(out_t)
    yy = np.array(out_y).reshape((len(out_t), B, n))
    if batched:
        for b in np.flatnonzero(~alive):
            yy[ty > t_failed[b], b, :] = np.nan
    else:
        yy = yy[:, 0, :]
    settings = dict(step_s=h, step_requested_s=float(step_s), n_grid_steps=n_grid, delay_max_s=dmax,
                    ring_segments=M, batch_size=B if batched else None)
    if batched:
        settings["member_status"] = [Status.SUCCESS.value if a else Status.FAILED.value for a in alive]
        settings["member_t_failed_s"] = t_failed.tolist()
    return DDESolution(ty, yy, status, message, t, k, 0, nfev, n_clamp, 0, h, h,
                       _time.perf_counter() - wall0, "RK4-fixed", settings)


def _apply_jump(problem, t, y, batched):
    if batched:
        return np.asarray(problem.apply_jump(t, y), dtype=float).reshape(y.shape)
    return np.asarray(problem.apply_jump(t, y[0]), dtype=float)[None, :]
