"""Dense history of a DDE solution: piecewise cubic Hermite segments.

Segment ``k`` spans ``[T[k], T[k+1]]`` and carries the state at both ends
and the derivative *of that segment* at both ends (``FA[k]`` at the start,
``FB[k]`` at the end), so a kink at a node (a queue reaching zero, a cross
traffic change) is represented exactly.  A state jump at ``t_b`` is a
zero-length segment ``[t_b, t_b]`` that lookups never select.

Lookups nudge the query time a hair towards the middle of the current step
before choosing a segment, so that at a breakpoint ``t - d == t_b`` the
stage at the start of a step reads the right limit and the stage at its end
the left limit.
"""
from __future__ import annotations

import math

import numpy as np


def hermite(s, h, y0, y1, f0, f1):
    """Evaluate the cubic Hermite interpolant of a segment of length ``h`` at ``s`` in [0, 1].

    Parameters
    ----------
    s : float or numpy.ndarray
        Position in the segment as a fraction of its length (0 at the start, 1 at the end).
    h : float or numpy.ndarray
        Segment length, seconds.
    y0, y1 : float or numpy.ndarray
        State at the start and at the end of the segment (units of the state component).
    f0, f1 : float or numpy.ndarray
        Derivative of the segment at its start and its end (state units per second).

    Returns
    -------
    float or numpy.ndarray
        The interpolated state, broadcast over the arguments.
    """
    s2 = s * s
    s3 = s2 * s
    h00 = 2 * s3 - 3 * s2 + 1
    h10 = s3 - 2 * s2 + s
    h01 = -2 * s3 + 3 * s2
    h11 = s3 - s2
    return h00 * y0 + h10 * h * f0 + h01 * y1 + h11 * h * f1


#: see :func:`release_matters`
RELEASE_NEGLIGIBLE = 0.01


def release_matters(d_a, h, atol_q, rtol, q):
    """Whether the release of a held bounded component inside a step must be located (the step retaken to
    end at the root of its raw derivative).

    Inside a held step the stages integrate the clamped derivative (``max(f, 0)`` at a lower bound), so
    not locating the release changes the step's result only through the clamped inward part of ``f``
    before the root: at most ``(sum |b_i| + 1) h |d_a| < 3 h |d_a|`` (Dormand--Prince weights,
    ``sum |b_i| = 1.64``; ``f`` linear over the step, as the root location assumes).  When that is below
    ``RELEASE_NEGLIGIBLE`` (1 %) of the step's own tolerance ``atol + rtol |q|`` the release is not
    located.  An inward derivative at round-off level (a run started at the equilibrium rate with an empty
    queue: ``N x - C`` ~ 1e-11 packets/s) otherwise cut every step at a root of round-off, into steps too
    short for the rates to move in floating point, and the solver stalled (10^7 steps within 3 ms).
    Plain arithmetic: :mod:`ecocc.dde.kernels` compiles this same function.

    Parameters
    ----------
    d_a : float
        Raw derivative of the held component at the step start (packets/s for a queue).
    h : float
        Step (s).
    atol_q, rtol : float
        The component's absolute tolerance (packets) and the relative tolerance.
    q : float
        The component at the step start (the bound it is held at).

    Returns
    -------
    bool
    """
    return 3.0 * h * abs(d_a) > RELEASE_NEGLIGIBLE * (atol_q + rtol * abs(q))


#: the crossing prediction's target (queue-event prediction, :func:`ecocc.dde.adaptive.solve_dde`): a predicted
#: step ends where the extrapolated component reaches this fraction of its tolerance inside its bound (inside the
#: 10 tolerances within which the step's end is held at the bound, see there)
PREDICT_MARGIN = 0.1


