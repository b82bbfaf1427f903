"""Adaptive method of steps for DDEs with many constant delays.

Design (order claims are checked in ``tests/test_dde_convergence.py``):

* Embedded explicit Runge--Kutta pairs: ``"RK45"`` (Dormand--Prince 5(4),
  the pair of :func:`scipy.integrate.solve_ivp`) and ``"RK23"``
  (Bogacki--Shampine 3(2)).  Error control in the max norm,
  ``|err_i| <= atol_i + rtol |y_i|`` for every component (not the RMS norm
  of SciPy, which lets one queue among a thousand flows be inaccurate).
  Next step ``0.9 err^(-1/(q+1))`` times the last, between 0.2x and 5x,
  and no growth right after a rejected attempt (Hairer, Norsett & Wanner,
  Solving ODEs I, II.4).
* The past is a cubic Hermite spline through the accepted steps
  (:mod:`ecocc.dde.history`): interpolation error ``O(h^4)``, so with
  ``RK45`` a delayed problem converges with order 4 (5 without delays) and
  with ``RK23`` order 3.  The step is accepted only if that interpolation
  error, estimated at mid-step against the pair's continuous extension, is
  within tolerance too, for every component read through a delay.
* Steps never exceed the smallest positive delay: every delayed argument
  lies in the accepted past (no extrapolation, no iteration).
* Breakpoints (flow start/stop, cross-traffic switching, the initial time
  and their images ``t_b + d`` through the delays) are stepped onto.
* Bounded components (queues in ``[0, buffer]``) are projected: when a free
  component would leave its interval inside a step, the crossing is located
  on the step's Hermite interpolant, the step is retaken to end there, the
  component is set to the bound and held (derivative clamped) while its raw
  derivative points outward.  A held component whose raw derivative turns
  inward inside a step (a queue that starts to fill again) ends the step
  there too (root of the raw derivative's linear interpolant over the step),
  so the release is located rather than deferred to the end of the step -- unless the inward flow
  the clamp removes before it is negligible against the step's tolerance
  (:func:`ecocc.dde.history.release_matters`): roots of round-off otherwise stalled runs started at the
  equilibrium rate with an empty queue.
* Levels of a free bounded component where ``rhs`` kinks or jumps (``DDEProblem.level_comps``: RED's drop
  fraction of the current queue at ``min_th`` and ``max_th``) end a step as a bound crossing does: located on
  the step's Hermite interpolant, the step retaken to end there (the component is not held), unless the step
  starts within its tolerance of the level.  A step straddling such a kink was accepted before, and its dense
  output of the lost counter dipped below the step's start (2.7e-5 packets; docs/notes/redlevels.md).
* Queue events are predicted before each step (not one retaken at a located event): a free bounded
  component's last step's cubic, extrapolated, ends the step where it reaches ``PREDICT_MARGIN`` (0.1)
  tolerances inside its lower bound (held there as at a located crossing), and a held component at its lower
  bound whose raw derivative, extrapolated through its last four accepted values, comes within half the
  negligible size (:func:`ecocc.dde.history.release_negligible`) of turning inward ends the step there (and is
  released at its end).  A prediction that overshoots is located and retaken as before; it only saves the
  attempts thrown away to locate (AECP on 1,000 flows: 43 % fewer, docs/notes/xpred2.md).  The compiled
  single-run kernel predicts the same, statement for statement, so both take the same steps.
* Output at ``t_eval`` uses the pair's own continuous extension (as
  ``solve_ivp``), bounded components clipped to their interval.
* Output samples of bounded components go through the problem's projection
  (``DDEProblem.project_state``), so a model that books clipped volume (the
  network queue: lost and departed packets) keeps its conservation law at
  every sample, not only at step ends.
* Status is honest: ``success``; ``failed`` on a non-finite state (with the
  time and the component), on step-size underflow (no step that ``t`` can
  resolve, 64 ulp of ``t``, meets the tolerance, or ``max_step`` or the
  smallest delay are below 16 ulp of ``t``: the message says where and which)
  on ``max_steps`` and when the stored history would need more memory than ``max_history_gib`` (a step
  size that collapsed, as a solution that blows up makes it, fills the window of the past with ever more
  steps: the message gives the time, the history's size, the step size and the largest ``|state|``);
  ``interrupted`` on Ctrl-C (the part computed so far is
  returned).  ``inaccurate`` is kept for solvers that accept steps at the
  minimum step size; this one no longer does (it used to, and crawled at 64
  ulp per step to ``max_steps``).
* Every option is validated (:mod:`ecocc.dde.options`): a bad one raises
  :class:`ecocc.errors.InputError` before anything runs.
"""
from __future__ import annotations

import enum
import math
import time as _time
from dataclasses import dataclass, field

import numpy as np

from .history import (HOLD_BAND_REL, HOLD_CAP, PREDICT_MARGIN, HermiteHistory, HistoryLimit, add_images, cubic_end, derivative_fit,
                      first_crossing, hermite, limit_message, nudge, pop_images, release_matters, release_negligible,
                      segment_tail, skip_images)
from .options import DEFAULT_MAX_HISTORY_GIB
from .problem import DDEProblem, Throttled


class Status(str, enum.Enum):
    """Outcome of a solver run (a ``str``, so it compares equal to ``"success"`` etc.)."""
    SUCCESS = "success"
    INACCURATE = "inaccurate"
    FAILED = "failed"
    INTERRUPTED = "interrupted"


def max_steps_message(max_steps: int, t_reached: float, t0: float, n_steps: int, delay_min_s: float,
                      unit: str = " s") -> str:
    """The failure message of a run stopped by ``max_steps`` (every adaptive solver's), with the mean step.

    Parameters
    ----------
    max_steps : int
        The bound that stopped the run.
    t_reached, t0 : float
        Where the run stopped and where it started (seconds).
    n_steps : int
        Accepted steps.
    delay_min_s : float
        The smallest positive delay (seconds; ``inf`` for none).
    unit : str
        The time unit as written after a number (``" s"``; ``""`` for a user's DDE, whose time has none).

    Returns
    -------
    str
        The message; where the mean step is below a thousandth of the smallest delay, it says what such steps
        usually mean (a discontinuity of the right-hand side the solution stays on: a sliding mode).
    """
    mean = (t_reached - t0) / n_steps if n_steps else math.nan
    msg = f"max_steps = {max_steps} reached at t = {t_reached:.9g}{unit} (mean step {mean:.3g}{unit}"
    msg += f", smallest delay {delay_min_s:.3g}{unit})" if math.isfinite(delay_min_s) else ")"
    if math.isfinite(delay_min_s) and mean < 1e-3 * delay_min_s:
        # measured: Scalable TCP x 1e3 on a 1e7 packets/s RED link, its queue pinned at max_th from t = 0.536 ms,
        # mean step 2.7e-9 s against a smallest delay of 1e-4 s, before max_th became the queue's bound
        # (docs/notes/redlevels.md); x' = -sign(x) in the tests
        msg += ("; steps this short usually mean the solution stays on a discontinuity of the right-hand side "
                "that the solvers do not hold, crossing it at every step: a sliding mode (a queue's bounds, "
                "RED's max_th among them, are held; README, Robustness)")
    return msg


