"""What a delay-differential problem tells the solvers.

A problem has a state vector ``y`` of size ``n`` and a right-hand side

    dy/dt = rhs(t, y, Z, sat_lo, sat_hi)

where ``Z`` is a list with one array per :class:`Lookup`: ``Z[k][j]`` is
``y[lookup.comps[j]](t - lookup.delays[j])`` (a zero delay reads the current
state).  ``rhs`` returns the *raw* derivative; components listed in
``bounded`` are kept in ``[lower, upper]`` by the solver (projection with the
crossing located, see :mod:`ecocc.dde.adaptive`).  ``sat_lo``/``sat_hi`` tell
``rhs`` which bounded components are held at a bound during the current step
(so that it can count, say, the volume dropped at a full buffer).

Known discontinuities are explicit:

* ``jumps``: times at which ``apply_jump(t, y)`` changes the state (a flow
  starts or stops).  The solvers step onto them.
* ``kinks``: times at which ``rhs`` changes non-smoothly without a state jump
  (cross traffic switching).
* ``level_comps``, ``level_values``: levels of the current state at which
  ``rhs`` kinks or jumps (RED's drop fraction of the current queue); the
  adaptive solver ends a step at a located crossing of one.
* Jumps and kinks, and the initial time (the constant history rarely matches the
  derivative at ``t0``), propagate through every delay: ``t_b + d`` is a
  breakpoint too (to depth ``breakpoint_depth``).

State-dependent delays (adaptive solver only): ``state_delays(t, y)``
returns, per lookup, ``None`` or an array of extra delays (seconds, >= 0,
one per entry) added to the entry's constant delay at the current time and
state (a round trip that includes the queueing delay).  Only entries with a
positive constant delay get the extra part, so the constant delays still
bound every delay from below (steps capped at the smallest one read the
accepted past only).  ``state_delay_max_s`` bounds the extra part (the past
is kept that much longer; ``inf`` keeps all of it).  Breakpoints propagate
through the constant parts only: where the state-dependent part moves the
image of a breakpoint, the error control meets the low smoothness with
smaller steps instead of a located breakpoint (as jitcdde, which locates
none).

Batch solvers call ``rhs`` with ``y`` of shape ``(B, n)`` and lookups whose
delays may be ``(B, m)``; ``rhs`` must broadcast over leading axes.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

#: the least breakpoint budget of :meth:`DDEProblem.breakpoints` (its ``max_count=None``): the propagation of a
#: level of up to this many breakpoints is always kept (the networks of the papers have a few flows and delays)
BREAKPOINT_MIN_COUNT = 1000


def sorted_unique(a) -> np.ndarray:
    """The sorted distinct values of a 1-D array: ``np.unique(a)`` for arrays without NaN.

    ``np.unique`` imports ``numpy.ma`` on its first call (NumPy 2: ``np.ma.is_masked``), about 10-15 ms of a
    process's start-up; a short run calls it on its set-up path (delays, breakpoints), so this sorts and
    drops repeats instead.  Unlike ``np.unique`` it keeps every NaN (the callers pass finite times,
    delays and indices).

    Parameters
    ----------
    a : array_like
        Values (any shape; flattened).

    Returns
    -------
    numpy.ndarray
        The distinct values, ascending (a new array; the input's dtype).
    """
    s = np.sort(np.ravel(a))
    if s.size < 2:
        return s
    return s[np.concatenate(([True], s[1:] != s[:-1]))]


class Throttled:
    """Call ``fn(t)`` at most every ``every_s`` seconds of wall time (progress bars).

    Parameters
    ----------
    fn : callable or None
        ``fn(t)`` with ``t`` the simulated time in seconds; None makes every call a no-op.
    every_s : float, optional
        Least wall-clock time between two calls, seconds.
    """

    def __init__(self, fn, every_s: float = 0.2):
        import time
        self.fn, self.every_s, self._clock = fn, every_s, time.perf_counter
        self._last = self._clock()

    def __call__(self, t):
        if self.fn is None:
            return
        now = self._clock()
        if now - self._last > self.every_s:
            self.fn(t)
            self._last = now

    def final(self, t):
        """Call ``fn(t)`` now, however recently it was called (the end of a run).

        Parameters
        ----------
        t : float
            Simulated time, seconds.
        """
        if self.fn is not None:
            self.fn(t)


@dataclass
class Lookup:
    """Delayed values a right-hand side needs: ``y[comps](t - delays)``.

    Parameters
    ----------
    comps : array_like of int
        State component indices, shape ``(m,)``.
    delays : array_like of float
        Delay of each entry, seconds (finite, >= 0; 0 reads the current state), shape ``(m,)`` or a batch
        ``(B, m)``.

    Raises
    ------
    InputError
        For a delay count that does not match ``comps``, or a negative or non-finite delay.
    """

    comps: np.ndarray
    delays: np.ndarray

    def __post_init__(self):
        self.comps = np.asarray(self.comps, dtype=np.int64)
        self.delays = np.asarray(self.delays, dtype=float)
        from ..errors import InputError
        if self.delays.shape[-1] != self.comps.shape[-1]:
            raise InputError("Lookup.delays", f"array of shape {self.delays.shape}",
                             f"one delay per component ({self.comps.shape[-1]})")
        if np.any(self.delays < 0) or not np.all(np.isfinite(self.delays)):
            raise InputError("Lookup.delays", self.delays.tolist() if self.delays.size <= 8 else "array",
                             "finite delays in seconds >= 0")

    def positive_delays(self) -> np.ndarray:
        """The distinct delays > 0 of the entries (flattened over a batch), sorted.

        Returns
        -------
        numpy.ndarray
            Seconds, ascending.
        """
        d = np.ravel(self.delays)
        return sorted_unique(d[d > 0])

    def delayed_comps(self) -> np.ndarray | None:
        """The components of the entries read through a positive delay (repeats allowed), or None for batch
        delays ``(B, m)`` (:meth:`DDEProblem.delayed_checked` leaves those lookups out).

        Returns
        -------
        numpy.ndarray of int or None
            State indices.
        """
        if np.ndim(self.delays) != 1:
            return None
        return self.comps[np.asarray(self.delays, dtype=float).reshape(-1) > 0]


class LazyLookup:
    """A :class:`Lookup` whose entries are built on first use of ``comps`` or ``delays``.

    A network's arrival lookup has one entry per (link, flow) pair and flow on the pair's link
    (sum over links of n_l^2: 9e7 entries, several GiB, at 100,000 flows on 1,000 links).  The NumPy solvers
    gather through the entries; the compiled kernels do not, and read only what :class:`DDEProblem` derives
    from them (:meth:`positive_delays`, :meth:`delayed_comps`), which the owner computes without the entries.

    Parameters
    ----------
    build : callable
        ``build() -> (comps, delays)``: the entries, as :class:`Lookup` takes them (called once, on first use).
    positive_delays : callable
        ``positive_delays() -> numpy.ndarray``: the distinct delays > 0 of the entries ``build`` gives, sorted.
    delayed_comps : callable
        ``delayed_comps() -> numpy.ndarray``: the components of the entries with a delay > 0 (any order,
        repeats allowed).

    The three must agree with each other exactly (the same floats): the compiled and the NumPy engines then see
    the same delays, breakpoints and checked components.  Assigning ``comps`` or ``delays`` builds the entries
    first (a batch replaces the delays by its members' stack).
    """

    def __init__(self, build, positive_delays, delayed_comps):
        self._build, self._pd, self._dc = build, positive_delays, delayed_comps
        self._lk = None

    @property
    def built(self) -> bool:
        """Whether the entries have been built."""
        return self._lk is not None

    def _entries(self) -> Lookup:
        if self._lk is None:
            comps, delays = self._build()
            self._lk = Lookup(comps, delays)
        return self._lk

    @property
    def comps(self) -> np.ndarray:
        """State component of each entry (int64; builds the entries)."""
        return self._entries().comps

    @comps.setter
    def comps(self, value):
        self._entries().comps = np.asarray(value, dtype=np.int64)

    @property
    def delays(self) -> np.ndarray:
        """Delay of each entry, seconds (builds the entries)."""
        return self._entries().delays

    @delays.setter
    def delays(self, value):
        self._entries().delays = np.asarray(value, dtype=float)

    def positive_delays(self) -> np.ndarray:
        """:meth:`Lookup.positive_delays`, without building the entries (until they are built).

        Returns
        -------
        numpy.ndarray
            Seconds, ascending.
        """
        if self._lk is not None:
            return self._lk.positive_delays()
        return np.asarray(self._pd(), dtype=float)

    def delayed_comps(self) -> np.ndarray | None:
        """:meth:`Lookup.delayed_comps`, without building the entries (until they are built).

        Returns
        -------
        numpy.ndarray of int
            State indices.
        """
        if self._lk is not None:
            return self._lk.delayed_comps()
        return np.asarray(self._dc(), dtype=np.int64)


@dataclass
class DDEProblem:
    """A delay-differential initial-value problem (see module docstring).

    Parameters
    ----------
    n : int
        Size of the state.
    rhs : callable
        ``rhs(t, y, Z, sat_lo, sat_hi)``: the raw derivative, broadcasting over leading axes of ``y``.
    y0 : array_like
        State at ``t0``, shape ``(n,)``.
    t0 : float, optional
        Start time, seconds.
    lookups : sequence of Lookup or LazyLookup, optional
        Delayed values ``rhs`` receives in ``Z``, one array per lookup.
    history : callable or None, optional
        ``history(t_array, comps) -> values`` for ``t < t0``; None: constant ``y0``.
    bounded : array_like of int, optional
        Components the solver keeps in ``[lower, upper]``.
    lower, upper : array_like of float, optional
        Bounds of the ``bounded`` components (broadcast to their shape; ``upper`` may be ``inf``).
    jumps : array_like of float, optional
        Times, seconds, at which ``apply_jump`` changes the state.
    apply_jump : callable or None, optional
        ``apply_jump(t, y) -> y`` at a jump time.
    kinks : array_like of float, optional
        Times, seconds, at which ``rhs`` changes non-smoothly without a state jump.
    breakpoint_depth : int, optional
        How many delays breakpoints are propagated through.
    names : sequence of str or None, optional
        Component names, for messages.
    nudge_time : bool, optional
        ``rhs`` depends on time only through piecewise-constant inputs (see the attribute comment).
    project : callable or None, optional
        ``project(y_raw) -> y``: how a state that left the bounds is put back (default: clip).
    state_delays : callable or None, optional
        ``state_delays(t, y) -> [None or array per lookup]``: extra delays, seconds (adaptive solver only).
    state_delay_max_s : float, optional
        Upper bound of the extra delays, seconds.
    log_components : array_like of int, optional
        Components that are the natural logarithm of a positive quantity (a rate stored as ``ln x``).  Their
        error is already relative (an error ``e`` in ``ln x`` is a relative error ``e`` in ``x``), so the error
        test is ``|err_i| <= atol_i + rtol``, not ``atol_i + rtol |ln x|``: the latter would depend on the
        unit of ``x`` and be about ``|ln x|`` (8 to 12 for rates of 1e3 to 1e5 packets/s) times looser.
    level_comps, level_values : array_like, optional
        Levels of the current state where ``rhs`` kinks or jumps: bounded component ``level_comps[i]`` (int) at
        ``level_values[i]`` (its units, packets for a queue).  The adaptive solver ends a step that carries a
        free component across one at the located crossing (RED's drop fraction of the current queue).
    hold_images : tuple of three arrays or None, optional
        ``(owner, delays, book)``: entry ``j`` is a delay ``delays[j]`` (seconds) after which a change of the hold
        of bounded component ``owner[j]`` (its position in ``bounded``) at its upper bound reaches ``rhs`` as a
        jump, and so does a crossing of one of its levels (``level_comps``) as a kink or a jump; ``book[i]`` is the
        component that counts the volume leaving bounded component ``i`` (a link's departures).  The adaptive
        solver ends steps at those images (:attr:`hold_images`).  None: none.
    empty_images : array_like of float or None, optional
        With ``hold_images``: a hold at the lower bound starting at ``t`` reaches ``rhs`` as a kink after the same
        delays, and the adaptive solver ends steps there too where the kink matters (:attr:`empty_images`): one
        weight per bounded component.  None: no such images.
    """

    n: int
    rhs: Callable
    y0: np.ndarray
    t0: float = 0.0
    lookups: Sequence[Lookup] = ()
    history: Callable | None = None  # history(t_array, comps) -> values, for t < t0
    bounded: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    lower: np.ndarray = field(default_factory=lambda: np.zeros(0))
    upper: np.ndarray = field(default_factory=lambda: np.zeros(0))
    jumps: np.ndarray = field(default_factory=lambda: np.zeros(0))
    apply_jump: Callable | None = None
    kinks: np.ndarray = field(default_factory=lambda: np.zeros(0))
    breakpoint_depth: int = 1
    names: Sequence[str] | None = None
    #: ``rhs`` depends on time only through piecewise-constant inputs: the
    #: solvers then pass a time nudged a hair into the current step, so that
    #: at a switching time the step before reads the old value and the step
    #: after the new one.  Leave False for smooth time dependence.
    nudge_time: bool = False
    #: optional ``project(y_raw) -> y``: how a state that left the bounds is put back
    #: (default: clip the bounded components).  Lets a model book the clipped
    #: volume (packets over a full buffer are lost, not destroyed).
    project: Callable | None = None
    #: optional ``state_delays(t, y) -> [None or array per lookup]``: extra delays (see module docstring)
    state_delays: Callable | None = None
    #: upper bound of the extra delays (seconds), for how much past to keep
    state_delay_max_s: float = 0.0
    #: components that are logarithms: error scale ``atol + rtol`` (see the parameter)
    log_components: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    #: optional: the components whose delayed values ``rhs`` actually uses (None: every component a lookup reads
    #: through a positive delay).  A lookup may gather more than the laws read (a network's feedback lookup
    #: gathers every link state and the queue, a signal may ignore the queue); only the history of the
    #: components read is error-checked at mid-step (:meth:`delayed_checked`)
    delayed_read: np.ndarray | None = None
    #: times, seconds, at which ``rhs`` jumps (not a kink) because a delayed read switches on -- the level-1
    #: images of the flows starting at t0 with no traffic before, through the delays their activity is read
    #: at (:meth:`ecocc.system.NetworkSystem.startup_jumps`): :meth:`breakpoints` keeps them whatever its
    #: budget (an unlocated jump costs rejected steps; the budget is for the many kinks)
    jump_images: np.ndarray = field(default_factory=lambda: np.zeros(0))
    #: levels of the current state at which ``rhs`` has a kink or a jump (a RED drop fraction of the current
    #: queue: ``min_th``, ``max_th``): bounded component ``level_comps[i]`` at ``level_values[i]``.  The adaptive solver
    #: ends a step that carries a free component across one at the located crossing, so that no step and no
    #: dense output straddles it
    level_comps: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    level_values: np.ndarray = field(default_factory=lambda: np.zeros(0))
    #: ``(owner, delays, book)``: a change at time ``t`` of the hold of bounded component ``owner[j]`` (its position
    #: in :attr:`bounded`) at its upper bound reaches ``rhs`` at ``t + delays[j]`` (seconds): a network link's loss
    #: signal jumps when its buffer fills or stops being full (drop-tail's ``max(0, 1 - C/y)``), and each (link,
    #: flow) pair reads it one backward delay later (:meth:`ecocc.system.NetworkSystem.hold_images`).  The adaptive
    #: solver ends steps there (:func:`ecocc.dde.history.add_images`), as the compiled kernel does
    #: (``ecocc.dde.integrator.HOLD_IMAGES``); straddled, the jump passed the error estimate with errors of 1-10 %
    #: in Reno's windows (docs/notes/holdimages.md).  A crossing of one of the component's levels
    #: (:attr:`level_comps`: RED's ``min_th``, where the drop fraction kinks) reaches ``rhs`` after the same delays
    #: and makes breakpoints there too.  A component released a hair below its upper bound by a step that ended at
    #: its located release goes back onto it, the volume taken from component ``book[i]`` (its departures).
    #: None: none
    hold_images: tuple | None = None
    #: with :attr:`hold_images`, per bounded component a weight ``w_i`` (per unit of the component): a hold at its
    #: lower bound starting at ``t`` reaches ``rhs`` as a kink at ``t + delays[j]`` too, where the second derivative
    #: of the components that read it jumps by ``w_i |f_i|`` (``f_i`` the component's raw derivative at ``t``): a
    #: signal linear in the delayed queue (PE-TCP's ``q/T``) kinks where the queue empties
    #: (:meth:`ecocc.system.NetworkSystem.empty_images`).  The adaptive solver ends steps at those images where
    #: ``w_i |f_i| h^3 > rtol`` (``h`` the step that ended at ``t``: the local error of a step straddling the kink),
    #: as the compiled kernel does (``ecocc.dde.integrator.EMPTY_IMAGES``); ``inf``: always.  None: none
    empty_images: np.ndarray | None = None

    def delayed_checked(self) -> np.ndarray:
        """The components whose Hermite history the adaptive solvers error-check at mid-step: those read through
        a positive delay by some lookup, restricted to :attr:`delayed_read` when it is given.

        Returns
        -------
        numpy.ndarray
            Sorted distinct component indices (int64).
        """
        dc = [c for c in (lk.delayed_comps() for lk in self.lookups) if c is not None]
        d = sorted_unique(np.concatenate(dc)) if dc else np.zeros(0, dtype=np.int64)
        if self.delayed_read is not None:
            d = d[np.isin(d, np.asarray(self.delayed_read, dtype=np.int64))]
        return np.asarray(d, dtype=np.int64)

    def log_mask(self) -> np.ndarray:
        """Tell which components are logarithms (:attr:`log_components`).

        Returns
        -------
        numpy.ndarray
            Boolean mask, shape ``(n,)``.
        """
        m = np.zeros(self.n, dtype=bool)
        m[np.asarray(self.log_components, dtype=np.int64)] = True
        return m

    def project_state(self, y):
        """Put the bounded components of ``y`` (shape ``(..., n)``) back in their interval.

        Parameters
        ----------
        y : numpy.ndarray
            Raw state, shape ``(..., n)``.

        Returns
        -------
        numpy.ndarray
            ``project(y)`` when the problem has its own projection, else a copy of ``y`` with the ``bounded``
            components clipped to ``[lower, upper]``.
        """
        if self.project is not None:
            return self.project(y)
        y = y.copy()
        y[..., self.bounded] = np.clip(y[..., self.bounded], self.lower, self.upper)
        return y

    def __post_init__(self):
        self.y0 = np.asarray(self.y0, dtype=float)
        self.bounded = np.asarray(self.bounded, dtype=np.int64)
        self.lower = np.broadcast_to(np.asarray(self.lower, dtype=float), self.bounded.shape).copy()
        self.upper = np.broadcast_to(np.asarray(self.upper, dtype=float), self.bounded.shape).copy()
        self.jumps = sorted_unique(np.asarray(self.jumps, dtype=float))
        self.kinks = sorted_unique(np.asarray(self.kinks, dtype=float))
        self.jump_images = sorted_unique(np.asarray(self.jump_images, dtype=float))
        lc = np.asarray(self.log_components)
        if lc.ndim != 1 or (lc.size and (lc.dtype.kind not in "iu" or lc.min() < 0 or lc.max() >= self.n)):
            from ..errors import InputError
            raise InputError("DDEProblem.log_components", lc.tolist() if lc.size <= 8 else f"array of shape {lc.shape}",
                             f"state component indices, integers in [0, n = {self.n})")
        self.log_components = lc.astype(np.int64)
        self.level_comps = np.asarray(self.level_comps, dtype=np.int64).ravel()
        self.level_values = np.asarray(self.level_values, dtype=float).ravel()
        if self.level_comps.shape != self.level_values.shape:
            from ..errors import InputError
            raise InputError("DDEProblem.level_values", f"{self.level_values.size} values",
                             f"one level per entry of level_comps ({self.level_comps.size})")
        if not np.isin(self.level_comps, self.bounded).all():
            from ..errors import InputError
            raise InputError("DDEProblem.level_comps", self.level_comps.tolist()[:8], "bounded components only")
        if self.empty_images is not None:
            w = np.asarray(self.empty_images, dtype=float) if not isinstance(self.empty_images, bool) else None
            if (w is None or w.shape != self.bounded.shape or np.isnan(w).any() or (w < 0).any()
                    or self.hold_images is None):
                from ..errors import InputError
                raise InputError("DDEProblem.empty_images", self.empty_images if w is None or w.size <= 8
                                 else f"array of shape {w.shape}",
                                 f"None, or with hold_images one weight >= 0 (inf: always) per bounded component "
                                 f"({self.bounded.size})")
            self.empty_images = w

    def positive_delays(self) -> np.ndarray:
        """List the distinct positive constant delays of all lookups (flattened over batches).

        Returns
        -------
        numpy.ndarray
            Sorted distinct delays > 0, seconds (empty without lookups).
        """
        if not self.lookups:
            return np.zeros(0)
        return sorted_unique(np.concatenate([lk.positive_delays() for lk in self.lookups]))

    def history_values(self, t: np.ndarray, comps: np.ndarray) -> np.ndarray:
        """Return the state before ``t0``: the user's ``history`` function, else the constant ``y0``.

        Parameters
        ----------
        t : numpy.ndarray
            Times before ``t0``, seconds.
        comps : numpy.ndarray
            State component indices, broadcast against ``t``.

        Returns
        -------
        numpy.ndarray
            ``history(t, comps)``, or ``y0[..., comps]`` broadcast against ``t`` (a fresh array).
        """
        if self.history is None:
            y0 = self.y0
            return np.broadcast_to(y0[..., comps], np.broadcast_shapes(np.shape(t), y0[..., comps].shape)).copy()
        return self.history(t, comps)

    def breakpoints(self, t_end: float, depth: int | None = None, max_count: int | None = None) -> np.ndarray:
        """List the breakpoints in ``(t0, t_end]``: ``t0``, jumps, kinks and their propagation through the delays.

        A breakpoint ``t_b`` propagates to ``t_b + d1 + ... + dk`` for ``k <= depth`` over the positive
        constant delays ``d``.

        Parameters
        ----------
        t_end : float
            End of the run, seconds.
        depth : int or None, optional
            Propagation depth; None uses ``breakpoint_depth``.
        max_count : int or None, optional
            Propagation stops at the first level that would hold more than this many breakpoints (that level
            and deeper ones are left out; the error control then meets them with smaller steps).  None: the
            number of steps the smallest delay forces anyway, ``(t_end - t0) / min(delays)``, at least
            :data:`BREAKPOINT_MIN_COUNT`.  Each breakpoint stepped onto costs a step, so the breakpoints then
            at most double the least number of steps: the depth-1 level of a network whose N flows all have
            different RTTs holds N breakpoints within the largest RTT, which made the step count, and the
            cost, grow as N^2 (10^5 steps in the first 0.5 s at N = 10^5 flows).  :attr:`jump_images` (jumps
            of the right-hand side, not kinks) are kept beyond the budget.

        Returns
        -------
        numpy.ndarray
            Sorted breakpoints, seconds, with points closer than 1e-12 relative merged.
        """
        depth = self.breakpoint_depth if depth is None else depth
        src = np.concatenate([[self.t0], self.jumps, self.kinks])
        src = sorted_unique(src[(src >= self.t0) & (src <= t_end)])
        delays = self.positive_delays()
        if max_count is None:
            max_count = BREAKPOINT_MIN_COUNT
            if delays.size and t_end > self.t0:
                max_count = max(max_count, int(math.ceil((t_end - self.t0) / float(delays[0]))))
        out = [src]
        level = src
        for _ in range(max(depth, 0)):
            if delays.size == 0 or level.size == 0:
                break
            nxt = (level[:, None] + delays[None, :]).ravel()
            nxt = sorted_unique(nxt[nxt <= t_end])
            if nxt.size > max_count:
                break
            out.append(nxt)
            level = nxt
        ji = self.jump_images
        out.append(ji[(ji > self.t0) & (ji <= t_end)])
        bp = sorted_unique(np.concatenate(out))
        bp = bp[bp > self.t0]
        if bp.size > 1:  # merge points closer than round-off
            keep = np.concatenate([[True], np.diff(bp) > 1e-12 * np.maximum(1.0, np.abs(bp[1:]))])
            bp = bp[keep]
        return bp