def release_negligible(h, atol_q, rtol, q):
    """The inward raw derivative whose release the next step need not locate, after a step ``h``.

    The step after ``h`` is at most ``5 h`` (the solvers' largest growth), so a derivative below
    ``RELEASE_NEGLIGIBLE (atol + rtol |q|) / (3 x 5 h)`` in size is one that :func:`release_matters` lets
    pass unlocated there.  The release prediction ends a step where the extrapolated raw derivative of a held
    component comes within half of it, and releases the component at that step's end when its raw derivative
    is within it.  Plain arithmetic: :mod:`ecocc.dde.kernels` compiles this same function.

    Parameters
    ----------
    h : float
        The step being taken (s).
    atol_q, rtol : float
        The component's absolute tolerance (its units) and the relative tolerance.
    q : float
        The component at the step start (the bound it is held at).

    Returns
    -------
    float
        The size, in the component's units per second (> 0 when ``atol_q + rtol |q| > 0``).
    """
    return RELEASE_NEGLIGIBLE * (atol_q + rtol * abs(q)) / (15.0 * h)


def segment_tail(y0, y1, f0, f1, h):
    """The second and third Taylor coefficients of a cubic Hermite segment at its end.

    The segment's cubic continued past its end ``t1`` is ``y1 + f1 u + c2 u^2 + c3 u^3`` (``u = t - t1``);
    the crossing prediction extrapolates it over the next step (:func:`cubic_end`).  Plain arithmetic, on
    floats or arrays alike: :mod:`ecocc.dde.kernels` compiles this same function.

    Parameters
    ----------
    y0, y1 : float or numpy.ndarray
        State at the start and at the end of the segment.
    f0, f1 : float or numpy.ndarray
        Derivative of the segment at its start and its end (state units per second).
    h : float
        Segment length, seconds (> 0).

    Returns
    -------
    tuple
        ``(c2, c3)``, state units per s^2 and per s^3.
    """
    a = 2 * (y0 - y1) + h * (f0 + f1)
    b = 3 * (y1 - y0) - h * (2 * f0 + f1)
    h2 = h * h
    return (3 * a + b) / h2, a / (h2 * h)


def cubic_end(y0, f0, c2, c3, h):
    """The value and the derivative at ``u = h`` of the cubic ``y0 + f0 u + c2 u^2 + c3 u^3``.

    With ``(y0, f0)`` they are the Hermite data of that cubic over ``[0, h]``, which is how the predictions
    pass it to :func:`first_crossing`.  Plain arithmetic, on floats or arrays alike: :mod:`ecocc.dde.kernels`
    compiles this same function.

    Parameters
    ----------
    y0, f0 : float or numpy.ndarray
        Value and derivative at ``u = 0``.
    c2, c3 : float or numpy.ndarray
        Second and third coefficients (units per s^2 and per s^3).
    h : float
        How far to extrapolate, seconds.

    Returns
    -------
    tuple
        ``(y(h), y'(h))``.
    """
    return y0 + h * (f0 + h * (c2 + h * c3)), f0 + h * (2 * c2 + 3 * h * c3)


def derivative_fit(x1, x2, x3, d0, d1, d2, d3, npts):
    """The polynomial through a component's raw derivative at its last accepted points, about the last one.

    Newton's divided differences through ``(0, d0), (x1, d1), (x2, d2)`` and, with ``npts == 4``,
    ``(x3, d3)`` (``0 > x1 > x2 > x3``: the earlier points' times relative to the last one), expanded to
    ``d0 + c1 u + c2 u^2 + c3 u^3`` (``c3 = 0`` with three points).  The release prediction extrapolates it
    over the next step (:func:`cubic_end`).  Plain arithmetic, on floats or arrays of ``d`` alike:
    :mod:`ecocc.dde.kernels` compiles this same function.

    Parameters
    ----------
    x1, x2, x3 : float
        Times of the earlier points relative to the last one, seconds (distinct, negative; ``x3`` unused with
        three points).
    d0, d1, d2, d3 : float or numpy.ndarray
        The derivative at the last point and at the earlier ones (``d3`` unused with three points).
    npts : int
        3 or 4.

    Returns
    -------
    tuple
        ``(c1, c2, c3)``.
    """
    a1 = (d1 - d0) / x1
    d12 = (d2 - d1) / (x2 - x1)
    a2 = (d12 - a1) / x2
    a3 = 0.0 * a2
    if npts == 4:
        a3 = (((d3 - d2) / (x3 - x2) - d12) / (x3 - x1) - a2) / x3
    return a1 - a2 * x1 + a3 * x1 * x2, a2 - a3 * (x1 + x2), a3