@dataclass
class DDESolution:
    """Output of a solver run: samples, status and counters."""

    t: np.ndarray
    y: np.ndarray
    status: Status
    message: str
    t_reached: float
    n_steps: int = 0
    n_rejected: int = 0
    nfev: int = 0
    n_clamp_events: int = 0
    n_inaccurate_steps: int = 0
    min_step: float = math.nan
    max_step: float = math.nan
    wall_s: float = 0.0
    method: str = ""
    settings: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status == Status.SUCCESS


_TABLEAUX = {
    "RK45": dict(
        C=np.array([0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1]),
        A=[[], [1 / 5], [3 / 40, 9 / 40], [44 / 45, -56 / 15, 32 / 9],
           [19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729],
           [9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656]],
        B=np.array([35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84]),
        E=np.array([-71 / 57600, 0, 71 / 16695, -71 / 1920, 17253 / 339200, -22 / 525, 1 / 40]),
        # continuous extension with Shampine's (1986) optimal c_6, as scipy.integrate.RK45.P
        P=np.array([
            [1, -8048581381 / 2820520608, 8663915743 / 2820520608, -12715105075 / 11282082432],
            [0, 0, 0, 0],
            [0, 131558114200 / 32700410799, -68118460800 / 10900136933, 87487479700 / 32700410799],
            [0, -1754552775 / 470086768, 14199869525 / 1410260304, -10690763975 / 1880347072],
            [0, 127303824393 / 49829197408, -318862633887 / 49829197408, 701980252875 / 199316789632],
            [0, -282668133 / 205662961, 2019193451 / 616988883, -1453857185 / 822651844],
            [0, 40617522 / 29380423, -110615467 / 29380423, 69997945 / 29380423]]),
        err_order=4,
    ),
    "RK23": dict(
        C=np.array([0, 1 / 2, 3 / 4]),
        A=[[], [1 / 2], [0, 3 / 4]],
        B=np.array([2 / 9, 1 / 3, 4 / 9]),
        E=np.array([5 / 72, -1 / 12, -1 / 9, 1 / 8]),
        P=np.array([[1, -4 / 3, 5 / 9], [0, 1, -2 / 3], [0, 4 / 3, -8 / 9], [0, -1, 1]]),  # as scipy RK23.P
        err_order=2,
    ),
}
METHODS = tuple(_TABLEAUX)


class _Evaluator:
    """Evaluates the right-hand side with delayed values looked up."""

    def __init__(self, problem: DDEProblem, hist: HermiteHistory):
        self.p = problem
        self.hist = hist
        self.nfev = 0
        self.plans = []
        for lk in problem.lookups:
            d = np.asarray(lk.delays, dtype=float)
            zero = np.flatnonzero(d == 0)
            pos = np.flatnonzero(d > 0)
            # constant history (the default): its values are fixed, gather them once
            y0pos = None if problem.history is not None else np.asarray(problem.y0, dtype=float)[lk.comps[pos]]
            self.plans.append((lk.comps, d, zero, lk.comps[zero], pos, lk.comps[pos], d[pos], y0pos))
        # components read through a positive delay (and used by the laws: DDEProblem.delayed_read): their
        # history must be accurate
        self.delayed_comps = problem.delayed_checked()
        b = problem.bounded
        self.bidx = b
        self.lo = problem.lower
        self.hi = problem.upper

    def lookups(self, s, y, nudge):
        out = []
        t0 = self.p.t0
        extra = self.p.state_delays(s, y) if self.p.state_delays is not None else None
        for k, (comps, d, zero, czero, pos, cpos, dpos, y0pos) in enumerate(self.plans):
            z = np.empty(comps.shape[0])
            if zero.size:
                z[zero] = y[czero]
            if pos.size:
                if extra is not None and extra[k] is not None:
                    # state-dependent part (>= 0: a stage's queue may sit a hair below zero)
                    tau = s - (dpos + np.maximum(np.asarray(extra[k], dtype=float)[pos], 0.0))
                else:
                    tau = s - dpos
                tsel = tau + nudge
                before = tsel < t0
                if y0pos is not None and before.any():
                    # constant history: evaluate the stored past everywhere (the entries
                    # before t0 read the first segment, harmlessly) and overwrite them;
                    # elementwise identical to evaluating the two subsets apart
                    vals = self.hist.eval(tau, cpos, np.maximum(tsel, t0))
                    z[pos] = np.where(before, y0pos, vals)
                elif before.any():
                    vals = np.empty(pos.size)
                    vals[before] = self.p.history_values(tau[before], cpos[before])
                    after = ~before
                    if after.any():
                        vals[after] = self.hist.eval(tau[after], cpos[after], tsel[after])
                    z[pos] = vals
                else:
                    z[pos] = self.hist.eval(tau, cpos, tsel)
            out.append(z)
        return out

    def raw(self, s, y, nudge, sat_lo, sat_hi):
        self.nfev += 1
        Z = self.lookups(s, y, nudge)
        # piecewise-constant inputs (cross traffic, flow activity) must read the
        # side of a breakpoint that lies inside the step: such problems set
        # ``nudge_time``; smooth time dependence gets the exact stage time
        t_arg = s + nudge if self.p.nudge_time else s
        return np.asarray(self.p.rhs(t_arg, y, Z, sat_lo, sat_hi), dtype=float)

    def clamp(self, f, sat_lo, sat_hi):
        if self.bidx.size == 0:
            return f
        fb = f[self.bidx]
        fb = np.where(sat_lo, np.maximum(fb, 0.0), fb)
        fb = np.where(sat_hi, np.minimum(fb, 0.0), fb)
        f = f.copy()
        f[self.bidx] = fb
        return f

    def masks(self, y, f_raw, hmin=0.0):
        if self.bidx.size == 0:
            e = np.zeros(0, dtype=bool)
            return e, e
        yb, fb = y[self.bidx], f_raw[self.bidx]
        # a component within round-off of its bound counts as on it (a step that
        # ended a hair above an empty queue must not run free past zero); so does one
        # that its derivative carries across the bound within 4 minimum steps: that
        # crossing cannot be located (a retaken step would be shorter than the smallest
        # step), and a free step would run the queue far past the bound and the
        # dynamics with it (a Symbiosis queue went to -787 packets in one step)
        slack = np.maximum(1e-12 * np.maximum(1.0, np.abs(yb)), 4.0 * hmin * np.abs(fb))
        return (yb <= self.lo + slack) & (fb <= 0), (yb >= self.hi - slack) & (fb >= 0)