def first_crossing(y0, y1, f0, f1, h, level):
    """Find the smallest s in (0, 1] where a cubic Hermite segment crosses ``level`` (1.0 if none).

    The cubic's critical points cut [0, 1] into at most three monotone pieces; the first piece whose
    ends straddle the level is bisected to the last floating-point number.  Plain arithmetic (no
    companion-matrix eigenvalues), so :mod:`ecocc.dde.kernels` compiles this same function with numba
    without linking LAPACK.

    Parameters
    ----------
    y0, y1 : float
        State at the start and at the end of the segment.
    f0, f1 : float
        Derivative of the segment at its start and its end (state units per second).
    h : float
        Segment length, seconds.
    level : float
        The level to cross (same units as ``y0``).

    Returns
    -------
    float
        The crossing as a fraction of the segment, in (0, 1]; exactly 1.0 also when the segment does not
        cross (a start exactly on the level does not count as a crossing).
    """
    d = y0 - level
    c = h * f0
    a = 2 * (y0 - y1) + h * (f0 + f1)
    b = 3 * (y1 - y0) - h * (2 * f0 + f1)
    if abs(a) + abs(b) + abs(c) == 0:
        return 1.0
    # critical points: roots of 3a s^2 + 2b s + c in (0, 1), ascending (2.0 = none)
    k1, k2 = 2.0, 2.0
    if a != 0:
        disc = b * b - 3 * a * c
        if disc > 0:
            sq = math.sqrt(disc)
            r1, r2 = (-b - sq) / (3 * a), (-b + sq) / (3 * a)
            k1, k2 = min(r1, r2), max(r1, r2)
    elif b != 0:
        k1 = -c / (2 * b)
    if not 0 < k1 < 1:
        k1, k2 = k2, 2.0
    if not 0 < k1 < 1:
        k1 = 2.0
    if not 0 < k2 < 1:
        k2 = 2.0
    lo = 0.0
    plo = d
    for piece in range(3):
        hi = k1 if piece == 0 else (k2 if piece == 1 else 1.0)
        if hi > 1.0:
            hi = 1.0
        if hi <= lo:
            continue
        phi = ((a * hi + b) * hi + c) * hi + d
        if phi == 0.0:
            return hi
        if plo != 0.0 and (plo < 0) != (phi < 0):
            for _ in range(200):  # bisection on a monotone piece
                mid = 0.5 * (lo + hi)
                if mid <= lo or mid >= hi:
                    break
                pm = ((a * mid + b) * mid + c) * mid + d
                if pm == 0.0:
                    return mid
                if (pm < 0) == (plo < 0):
                    lo, plo = mid, pm
                else:
                    hi = mid
            return hi
        lo, plo = hi, phi
        if hi >= 1.0:
            break
    return 1.0


#: propagated breakpoints pending at most (:func:`add_images`; more are dropped: they only save steps)
HOLD_CAP = 4096
#: the relative band below a queue's upper bound within which a loss signal reads it as full
#: (:data:`ecocc.models.loss.AT_BOUND_REL` is this value): a queue released from its bound leaves the band a
#: little later, and the signal's jump is there, so the solvers propagate a release from the band's crossing
HOLD_BAND_REL = 1e-9


def add_images(dbp, dbw, dbn, pl, bwd, tc, l, t_end, w):
    """Insert the images of an event at ``tc`` on bounded component (link) ``l`` into the pending breakpoints.

    Each entry ``j`` with ``pl[j] == l`` (a (link, flow) pair on the link) sees the event ``bwd[j]`` seconds later:
    ``tc + bwd[j]`` goes into ``dbp[:dbn[0]]`` (ascending) with the event's weight ``w`` in ``dbw`` (one within 1e-9
    relative of a pending one keeps the larger weight), except at or past ``t_end``, or beyond the capacity
    ``dbp.size``.  The NumPy solver calls it as it is, the compiled kernels compiled
    (``ecocc.dde.kernels._add_kink``): the same breakpoints in both.

    Parameters
    ----------
    dbp : numpy.ndarray
        The pending breakpoints, seconds, ascending in ``dbp[:dbn[0]]`` (updated in place).
    dbw : numpy.ndarray
        Their weights, as ``dbp`` (:func:`skip_images`; ``inf``: a jump, always a breakpoint).
    dbn : numpy.ndarray
        One int64: how many are pending (updated in place).
    pl : numpy.ndarray
        The bounded component (link) of each entry, int64.
    bwd : numpy.ndarray
        The delay of each entry, seconds.
    tc : float
        The event's time, seconds.
    l : int
        The bounded component (link) the event happened on.
    t_end : float
        End of the run, seconds.
    w : float
        The event's weight: how much the second derivative of what reads it jumps (per second squared, relative),
        ``inf`` for a jump or a kink not weighed.

    Returns
    -------
    float
        The earliest pending breakpoint, seconds (``inf``: none).
    """
    for j in range(pl.size):
        if pl[j] != l:
            continue
        tb = tc + bwd[j]
        if not tb < t_end:
            continue
        n_ = dbn[0]
        tol = 1e-9 * max(1.0, abs(tb))
        i_ = n_
        while i_ > 0 and dbp[i_ - 1] > tb:
            i_ -= 1
        if i_ > 0 and tb - dbp[i_ - 1] <= tol:
            dbw[i_ - 1] = max(dbw[i_ - 1], w)
            continue
        if i_ < n_ and dbp[i_] - tb <= tol:
            dbw[i_] = max(dbw[i_], w)
            continue
        if n_ >= dbp.size:
            continue
        for k_ in range(n_, i_, -1):
            dbp[k_] = dbp[k_ - 1]
            dbw[k_] = dbw[k_ - 1]
        dbp[i_] = tb
        dbw[i_] = w
        dbn[0] = n_ + 1
    return dbp[0] if dbn[0] > 0 else np.inf


def pop_images(dbp, dbw, dbn, t):
    """Drop the pending breakpoints of :func:`add_images` at or before ``t`` (within 1e-12 relative).

    Parameters
    ----------
    dbp, dbw, dbn : numpy.ndarray
        As in :func:`add_images` (updated in place).
    t : float
        The current time, seconds.

    Returns
    -------
    float
        The next pending breakpoint, seconds (``inf``: none).
    """
    n_ = dbn[0]
    i_ = 0
    while i_ < n_ and dbp[i_] <= t + 1e-12 * max(1.0, abs(t)):
        i_ += 1
    for k_ in range(i_, n_):
        dbp[k_ - i_] = dbp[k_]
        dbw[k_ - i_] = dbw[k_]
    dbn[0] = n_ - i_
    return dbp[0] if dbn[0] > 0 else np.inf