class _StopFlag:
    """First Ctrl-C sets a flag (the solver stops cleanly after the current
    step and saves its state); a second one raises KeyboardInterrupt.  Only
    installed in the main thread."""

    def __init__(self):
        import signal
        import threading
        self.raised = False
        self._old = None
        if threading.current_thread() is threading.main_thread():
            self._signal = signal
            self._old = signal.signal(signal.SIGINT, self._handler)

    def _handler(self, signum, frame):
        if self.raised:
            raise KeyboardInterrupt
        self.raised = True

    def restore(self):
        if self._old is not None:
            self._signal.signal(self._signal.SIGINT, self._old)
            self._old = None


class _Checkpoint:
    """Solver state saved to an ``.npz`` file every ``every_s`` seconds of wall
    time and on Ctrl-C, so that a long run resumes where it stopped."""

    KEYS = ("t", "y", "f_raw", "sat_lo", "sat_hi", "h", "ip", "ij", "ie", "T", "Y", "FA", "FB", "out_t", "out_y",
            "counters", "hminmax", "nfev", "pred_ok", "pred_c2", "pred_c3", "dv_t", "dv", "dv_n", "dbp", "dbw")

    def __init__(self, path, every_s, signature):
        from pathlib import Path
        self.path = Path(path)
        self.every_s = float(every_s)
        self.signature = np.asarray(signature, dtype=float)
        self._last = _time.perf_counter()

    def load(self):
        if not self.path.exists():
            return None
        with np.load(self.path) as d:
            sig = d["signature"]
            if sig.shape != self.signature.shape or not np.allclose(sig, self.signature, rtol=1e-12, atol=0):
                from ..errors import InputError
                raise InputError("checkpoint", str(self.path),
                                 "a checkpoint of this same problem and settings (delete the file to start over)")
            missing = [k for k in self.KEYS if k not in d]
            if missing:
                from ..errors import InputError
                raise InputError("checkpoint", str(self.path),
                                 f"a checkpoint written by this version of ecocc (it lacks {', '.join(missing)}: "
                                 "delete the file to start over)")
            return {k: d[k] for k in self.KEYS}

    def due(self):
        return _time.perf_counter() - self._last > self.every_s

    def save(self, **state):
        tmp = self.path.with_name(self.path.name + ".tmp.npz")
        np.savez(tmp, signature=self.signature, **state)
        tmp.replace(self.path)  # atomic: a crash never leaves half a checkpoint
        self._last = _time.perf_counter()

    def remove(self):
        self.path.unlink(missing_ok=True)


def _snap_to_bounds(problem, y, comps, levels):
    """Move bounded components that lie a hair inside their interval onto the bound, booked as the problem's
    projection books the same distance outside, with the opposite sign (a queue moved down onto zero adds
    the distance to the departures, one moved up onto its buffer takes it from the lost volume; exact for a
    projection that books linearly in the clipped distance, as :meth:`ecocc.system.NetworkSystem.project`;
    a plain clip books nothing).

    Parameters
    ----------
    problem : DDEProblem
        Its ``project_state`` gives the booking.
    y : numpy.ndarray
        State, shape ``(n,)``.
    comps : numpy.ndarray
        State indices of the components to move (int).
    levels : numpy.ndarray
        Their bounds (same units as the components).

    Returns
    -------
    numpy.ndarray
        The moved state (a new array).
    """
    on = y.copy()
    on[comps] = levels
    mirrored = on.copy()
    mirrored[comps] = levels + (levels - y[comps])  # the same distance outside
    return 2.0 * on - problem.project_state(mirrored)


def solve_dde(problem: DDEProblem, t_end: float, *, rtol: float = 1e-6, atol=1e-6, method: str = "RK45",
              max_step: float = math.inf, first_step: float | None = None, t_eval=None,
              record_steps: bool = False, max_steps: int = 10_000_000, progress=None,
              checkpoint=None, checkpoint_every_s: float = 30.0, keep_checkpoint: bool = False,
              max_history_gib: float = DEFAULT_MAX_HISTORY_GIB) -> DDESolution:
    """Integrate ``problem`` from ``problem.t0`` to ``t_end`` with an adaptive embedded Runge-Kutta pair.

    Parameters
    ----------
    problem : DDEProblem
        The problem (state, right-hand side, lookups, bounds, jumps and kinks).
    t_end : float
        End time, seconds (finite, > ``problem.t0``).
    rtol : float, optional
        Relative tolerance (>= :data:`ecocc.dde.options.RTOL_MIN`).
    atol : float or array_like, optional
        Absolute tolerance, one value or one per component (>= 0, in the component's units: packets,
        packets/s): ``|err_i| <= atol_i + rtol * |y_i|`` (``atol_i + rtol`` for a component that is a
        logarithm, :attr:`DDEProblem.log_components`).
    method : {"RK45", "RK23"}, optional
        The Runge-Kutta pair (Dormand-Prince 5(4) or Bogacki-Shampine 3(2)).
    max_step : float, optional
        Largest step in seconds (> 0, ``inf`` for none; the smallest positive delay caps it too).
    first_step : float or None, optional
        First step in seconds (> 0); None lets the solver choose.
    t_eval : array_like or None, optional
        Output times in seconds, non-decreasing in ``[t0, t_end]``; None: every accepted step.
    record_steps : bool, optional
        Also output every accepted step (added to ``t_eval``).
    max_steps : int, optional
        Largest number of accepted steps; a run whose step cap (smallest delay, ``max_step``) needs more
        is refused before it starts (status ``failed``), one that reaches it stops with status ``failed``.
    progress : callable or None, optional
        Called as ``progress(t)`` (``t`` in seconds) about every 0.2 s of wall time.
    checkpoint : str or path-like or None, optional
        Save the solver state there every ``checkpoint_every_s`` seconds and on
        Ctrl-C (the first Ctrl-C stops at the end of the current step; a second
        one aborts at once).  If the file exists (same problem and settings),
        the run resumes from it; it is removed when the run completes, unless
        ``keep_checkpoint``.
    checkpoint_every_s : float, optional
        Wall-clock time between checkpoint saves, seconds (> 0).
    keep_checkpoint : bool, optional
        Leave the checkpoint file after a complete run (the caller removes it once the results are
        safely stored, so a crash in between loses nothing).
    max_history_gib : float, optional
        Memory bound of the stored history (the Hermite past within 1.5 x the largest delay, or all of
        it with ``record_steps`` or ``t_eval=None``, so it bounds their output too), GiB (> 0, ``inf`` for none; default
        :data:`ecocc.dde.options.DEFAULT_MAX_HISTORY_GIB`).  A run whose history would need more stops
        with status ``failed``, the part computed so far returned, and a message giving the time, the
        history's size, the step size and the largest ``|state|``: a collapsing step size (a solution
        that blows up) otherwise fills all memory.

    Returns
    -------
    DDESolution
        Samples ``t`` (seconds) and ``y`` (shape ``(len(t), n)``), the status (``success``, ``failed``
        with the time and the reason in ``message``, ``interrupted`` with the part computed so far) and
        step counters.

    Raises
    ------
    InputError
        For a ``problem`` that is not a :class:`DDEProblem`, a non-finite or misshaped ``problem.y0``,
        an unknown ``method``, any option out of range (see :mod:`ecocc.dde.options`), or a checkpoint
        file written for another problem or other settings.
    """
    from . import options as opt
    from ..errors import InputError
    if not isinstance(problem, DDEProblem):
        raise InputError("problem", type(problem).__name__, "a DDEProblem")
    if not isinstance(method, str) or method not in _TABLEAUX:
        raise InputError("method", method, f"one of {METHODS}")
    rtol = opt.rtol(rtol)
    n = problem.n
    atol_v = opt.atol(atol, n)
    max_step = opt.max_step(max_step)
    first_step = opt.first_step(first_step)
    record_steps = opt.flag("record_steps", record_steps)
    max_steps = opt.integer("max_steps", max_steps, lo=1)
    max_history_gib = opt.max_history_gib(max_history_gib)
    progress = opt.callable_or_none("progress", progress)
    checkpoint_every_s = opt.real("checkpoint_every_s", checkpoint_every_s, lo=0.0, lo_open=True,
                                  allowed="a finite number of seconds > 0")
    t0 = float(problem.t0)
    t_end = opt.t_end(t_end, t0)
    t_eval = opt.t_eval(t_eval, t0, t_end)
    if problem.y0.shape != (n,) or not np.all(np.isfinite(problem.y0)):
        raise InputError("problem.y0", problem.y0 if problem.y0.size <= 8 else f"array of shape {problem.y0.shape}",
                         f"{n} finite numbers (one per state component)")
    names = list(problem.names) if problem.names is not None and len(problem.names) == n else None

    def cname(i):
        return f"component {int(i)}" + (f" ({names[int(i)]})" if names else "")

    tab = _TABLEAUX[method]
    C, A, B, E = tab["C"], tab["A"], tab["B"], tab["E"]
    Pd = tab["P"]  # the pair's continuous extension (as scipy.integrate.solve_ivp's dense output)
    half_pow = 0.5 ** np.arange(1, Pd.shape[1] + 1)
    n_st = len(C)
    expo = -1.0 / (tab["err_order"] + 1)
    delays = problem.positive_delays()
    dmin = float(delays.min()) if delays.size else math.inf
    dmax = float(delays.max()) if delays.size else 0.0
    sd_max = float(problem.state_delay_max_s) if problem.state_delays is not None else 0.0
    if t_eval is None:
        # every accepted step is output: the history keeps the whole run too (as with record_steps), so the
        # memory bound covers the output, which otherwise grew unbounded (1e7 steps x n values by max_steps)
        record_steps = True
    hist = HermiteHistory(t0, problem.y0, n, keep_s=(math.inf if record_steps or not math.isfinite(sd_max)
                                                     else 1.5 * (dmax + sd_max) + 1e-9),
                          max_bytes=opt.history_bytes(max_history_gib))
    ev = _Evaluator(problem, hist)
    dcomp = ev.delayed_comps
    bps = problem.breakpoints(t_end)
    bps = np.unique(np.concatenate([bps, [t_end]]))
    jumps = problem.jumps[(problem.jumps > t0) & (problem.jumps <= t_end)]
    ip = 0
    ij = 0

    t = t0
    y = problem.y0.astype(float).copy()
    if problem.apply_jump is not None and np.any(problem.jumps == t0):
        y = np.asarray(problem.apply_jump(t0, y), dtype=float)
        hist.Y[0] = y
    wall0 = _time.perf_counter()

    if t_eval is None:
        t_eval_arr = np.zeros(0)
    else:
        t_eval_arr = t_eval  # validated above: finite, increasing, in [t0, t_end]
    out_t, out_y = [], []
    ie = 0
    while ie < t_eval_arr.size and t_eval_arr[ie] <= t0:
        out_t.append(t_eval_arr[ie]); out_y.append(y.copy()); ie += 1
    if record_steps and (not out_t or out_t[-1] != t0):
        out_t.append(t0); out_y.append(y.copy())

    tiny = nudge
    cap = min(dmin, max_step)
    if (t_end - t0) / cap > max_steps:
        # a run that cannot finish within max_steps is refused before it starts (it used to run for hours)
        why = f"the smallest delay {dmin:.3g} s" if dmin <= max_step else f"max_step = {max_step:.3g} s"
        return DDESolution(np.array(out_t), np.array(out_y).reshape(len(out_t), n), Status.FAILED,
                           f"not started: {why} caps every step, so [{t0:g}, {t_end:g}] s needs at least "
                           f"{(t_end - t0) / cap:.3g} steps, more than max_steps = {max_steps}", t0, method=method)
    e0 = np.zeros(problem.bounded.size, dtype=bool)
    f_raw = ev.raw(t, y, tiny(t, 1.0), e0, e0)
    sat_lo, sat_hi = ev.masks(y, f_raw, 16 * np.finfo(float).eps * max(1.0, abs(t)))
    if sat_lo.any() or sat_hi.any():
        f_raw = ev.raw(t, y, tiny(t, 1.0), sat_lo, sat_hi)
    f = ev.clamp(f_raw, sat_lo, sat_hi)
    if not np.all(np.isfinite(f)):
        return DDESolution(np.array(out_t), np.array(out_y).reshape(len(out_t), n), Status.FAILED,
                           f"non-finite derivative at t = {t0}", t0, method=method)

    # a log component's error is relative already: its scale is atol + rtol (DDEProblem.log_components)
    logm = problem.log_mask()
    # initial step (Hairer's heuristic, simplified)
    if first_step is None:
        mag = np.where(logm, 1.0, np.abs(y))  # a log component's size is 1 in relative terms
        sc = atol_v + rtol * mag
        d0 = np.max(mag / sc)
        d1 = np.max(np.abs(f) / sc)
        h = 1e-6 if (d0 < 1e-5 or d1 < 1e-5) else 0.01 * d0 / d1
    else:
        h = float(first_step)
    h = min(h, max_step, dmin, t_end - t0)

    n_steps = n_rej = n_clamp = n_inacc = 0
    hmin_seen, hmax_seen = math.inf, 0.0
    status, message = Status.SUCCESS, "integration reached t_end"
    K = np.empty((n_st + 1, n))
    tick = Throttled(progress)
    retake_for_crossing = False
    rej_step = False  # an attempt of the current step was rejected
    # queue-event prediction (see the loop): per bounded component, whether its last step's cubic may be
    # extrapolated (pred_ok) and that cubic's second and third Taylor coefficients at the step's end; its raw
    # derivative at the last dv_n (<= 4) accepted points (times dv_t, newest first)
    nb = ev.bidx.size
    atol_b = atol_v[ev.bidx]
    # the levels where rhs kinks or jumps (DDEProblem.level_comps, bounded components), and each one's place
    # among the bounded components
    lv_c, lv_v = problem.level_comps, problem.level_values
    where_b = {int(c): i for i, c in enumerate(ev.bidx)}
    lv_b = np.array([where_b[int(c)] for c in lv_c], dtype=np.int64)
    pred_ok, pred_c2, pred_c3 = np.zeros(nb, dtype=bool), np.zeros(nb), np.zeros(nb)
    dv_t, dv = np.zeros(4), np.zeros((4, nb))
    dv_t[0], dv[0], dv_n = t, f_raw[ev.bidx], 1
    located_lo = located_hi = pred_rel = np.zeros(nb, dtype=bool)
    pred_negl = np.zeros(nb)
    # the pending breakpoints where a change of an upper-bound hold reaches the right-hand side (hold_images;
    # ascending in dbp[:dbn[0]], the earliest in dnext), as the compiled kernel's HOLD_IMAGES
    himg = problem.hold_images
    if himg is not None:
        himg = (np.asarray(himg[0], dtype=np.int64), np.asarray(himg[1], dtype=float),
                np.asarray(himg[2], dtype=np.int64))
    dbp, dbn, dnext = np.empty(HOLD_CAP if himg is not None else 1), np.zeros(1, dtype=np.int64), math.inf
    dbw = np.empty(dbp.size)  # their weights (history.skip_images)
    ckpt = None
    if checkpoint is not None:
        sig = np.concatenate([[n, t0, t_end, rtol, METHODS.index(method), max_step
                               if math.isfinite(max_step) else -1.0, t_eval_arr.size, bps.size,
                               float(problem.state_delays is not None)],  # a queueing-delay run is another run
                              atol_v, problem.y0.ravel(), t_eval_arr[[0, -1]] if t_eval_arr.size else []])
        ckpt = _Checkpoint(checkpoint, checkpoint_every_s, sig)
        st = ckpt.load()
        if st is not None:  # resume
            t, y, f_raw = float(st["t"]), st["y"].copy(), st["f_raw"].copy()
            sat_lo, sat_hi = st["sat_lo"].astype(bool), st["sat_hi"].astype(bool)
            f = ev.clamp(f_raw, sat_lo, sat_hi)
            h = float(st["h"])
            ip, ij, ie = int(st["ip"]), int(st["ij"]), int(st["ie"])
            m = st["T"].size
            hist.T = np.empty(max(2 * m, 256)); hist.T[:m] = st["T"]
            for name in ("Y", "FA", "FB"):
                arr = np.zeros((hist.T.size, n)); arr[:m] = st[name]; setattr(hist, name, arr)
            hist.m = m
            out_t = list(st["out_t"]); out_y = list(st["out_y"])
            n_steps, n_rej, n_clamp, n_inacc = (int(v) for v in st["counters"])
            hmin_seen, hmax_seen = (float(v) for v in st["hminmax"])
            ev.nfev = int(st["nfev"])
            pred_ok, pred_c2, pred_c3 = st["pred_ok"].astype(bool), st["pred_c2"].copy(), st["pred_c3"].copy()
            dv_t, dv, dv_n = st["dv_t"].copy(), st["dv"].copy(), int(st["dv_n"])
            dbn[0] = st["dbp"].size
            dbp[:dbn[0]] = st["dbp"]
            dbw[:dbn[0]] = st["dbw"]
            dnext = float(dbp[0]) if dbn[0] else math.inf

    def snapshot():
        m = hist.m
        return dict(t=t, y=y, f_raw=f_raw, sat_lo=sat_lo, sat_hi=sat_hi, h=h, ip=ip, ij=ij, ie=ie,
                    T=hist.T[:m], Y=hist.Y[:m], FA=hist.FA[:m], FB=hist.FB[:m], out_t=np.array(out_t),
                    out_y=np.array(out_y).reshape(len(out_t), n), counters=[n_steps, n_rej, n_clamp, n_inacc],
                    hminmax=[hmin_seen, hmax_seen], nfev=ev.nfev, pred_ok=pred_ok, pred_c2=pred_c2, pred_c3=pred_c3,
                    dv_t=dv_t, dv=dv, dv_n=dv_n, dbp=dbp[:dbn[0]].copy(),
                    dbw=dbw[:dbn[0]].copy())

    stop = _StopFlag() if ckpt is not None else None
    try:
        while t < t_end:
            while ip < bps.size and bps[ip] <= t + 1e-12 * max(1.0, abs(t)):
                ip += 1
            next_bp = bps[ip] if ip < bps.size else t_end
            hmin = 16 * np.finfo(float).eps * max(1.0, abs(t))
            h = min(h, max_step, dmin)
            if himg is not None:
                if dnext <= t + 1e-12 * max(1.0, abs(t)):
                    dnext = pop_images(dbp, dbw, dbn, t)
                if problem.empty_images is not None and dnext <= t + h:
                    # an emptying's image that this step straddles within rtol is no breakpoint (skip_images)
                    dnext = skip_images(dbp, dbw, dbn, t + h, h, rtol)
                next_bp = min(next_bp, dnext)
            hit_bp = False
            if t + h >= next_bp - hmin or t + 1.0001 * h >= next_bp:
                h = next_bp - t
                hit_bp = True
            if not hit_bp and h < hmin:
                # t + h would not move t (or by a few ulps only): a step-size underflow, never a silent
                # loop of zero-length steps
                if h >= max_step:
                    why = (f"max_step = {max_step:.3g} s is below the resolution of t there; "
                           "choose a larger max_step")
                elif h >= dmin:
                    why = (f"steps are capped at the smallest delay {dmin:.3g} s, which is below the "
                           "resolution of t there; the delays are too short for this time span")
                else:
                    why = ("the error control shrank the step below the resolution of t (the solution may be "
                           f"discontinuous or singular there, or rtol = {rtol:g} / atol too tight)")
                status, message = Status.FAILED, (
                    f"step size underflow at t = {t:.9g} s: step {h:.3g} s < {hmin:.3g} s (16 ulp of t); {why}")
                break
            # --- queue-event prediction (not for a step retaken to end at a located event): end the step where
            # a free component's last cubic, extrapolated, reaches PREDICT_MARGIN tolerances inside its lower
            # bound, or where a held empty component's raw derivative, extrapolated, comes within half the
            # negligible size (history.release_negligible) of turning inward, so that no attempt is thrown away
            # to locate the event.  A step that overshoots after all is located and retaken as before.
            predicted = False
            if nb and not retake_for_crossing:
                yb, fb = y[ev.bidx], f[ev.bidx]
                s_lo, s_rel = np.ones(nb), np.ones(nb)
                lev = ev.lo + PREDICT_MARGIN * (atol_b + rtol * np.abs(ev.lo))
                y1, f1 = cubic_end(yb, fb, pred_c2, pred_c3, h)
                for j in np.flatnonzero(pred_ok & ~(sat_lo | sat_hi) & (yb > lev) & (y1 < lev)):
                    s_lo[j] = first_crossing(yb[j], y1[j], fb[j], f1[j], h, lev[j])
                negl = release_negligible(h, atol_b, rtol, yb)
                if dv_n >= 3:
                    x = dv_t - dv_t[0]
                    c1, c2, c3 = derivative_fit(x[1], x[2], x[3], dv[0], dv[1], dv[2], dv[3], dv_n)
                    e1, g1 = cubic_end(dv[0], c1, c2, c3, h)
                    lev = -0.5 * negl
                    for j in np.flatnonzero(sat_lo & release_matters(dv[0], h, atol_b, rtol, yb) & (dv[0] < lev)
                                            & (e1 > lev)):
                        s_rel[j] = first_crossing(dv[0, j], e1[j], c1[j], g1[j], h, lev[j])
                s_star = min(float(s_lo.min()), float(s_rel.min()))
                if s_star * h > 4 * hmin and s_star < 1.0 - 1e-9:
                    # the components predicted to reach their bound are held there after the step as if it were
                    # retaken to end at their located crossing (below); those predicted to turn inward released
                    located_lo = s_lo <= s_star * (1 + 1e-9)
                    located_hi = np.zeros(nb, dtype=bool)
                    pred_rel = s_rel <= s_star * (1 + 1e-9)
                    pred_negl = negl
                    h = s_star * h
                    hit_bp = False
                    predicted = True
            # --- one Runge--Kutta step with error estimate (an overflow in a trial step is
            # handled below: the step is shrunk, or the run fails naming the component)
            K[0] = f
            with np.errstate(over="ignore", invalid="ignore"):
                for i in range(1, n_st):
                    yi = y + h * (np.dot(A[i], K[:i]) if len(A[i]) else 0.0)
                    c = C[i]
                    K[i] = ev.clamp(ev.raw(t + c * h, yi, (0.5 - c) * tiny(t, h), sat_lo, sat_hi), sat_lo, sat_hi)
                y_new = y + h * np.dot(B, K[:n_st])
                f_new_raw = ev.raw(t + h, y_new, -0.5 * tiny(t, h), sat_lo, sat_hi)
                K[n_st] = ev.clamp(f_new_raw, sat_lo, sat_hi)
                err_vec = h * np.dot(E, K[: n_st + 1])
            if not (np.all(np.isfinite(y_new)) and np.all(np.isfinite(err_vec))):
                if h > hmin * 4:
                    h *= 0.25
                    n_rej += 1
                    rej_step = True
                    continue
                bad = np.flatnonzero(~(np.isfinite(y_new) & np.isfinite(err_vec)))
                status, message = Status.FAILED, (
                    f"non-finite state at t = {t:.9g} s in {cname(bad[0])}"
                    + (f" and {bad.size - 1} other component(s)" if bad.size > 1 else "")
                    + f" even at the smallest step {h:.3g} s")
                break
            sc = atol_v + rtol * np.where(logm, 1.0, np.maximum(np.abs(y), np.abs(y_new)))
            # a zero scale (atol_i = 0 and y_i = 0) with a zero error is no error, with a nonzero one infinite
            with np.errstate(divide="ignore", invalid="ignore"):
                ratio = np.where(err_vec == 0, 0.0, np.abs(err_vec) / sc)
            err = float(np.max(ratio)) if n else 0.0
            if dcomp.size:
                # the Runge-Kutta estimate does not see the error of the Hermite history
                # that later steps read through the delays: bound it by comparing, at
                # mid-step, the Hermite segment with the pair's continuous extension
                Qd = K[: n_st + 1, dcomp].T @ Pd
                mid_dense = y[dcomp] + h * (Qd @ half_pow)
                mid_herm = hermite(0.5, h, y[dcomp], y_new[dcomp], f[dcomp], K[n_st, dcomp])
                dh = mid_dense - mid_herm
                with np.errstate(divide="ignore", invalid="ignore"):
                    err = max(err, float(np.max(np.where(dh == 0, 0.0, np.abs(dh) / sc[dcomp]))))
            if err > 1.0:
                # a step retaken to end at a bound crossing is error-controlled like any other (it was accepted
                # unchecked before): if it fails, a shorter step ends before the crossing, which is found again
                retake_for_crossing = False
                if h <= hmin * 4:
                    # step-size underflow: no step that t can resolve meets the tolerance (scipy's solve_ivp
                    # fails here too); accepting such steps would crawl at 64 ulp per step to max_steps
                    with np.errstate(divide="ignore", invalid="ignore"):
                        worst = int(np.argmax(np.where(err_vec == 0, 0.0, np.abs(err_vec) / sc)))
                    status, message = Status.FAILED, (
                        f"step size underflow at t = {t:.9g} s: the error estimate is {err:.3g} x the tolerance "
                        f"(largest in {cname(worst)}) even at the smallest step {h:.3g} s (<= 64 ulp of t); "
                        f"the solution may be discontinuous or singular there, or rtol = {rtol:g} / atol too tight")
                    break
                else:
                    n_rej += 1
                    rej_step = True
                    h *= max(0.2, 0.9 * err ** expo)
                    continue
            # --- bound crossings of free components inside the step
            if ev.bidx.size:
                yb = y_new[ev.bidx]
                free = ~(sat_lo | sat_hi)
                viol_lo = free & (yb < ev.lo)
                viol_hi = free & (yb > ev.hi)
                if not retake_for_crossing:
                    s_star = 1.0
                    fk = K[n_st]
                    s_cross = np.ones(ev.bidx.size)
                    for j in np.flatnonzero(viol_lo | viol_hi):
                        ci = ev.bidx[j]
                        level = ev.lo[j] if viol_lo[j] else ev.hi[j]
                        s_cross[j] = first_crossing(y[ci], y_new[ci], f[ci], fk[ci], h, level)
                        s_star = min(s_star, s_cross[j])
                    # a held component leaves its bound where its raw derivative turns inward: the root of
                    # the raw derivative's linear interpolant over the step -- unless the inward flow the
                    # clamp removes before it is negligible (history.release_matters: roots of round-off cut
                    # every step and stalled runs started at the equilibrium rate with an empty queue)
                    da, db = f_raw[ev.bidx], f_new_raw[ev.bidx]
                    for j in np.flatnonzero((sat_lo & (da <= 0) & (db > 0)) | (sat_hi & (db < 0) & (da >= 0))):
                        ci = ev.bidx[j]
                        if release_matters(da[j], h, atol_v[ci], rtol, y[ci]):
                            s_star = min(s_star, da[j] / (da[j] - db[j]))
                    # a free component carried across a level where rhs kinks or jumps (DDEProblem.level_comps:
                    # RED's drop fraction of the current queue) ends the retaken step at the located crossing,
                    # so that no step and no dense output straddles it, unless it starts the step within its
                    # tolerance of the level (at its kink already)
                    if lv_c.size:
                        ya = y[lv_c]
                        cross = (~(sat_lo | sat_hi)[lv_b] & ((ya < lv_v) != (y_new[lv_c] < lv_v))
                                 & (np.abs(ya - lv_v) > atol_v[lv_c] + rtol * np.abs(lv_v)))
                        for i in np.flatnonzero(cross):
                            ci = lv_c[i]
                            s_star = min(s_star, first_crossing(y[ci], y_new[ci], f[ci], fk[ci], h, lv_v[i]))
                    if s_star * h > 4 * hmin and s_star < 1.0 - 1e-9:
                        # the components whose crossing ends the retaken step: held at their bound after it
                        # (below), even when the retaken step's end lies a hair inside the interval
                        located_lo = viol_lo & (s_cross <= s_star * (1 + 1e-9))
                        located_hi = viol_hi & (s_cross <= s_star * (1 + 1e-9))
                        h = s_star * h
                        retake_for_crossing = True
                        predicted = False
                        continue
                if viol_lo.any() or viol_hi.any():
                    n_clamp += 1
                    y_new = problem.project_state(y_new)
            # a predicted step that landed inside the bounds ends at its events as a retaken one does
            was_crossing_retake = retake_for_crossing or predicted
            retake_for_crossing = False
            if nb:
                # the crossing prediction of the next step extrapolates this step's cubic (not across a
                # breakpoint or a jump, nor for a component held or projected in it)
                pred_c2, pred_c3 = segment_tail(y[ev.bidx], y_new[ev.bidx], f[ev.bidx], K[n_st, ev.bidx], h)
                pred_ok = ~(sat_lo | sat_hi | viol_lo | viol_hi) & (not hit_bp)
            # --- accept
            f_end = K[n_st]
            hist.append(t + h, y_new, f, f_end)
            if ie < t_eval_arr.size and t_eval_arr[ie] <= t + h:
                Q = K[: n_st + 1].T @ Pd
                while ie < t_eval_arr.size and t_eval_arr[ie] <= t + h:
                    s = (t_eval_arr[ie] - t) / h
                    out_t.append(t_eval_arr[ie])
                    yo = y + h * (Q @ (s ** np.arange(1, Q.shape[1] + 1)))  # the pair's continuous extension
                    if ev.bidx.size:
                        # the extension of a step that ended beyond a bound leaves it inside the step too: put
                        # it back with the problem's own projection, which books the clipped volume (a plain
                        # clip of the queue alone broke arrived = departed + lost + queue by up to 743 packets)
                        yo = problem.project_state(yo)
                    out_y.append(yo)
                    ie += 1
            n_steps += 1
            hmin_seen = min(hmin_seen, h)
            hmax_seen = max(hmax_seen, h)
            if himg is not None:
                # a component leaving its upper bound's band (HOLD_BAND_REL) in this step: the jump reaches the
                # right-hand side from there, located on the step's Hermite segment (as the compiled kernel)
                yb0, yb1 = y[ev.bidx], y_new[ev.bidx]
                lev = ev.hi * (1.0 - HOLD_BAND_REL)
                for j in np.flatnonzero((yb1 < lev) & (lev <= yb0)):
                    c = ev.bidx[j]
                    tc = t + h * first_crossing(y[c], y_new[c], K[0][c], K[n_st][c], h, lev[j])
                    dnext = add_images(dbp, dbw, dbn, himg[0], himg[1], tc, int(j), t_end, math.inf)
                # a free component crossing one of its levels in this step (level_comps: RED's min_th and
                # max_th, where the drop fraction kinks or jumps): the flows read that kink one backward delay
                # later (the retaken step ended at it, or the step started within its tolerance of it)
                if lv_c.size:
                    ya, yz = y[lv_c], y_new[lv_c]
                    for i in np.flatnonzero((ya < lv_v) != (yz < lv_v)):
                        c = lv_c[i]
                        tc = t + h * first_crossing(y[c], y_new[c], K[0][c], K[n_st][c], h, lv_v[i])
                        dnext = add_images(dbp, dbw, dbn, himg[0], himg[1], tc, int(lv_b[i]), t_end, math.inf)
            t_prev, t = t, (next_bp if hit_bp else t + h)
            y = y_new
            if record_steps:
                out_t.append(t); out_y.append(y.copy())
            # jumps at this breakpoint
            jumped = False
            while ij < jumps.size and jumps[ij] <= t + 1e-12 * max(1.0, abs(t)):
                if abs(jumps[ij] - t) <= 1e-9 * max(1.0, abs(t)) and problem.apply_jump is not None:
                    y = np.asarray(problem.apply_jump(t, y.copy()), dtype=float)
                    hist.append_jump(y)
                    jumped = True
                ij += 1
            if jumped:
                pred_ok = np.zeros(nb, dtype=bool)
            used_lo, used_hi = sat_lo, sat_hi
            moved = False  # a held component moved onto its bound below: the right-hand side at the moved state
            if hit_bp or jumped:
                f_raw = ev.raw(t, y, tiny(t, h), sat_lo, sat_hi)
            else:
                f_raw = f_new_raw
            sat_lo, sat_hi = ev.masks(y, f_raw, 16 * np.finfo(float).eps * max(1.0, abs(t)))
            if ev.bidx.size:
                # a component stays held while its raw derivative points outward (a held step does not move it),
                # and one that a step retaken to end at its located crossing brought to the bound is held too,
                # even when it lies a hair inside its interval: the Runge-Kutta end value of the retaken step is
                # not the Hermite interpolant the crossing was found on, and the round-off slack of ``masks``
                # (1e-12, or 4 minimum steps of its derivative) is smaller than the retaken step's error.  Left
                # free, the next step crossed at once, too early in it to be located, ran the whole step free
                # past the bound (projected at its end, but its Hermite segment, read through the delays,
                # dipped below zero): an error the error control never saw, 2.6e-6 of PE-TCP's aggregate rate
                # at rtol 1e-11 (docs/notes/accuracy.md).  "A hair": within 10 x the component's tolerance.
                fb_raw, yb = f_raw[ev.bidx], y[ev.bidx]
                keep_lo, keep_hi = used_lo, used_hi
                if was_crossing_retake:
                    keep_lo, keep_hi = keep_lo | located_lo, keep_hi | located_hi
                near_lo = yb - ev.lo <= 10 * (atol_v[ev.bidx] + rtol * np.abs(ev.lo))
                near_hi = ev.hi - yb <= 10 * (atol_v[ev.bidx] + rtol * np.abs(ev.hi))
                sat_lo = sat_lo | (keep_lo & near_lo & ~sat_hi & (fb_raw <= 0))
                sat_hi = sat_hi | (keep_hi & near_hi & ~sat_lo & (fb_raw >= 0))
                if predicted:
                    # a step predicted to end where a held component's raw derivative comes within half the
                    # negligible size of turning inward releases it if it is within that size (as a step retaken
                    # to end at the located root does); held on, the next step would carry the release unlocated
                    sat_lo = sat_lo & ~(pred_rel & (fb_raw >= -pred_negl))
                # a held component sits exactly on its bound: moved there from a hair inside, with the
                # problem's booking (the history's last node too).  Held a hair inside, a drop-tail queue was
                # not "full" for the loss signal (Reno drop-tail's queue error grew from 1.8e-3 to 0.26 packets)
                off = (sat_lo & (yb != ev.lo)) | (sat_hi & (yb != ev.hi))
                if off.any():
                    y = _snap_to_bounds(problem, y, ev.bidx[off], np.where(sat_lo, ev.lo, ev.hi)[off])
                    hist.Y[hist.m - 1] = y
                    moved = True
            if himg is not None and ev.bidx.size:
                # released at t from its upper bound, a hair below it, by a step that ended at its located or
                # predicted release (the held step's clamped derivative turned inward inside the step): back onto
                # the bound and its segment flat, so that the history the jump reads (full within HOLD_BAND_REL,
                # far inside the tolerance) keeps it full until the release (as the compiled kernel;
                # docs/notes/holdimages.md).  Not after any other held step: one whose release, too early in it
                # to matter (release_matters), was not retaken ended below the bound by the true outflow since
                # the release (3.7e-4 packets of a slow release on symbiosis-vs-reno), which the put-back undid,
                # keeping the buffer full for 0.44 ms too long: Reno's rate 2.5e-1 off a tight run, not 4.4e-5
                yb = y[ev.bidx]
                back = (was_crossing_retake & used_hi & ~sat_hi & (yb < ev.hi)
                        & (ev.hi - yb <= 10 * (atol_v[ev.bidx] + rtol * np.abs(ev.hi))))
                if back.any():
                    # the hair is volume that left at the capacity after the true release: taken back from the
                    # component that counts it (a network link's departures, hold_images[2])
                    y = y.copy()
                    y[himg[2][back]] -= ev.hi[back] - yb[back]
                    y[ev.bidx[back]] = ev.hi[back]
                    hist.Y[hist.m - 1] = y
                    hist.FB[hist.m - 2, ev.bidx[back]] = 0.0
                    moved = True
                for j in np.flatnonzero(sat_hi & ~used_hi):  # held at the bound from t: the jump is at t
                    dnext = add_images(dbp, dbw, dbn, himg[0], himg[1], t, int(j), t_end, math.inf)
                if problem.empty_images is not None:
                    # held at the lower bound from t: a kink at t, the readers' second derivatives jumping by the
                    # weight times the outflow rate (DDEProblem.empty_images; skipped where a step straddles it
                    # within rtol), as the compiled kernel
                    for j in np.flatnonzero(sat_lo & ~used_lo):
                        dnext = add_images(dbp, dbw, dbn, himg[0], himg[1], t, int(j), t_end,
                                           float(problem.empty_images[j] * abs(f_raw[ev.bidx[j]])))
            if moved or np.any(sat_lo != used_lo) or np.any(sat_hi != used_hi):
                # outputs that depend on the masks (volume lost at a full buffer,
                # departures of an empty queue) must see the masks of the new step
                f_raw = ev.raw(t, y, tiny(t, h), sat_lo, sat_hi)
            f = ev.clamp(f_raw, sat_lo, sat_hi)
            # the raw derivatives at the last accepted points, for the release prediction (from the breakpoint
            # on, after one: the derivative jumps there)
            dv_n = 1 if hit_bp or jumped else min(dv_n + 1, 4)
            dv_t[1:], dv[1:] = dv_t[:-1].copy(), dv[:-1].copy()
            dv_t[0], dv[0] = t, f_raw[ev.bidx]
            gmax = 1.0 if rej_step else 5.0  # no growth right after a rejected attempt
            rej_step = False
            if err > 0:
                h = (t - t_prev) * min(gmax, max(0.2, 0.9 * err ** expo))
            else:
                h = (t - t_prev) * gmax
            if n_steps >= max_steps:
                status, message = Status.FAILED, max_steps_message(max_steps, t, t0, n_steps, dmin)
                break
            tick(t)
            if ckpt is not None and (stop.raised or ckpt.due()):
                ckpt.save(**snapshot())
                if stop.raised:
                    status, message = Status.INTERRUPTED, (
                        f"interrupted at t = {t:.9g} s; the part computed so far is returned and the state is "
                        f"saved in {ckpt.path}: run again to resume")
                    break
    except KeyboardInterrupt:
        status, message = Status.INTERRUPTED, f"interrupted at t = {t:.9g} s; the part computed so far is returned"
    except HistoryLimit as full:
        # the step from t was accepted but cannot be stored: the run ends at t (outputs up to t kept)
        ay = np.abs(y)
        worst = int(np.argmax(ay)) if n else 0
        status, message = Status.FAILED, limit_message(
            t, full.nodes, full.nbytes, hist.max_bytes, h, hmax_seen, float(ay[worst]) if n else 0.0, hist.keep_s,
            which=f" ({cname(worst)})" if n else "")
    finally:
        if stop is not None:
            stop.restore()
    if ckpt is not None and status in (Status.SUCCESS, Status.INACCURATE) and t >= t_end and not keep_checkpoint:
        ckpt.remove()
    if status == Status.SUCCESS and n_inacc:
        status = Status.INACCURATE
        message = (f"{n_inacc} step(s) accepted at the minimum step size with the error above tolerance; "
                   "results may not meet rtol/atol")
    tick.final(t)
    ty = np.array(out_t)
    yy = np.array(out_y).reshape(len(out_t), n)
    if record_steps and t_eval_arr.size:
        order = np.argsort(ty, kind="stable")
        ty, yy = ty[order], yy[order]
    return DDESolution(ty, yy, status, message, t, n_steps, n_rej, ev.nfev, n_clamp, n_inacc,
                       hmin_seen, hmax_seen, _time.perf_counter() - wall0, method,
                       dict(rtol=rtol, atol=np.asarray(atol).tolist(), max_step=max_step,
                            max_history_gib=max_history_gib, n_breakpoints=int(bps.size), delay_min_s=dmin,
                            delay_max_s=dmax,
                            state_dependent_delays=problem.state_delays is not None))