def skip_images(dbp, dbw, dbn, t_lim, h, rtol):
    """Drop the pending breakpoints of :func:`add_images` at or before ``t_lim`` that a step of ``h`` seconds may
    straddle: those whose weight ``w`` (the jump of the second derivative of what reads the event, relative, per
    second squared) gives ``w h^3 <= rtol``, the local error of a step across such a kink being of that size.  Stops
    at the first one kept.

    Parameters
    ----------
    dbp, dbw, dbn : numpy.ndarray
        As in :func:`add_images` (updated in place).
    t_lim : float
        The end of the step about to be tried, seconds.
    h : float
        Its length, seconds.
    rtol : float
        The run's relative tolerance.

    Returns
    -------
    float
        The next pending breakpoint, seconds (``inf``: none).
    """
    n_ = dbn[0]
    i_ = 0
    h3 = h * h * h
    while i_ < n_ and dbp[i_] <= t_lim and dbw[i_] * h3 <= rtol:
        i_ += 1
    if i_ > 0:
        for k_ in range(i_, n_):
            dbp[k_ - i_] = dbp[k_]
            dbw[k_ - i_] = dbw[k_]
        dbn[0] = n_ - i_
    return dbp[0] if dbn[0] > 0 else np.inf


def nudge(t, h):
    """Return a hair (``1e-7 h``, at least a few ulps of ``t``) used to pick the side of a breakpoint.

    Parameters
    ----------
    t : float
        The time being looked up, seconds.
    h : float
        The current step size, seconds.

    Returns
    -------
    float
        ``max(1e-7 h, 8 eps max(1, |t|))``, seconds.
    """
    return max(1e-7 * h, 8 * 2.220446049250313e-16 * max(1.0, abs(t)))


class HistoryLimit(Exception):
    """Raised by :meth:`HermiteHistory.append` when keeping one more node would need a store larger than its
    ``max_bytes`` (the solver turns it into status ``failed`` with :func:`limit_message`)."""

    def __init__(self, nodes: int, nbytes: float):
        super().__init__(f"history of {nodes} nodes in {nbytes:.0f} bytes is full")
        self.nodes = nodes
        self.nbytes = nbytes


def node_bytes(ncols: int) -> int:
    """Bytes of one stored history node of ``ncols`` columns: its time, its values and the two derivatives.

    Parameters
    ----------
    ncols : int
        Stored columns (state components kept in the history).

    Returns
    -------
    int
        Bytes (float64 throughout).
    """
    return 8 * (1 + 3 * int(ncols))


def grown_capacity(cap: int, m: int, ncols: int, max_bytes: float) -> int:
    """The capacity of a full history after its pruning left ``m`` nodes of ``cap`` (more than half full):
    ``max(2 cap, m + 1)`` nodes, cut to what ``max_bytes`` holds.  At the bound the store stays as it is
    (returns ``cap``) while pruning leaves it at most 3/4 full (each later pruning then frees a quarter of
    it: at most 3 node copies per step); else returns 0: the history cannot hold the past it must keep.
    Plain arithmetic: :mod:`ecocc.dde.kernels` compiles this same function.

    Parameters
    ----------
    cap : int
        The current capacity, nodes.
    m : int
        Nodes stored (after pruning); one more must fit.
    ncols : int
        Columns of a node (:func:`node_bytes`).
    max_bytes : float
        The memory bound of the store, bytes (``inf`` for none).

    Returns
    -------
    int
        The new capacity (nodes), ``cap`` to keep the store, or 0.
    """
    ncap = max(2 * cap, m + 1)
    per = 8.0 * (1 + 3 * ncols)
    if ncap * per <= max_bytes:
        return ncap
    fit = int(max_bytes // per)
    if fit > cap and fit >= m + 1:
        return fit
    if 4 * (m + 1) <= 3 * cap:
        return cap
    return 0


def _bytes_text(nbytes):
    b = float(nbytes)
    for unit, k in (("GiB", 2 ** 30), ("MiB", 2 ** 20), ("KiB", 2 ** 10)):
        if b >= k:
            return f"{b / k:.3g} {unit}"
    return f"{b:.0f} bytes"


def limit_message(t, nodes, nbytes, max_bytes, h, h_max, y_absmax, keep_s, *, which="", unit=" s",
                  option="max_history_gib"):
    """The message of a run stopped by its history memory bound, in user terms.

    Parameters
    ----------
    t : float
        Time reached (the last accepted step's end).
    nodes : int
        Steps (nodes) the history holds.
    nbytes : float
        Bytes of the history's store.
    max_bytes : float
        The bound, bytes.
    h : float
        The current step size.
    h_max : float
        The largest accepted step of the run.
    y_absmax : float
        The largest ``|state|`` at ``t``.
    keep_s : float
        How far back the history must reach (``inf``: all of it).
    which : str, optional
        Which component holds the largest ``|state|`` (e.g. ``" (component 3, x[3])"``).
    unit : str, optional
        The time unit appended to times (``" s"``; ``""`` for a user DDE's own time unit).
    option : str, optional
        The option that sets the bound.

    Returns
    -------
    str
    """
    window = ("the whole run: all of it is kept" if not math.isfinite(keep_s)
              else f"the last {keep_s:.3g}{unit}, 1.5 x the largest delay")
    head = (f"history memory limit reached at t = {t:.9g}{unit}: the stored past ({window}) holds {int(nodes)} "
            f"steps in {_bytes_text(nbytes)} ({nbytes:.0f} bytes) and more would exceed {option} = "
            f"{max_bytes / 2 ** 30:.3g} ({_bytes_text(max_bytes)}); ")
    if h_max > 0 and h < 1e-3 * h_max:
        return head + (f"the step size collapsed to {h:.3g}{unit} (largest step of the run {h_max:.3g}{unit}) and "
                       f"the largest |state| is {y_absmax:.3g}{which}: the solution may be blowing up (check the "
                       f"model, its parameters and the initial state); if the run really needs more history, "
                       f"raise {option}")
    return head + (f"the step size is {h:.3g}{unit} (largest step of the run {h_max:.3g}{unit}) and the largest "
                   f"|state| is {y_absmax:.3g}{which}; raise {option} if the run really needs more history")


class HermiteHistory:
    """Growing store of Hermite nodes with pruning of the far past.

    Parameters
    ----------
    t0 : float
        Time of the first node, seconds.
    y0 : numpy.ndarray
        State at ``t0``, shape ``(n,)``.
    n : int
        Number of state components.
    capacity : int, optional
        Number of nodes allocated at first (the store doubles when full).
    keep_s : float, optional
        How far back from the last node lookups may go, seconds; older nodes may be pruned when the
        store is full.  ``inf`` keeps everything.
    max_bytes : float, optional
        Memory bound of the store (``T``, ``Y``, ``FA``, ``FB``), bytes: a full store grows (doubling) up
        to it, and :meth:`append` raises :class:`HistoryLimit` when the past it must keep would need more.
        ``inf``: no bound.
    """

    def __init__(self, t0: float, y0: np.ndarray, n: int, capacity: int = 256, keep_s: float = np.inf,
                 max_bytes: float = np.inf):
        self.n = n
        self.keep_s = keep_s
        self.max_bytes = max_bytes
        self.T = np.empty(capacity)
        self.Y = np.empty((capacity, n))
        self.FA = np.zeros((capacity, n))  # derivative at the start of segment k
        self.FB = np.zeros((capacity, n))  # derivative at the end of segment k
        self.T[0] = t0
        self.Y[0] = y0
        self.m = 1  # number of nodes

    def _ensure(self, extra: int = 1):
        if self.m + extra <= self.T.size:
            return
        # prune first: keep nodes needed for lookups back to keep_s
        if np.isfinite(self.keep_s):
            t_last = self.T[self.m - 1]
            cut = np.searchsorted(self.T[: self.m], t_last - self.keep_s, side="right") - 2
            if cut > 0:
                sl = slice(cut, self.m)
                k = self.m - cut
                self.T[:k] = self.T[sl]
                self.Y[:k] = self.Y[sl]
                self.FA[:k] = self.FA[sl]
                self.FB[:k] = self.FB[sl]
                self.m = k
                if self.m + extra <= self.T.size // 2 + 1:
                    return
        cap = grown_capacity(self.T.size, self.m + extra - 1, self.n, self.max_bytes)
        if cap == 0:
            raise HistoryLimit(self.m, self.nbytes)
        if cap == self.T.size:  # at the memory bound, the pruning left room enough
            return
        for name in ("T", "Y", "FA", "FB"):
            old = getattr(self, name)
            new = np.zeros((cap,) + old.shape[1:]) if name in ("FA", "FB") else np.empty((cap,) + old.shape[1:])
            new[: self.m] = old[: self.m]
            setattr(self, name, new)

    @property
    def nbytes(self) -> int:
        """Bytes of the store (its capacity, not only the nodes in use)."""
        return self.T.size * node_bytes(self.n)

    def append(self, t1: float, y1: np.ndarray, f_start: np.ndarray, f_end: np.ndarray):
        """Add the segment from the last node to ``(t1, y1)``.

        Parameters
        ----------
        t1 : float
            Time of the new node, seconds (>= the last node's time).
        y1 : numpy.ndarray
            State at ``t1``, shape ``(n,)``.
        f_start, f_end : numpy.ndarray
            Derivative of the new segment at its start and its end, shape ``(n,)`` (state units per second).
        """
        self._ensure()
        k = self.m - 1
        self.FA[k] = f_start
        self.FB[k] = f_end
        self.T[self.m] = t1
        self.Y[self.m] = y1
        self.m += 1

    def append_jump(self, y_new: np.ndarray):
        """Add a state jump at the last node's time (a zero-length segment lookups never select).

        Parameters
        ----------
        y_new : numpy.ndarray
            State right after the jump, shape ``(n,)``.
        """
        self._ensure()
        k = self.m - 1
        self.FA[k] = 0.0
        self.FB[k] = 0.0
        self.T[self.m] = self.T[k]
        self.Y[self.m] = y_new
        self.m += 1

    def segment_index(self, tau_sel: np.ndarray) -> np.ndarray:
        """Find the segment holding each selection time.

        Parameters
        ----------
        tau_sel : numpy.ndarray
            Times, seconds (usually the lookup times nudged towards the middle of the current step).

        Returns
        -------
        numpy.ndarray
            Segment indices ``k`` with ``T[k] <= tau_sel < T[k+1]``, clipped to the stored segments (the
            last segment for times at or after the last node, the first for times before the first).
        """
        k = np.searchsorted(self.T[: self.m], tau_sel, side="right") - 1
        return np.clip(k, 0, max(self.m - 2, 0))

    def eval(self, tau: np.ndarray, comps: np.ndarray, tau_sel: np.ndarray | None = None) -> np.ndarray:
        """Evaluate ``y[comps]`` at times ``tau`` (all within the stored range).

        Parameters
        ----------
        tau : numpy.ndarray
            Lookup times, seconds.
        comps : numpy.ndarray
            State component indices, broadcast against ``tau``.
        tau_sel : numpy.ndarray or None, optional
            Times used to choose the segment (``tau`` nudged to one side of a breakpoint); None uses ``tau``.

        Returns
        -------
        numpy.ndarray
            The interpolated values, shape of ``tau`` and ``comps`` broadcast (the initial state while only
            one node is stored).
        """
        if tau_sel is None:
            tau_sel = tau
        if self.m < 2:
            return np.broadcast_to(self.Y[0, comps], np.shape(tau)).copy()
        k = self.segment_index(tau_sel)
        t0 = self.T[k]
        h = self.T[k + 1] - t0
        hs = np.where(h > 0, h, 1.0)
        s = (tau - t0) / hs
        # flat indices into the C-contiguous (capacity, n) stores: one index
        # array for the four gathers instead of four 2-D fancy indexings
        i0 = k * self.n + comps
        i1 = i0 + self.n
        Y = self.Y.reshape(-1)
        return hermite(s, h, Y.take(i0), Y.take(i1), self.FA.reshape(-1).take(i0), self.FB.reshape(-1).take(i0))
