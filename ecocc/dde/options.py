"""Validation of solver options shared by the public solver entry points.

Every check raises :class:`ecocc.errors.InputError` naming the option, the
value it got and what is allowed, so that a bad option never runs (``atol < 0``
switched error control off, ``max_step = 0`` looped on zero-length steps,
``max_step < 0`` ran time backwards).
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from ..errors import InputError

#: the smallest relative tolerance a float64 run can meet (as scipy.integrate.solve_ivp's ``100 eps``)
RTOL_MIN = 100 * np.finfo(float).eps
#: largest number of output samples or fixed-grid steps accepted before a run starts (memory: 10^7 samples of a
#: 100-component state are 8 GB; larger runs need ``t_eval``/``step_s`` chosen on purpose)
MAX_SAMPLES = 10_000_000
#: largest ring buffer of the fixed-step solver (the past of the longest delay), bytes
MAX_RING_BYTES = 4 * 2**30
#: default memory bound of an adaptive solver's stored history (the Hermite past it keeps for the delays), GiB.
#: A normal run stores far less: XCP on a 1,000-flow dumbbell (2,005 states) keeps 48 kB per step with the
#: NumPy solver and 24 kB with the compiled one (only the components read through a delay), so 2 GiB is
#: 45,000 / 89,000 steps inside 1.5 x the largest delay (0.75 s), steps of 17 / 8.4 us on average, where
#: normal runs step 0.1 to 10 ms.  A solution that blows up shrinks the step until that window holds millions of
#: steps, and without a bound ate all memory (24 GB) before anything said so; with it, that run stops after
#: 87 s at 3.6 GB peak (docs/notes/memguard.md).  Fixed rather than a fraction of the machine's memory, so
#: that a run fails or succeeds alike on every machine (not across engines: they store different columns).
DEFAULT_MAX_HISTORY_GIB = 2.0


def real(field, value, *, lo=None, hi=None, lo_open=False, allow_inf=False, allowed=None) -> float:
    """Check a real scalar option (not a bool) against a range; return it as float.

    Parameters
    ----------
    field : str
        The option's name, as the caller wrote it, for the error message.
    value : object
        The value to check; a Python or NumPy real number (a 0-d numeric array is accepted).
    lo, hi : float or None, optional
        Closed bounds (``lo`` is open when ``lo_open``); None for no bound.
    lo_open : bool, optional
        Refuse ``value == lo``.
    allow_inf : bool, optional
        Accept ``+inf`` (``-inf`` and NaN are always refused).
    allowed : str or None, optional
        What is allowed, in words, for the error message; None derives it from the bounds.

    Returns
    -------
    float
        The value.

    Raises
    ------
    InputError
        For a bool, a non-number, NaN, an infinity not allowed, or a value out of range.
    """
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iuf":
        value = value.item()
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Real, np.floating, np.integer)):
        raise InputError(field, value, allowed or "a real number")
    v = float(value)
    desc = allowed or _range_text(lo, hi, lo_open, allow_inf)
    if math.isnan(v) or (math.isinf(v) and not (allow_inf and v > 0)):
        raise InputError(field, value, desc)
    if lo is not None and (v < lo or (lo_open and v == lo)):
        raise InputError(field, value, desc)
    if hi is not None and v > hi:
        raise InputError(field, value, desc)
    return v


def _range_text(lo, hi, lo_open, allow_inf):
    if lo is not None and hi is not None:
        return f"a number in {'(' if lo_open else '['}{lo:g}, {hi:g}]"
    if lo is not None:
        return f"a number {'>' if lo_open else '>='} {lo:g}" + (" (inf allowed)" if allow_inf else " and finite")
    return "a finite real number"


def integer(field, value, *, lo=1, hi=None) -> int:
    """Check an integer option (not a bool) against a range; return it as int.

    Parameters
    ----------
    field : str
        The option's name, for the error message.
    value : object
        The value to check; a Python or NumPy integer (floats such as ``3.0`` are refused).
    lo : int, optional
        Smallest allowed value.
    hi : int or None, optional
        Largest allowed value; None for no bound.

    Returns
    -------
    int
        The value.

    Raises
    ------
    InputError
        For a bool, a non-integer or a value out of ``[lo, hi]``.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Integral, np.integer)):
        raise InputError(field, value, f"an integer >= {lo}")
    v = int(value)
    if v < lo or (hi is not None and v > hi):
        raise InputError(field, value, f"an integer in [{lo}, {hi}]" if hi is not None else f"an integer >= {lo}")
    return v


def flag(field, value) -> bool:
    """Check a boolean option; return it as bool.

    Parameters
    ----------
    field : str
        The option's name, for the error message.
    value : object
        The value to check: ``True``/``False`` or a NumPy bool (``0``/``1`` are refused).

    Returns
    -------
    bool
        The value.

    Raises
    ------
    InputError
        For anything but a bool.
    """
    if not isinstance(value, (bool, np.bool_)):
        raise InputError(field, value, "True or False")
    return bool(value)


def rtol(value, field="rtol") -> float:
    """Check a relative tolerance (dimensionless, finite, at least :data:`RTOL_MIN`); return it as float.

    Parameters
    ----------
    value : object
        The tolerance.
    field : str, optional
        The option's name, for the error message.

    Returns
    -------
    float
        The tolerance.

    Raises
    ------
    InputError
        For a non-number, a non-finite number or one below :data:`RTOL_MIN` (100 machine epsilons).  No upper
        bound here: ``solve_dde`` takes a huge rtol (with ``first_step = max_step``) to force fixed steps, as
        the convergence-order tests do; :func:`ecocc.simulate` refuses rtol >= 1.
    """
    return real(field, value, lo=RTOL_MIN,
                allowed=f"a finite number >= {RTOL_MIN:.3g} (100 x machine epsilon: float64 cannot meet less)")


def atol(value, n, field="atol") -> np.ndarray:
    """Check an absolute tolerance, scalar or one per state component; return the ``(n,)`` array.

    Parameters
    ----------
    value : float or array_like
        One tolerance for all components or ``n`` tolerances, each finite and >= 0, in the units of the
        matching state component (packets for windows and queues, packets/s for rates).
    n : int
        Number of state components.
    field : str, optional
        The option's name, for the error message (an element is named ``atol[i]``).

    Returns
    -------
    numpy.ndarray
        Shape ``(n,)``, a fresh copy (a scalar is broadcast).

    Raises
    ------
    InputError
        For a bool, text, None, an array of the wrong shape, or any element negative or not finite.
    """
    if isinstance(value, (bool, np.bool_, str, bytes)) or value is None:
        raise InputError(field, value, f"a number >= 0 or {n} numbers >= 0 (one per state component)")
    try:
        a = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise InputError(field, value, f"a number >= 0 or {n} numbers >= 0 (one per state component)") from None
    if a.ndim > 1 or (a.ndim == 1 and a.size != n):
        raise InputError(field, value if a.size <= 8 else f"array of shape {a.shape}",
                         f"a number >= 0 or {n} numbers >= 0 (one per state component)")
    bad = ~np.isfinite(a) | (a < 0)
    if np.any(bad):
        shown = value if a.ndim == 0 else float(a[np.flatnonzero(bad)[0]])
        name = field if a.ndim == 0 else f"{field}[{int(np.flatnonzero(bad)[0])}]"
        raise InputError(name, shown, "a finite number >= 0 (a negative tolerance would switch error control off)")
    return np.broadcast_to(a, (n,)).copy()


def max_step(value, field="max_step") -> float:
    """Check a largest step size in seconds (> 0, ``inf`` for no limit); return it as float.

    Parameters
    ----------
    value : object
        The largest step, seconds.
    field : str, optional
        The option's name, for the error message.

    Returns
    -------
    float
        The largest step, seconds (possibly ``inf``).

    Raises
    ------
    InputError
        For a non-number, NaN, ``-inf`` or a value <= 0.
    """
    return real(field, value, lo=0.0, lo_open=True, allow_inf=True,
                allowed="a number of seconds > 0 (inf for no limit)")


def max_history_gib(value, field="max_history_gib") -> float:
    """Check a memory bound of an adaptive solver's stored history in GiB (> 0, ``inf`` for no bound).

    Parameters
    ----------
    value : object
        The bound, GiB (2**30 bytes); fractions are allowed (``1e-6`` is about 1 kB).
    field : str, optional
        The option's name, for the error message.

    Returns
    -------
    float
        The bound in GiB (possibly ``inf``).

    Raises
    ------
    InputError
        For a bool, a non-number, NaN, ``-inf`` or a value <= 0.
    """
    return real(field, value, lo=0.0, lo_open=True, allow_inf=True,
                allowed="a number of GiB > 0 (inf for no bound; default "
                        f"{DEFAULT_MAX_HISTORY_GIB:g})")


def history_bytes(gib) -> float:
    """A history bound in GiB as bytes (a float: ``inf`` stays ``inf``).

    Parameters
    ----------
    gib : float
        The bound, GiB (2**30 bytes), already validated (> 0 or ``inf``).

    Returns
    -------
    float
        Bytes.
    """
    return float(gib) * 2.0 ** 30


def first_step(value, field="first_step"):
    """Check an initial step size in seconds (None or finite > 0).

    Parameters
    ----------
    value : float or None
        The first step, seconds; None lets the solver choose.
    field : str, optional
        The option's name, for the error message.

    Returns
    -------
    float or None
        The first step in seconds, or None.

    Raises
    ------
    InputError
        For a non-number, a non-finite number or a value <= 0.
    """
    if value is None:
        return None
    return real(field, value, lo=0.0, lo_open=True, allowed="None or a finite number of seconds > 0")


def t_end(value, t0, field="t_end") -> float:
    """Check an end time in seconds (finite, strictly after ``t0``); return it as float.

    Parameters
    ----------
    value : object
        The end time, seconds.
    t0 : float
        The start time, seconds.
    field : str, optional
        The option's name, for the error message.

    Returns
    -------
    float
        The end time, seconds.

    Raises
    ------
    InputError
        For a non-number, a non-finite number or a time <= ``t0``.
    """
    return real(field, value, lo=t0, lo_open=True, allowed=f"a finite time in seconds after t0 = {t0:g}")


def t_eval(value, t0, t_end_, field="t_eval"):
    """Check output times: None, or finite non-decreasing times in ``[t0, t_end]``, at most :data:`MAX_SAMPLES`.

    Parameters
    ----------
    value : array_like or None
        Output times, seconds; None for the solver's own steps.
    t0, t_end_ : float
        Start and end of the run, seconds (the last time may exceed ``t_end_`` by 1e-12 relative, round-off).
    field : str, optional
        The option's name, for the error message.

    Returns
    -------
    numpy.ndarray or None
        The times as a float array, or None.

    Raises
    ------
    InputError
        For non-numbers, a multidimensional array, more than :data:`MAX_SAMPLES` times, non-finite or
        decreasing times, or times outside ``[t0, t_end_]``.
    """
    if value is None:
        return None
    try:
        a = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise InputError(field, value, "an array of times in seconds") from None
    shown = value if a.size <= 8 else f"array of {a.size} times"
    if a.ndim != 1:
        raise InputError(field, shown, "a one-dimensional array of times in seconds")
    if a.size > MAX_SAMPLES:
        raise InputError(field, shown, f"at most {MAX_SAMPLES} output times")
    if not np.all(np.isfinite(a)):
        raise InputError(field, shown, "finite times in seconds")
    if np.any(np.diff(a) < 0):
        raise InputError(field, shown, "times in increasing order")
    if a.size and (a[0] < t0 or a[-1] > t_end_ + 1e-12 * max(1.0, abs(t_end_))):
        raise InputError(field, shown, f"times in [t0, t_end] = [{t0:g}, {t_end_:g}] s")
    return a


def callable_or_none(field, value):
    """Check that an option is None or callable; return it unchanged.

    Parameters
    ----------
    field : str
        The option's name, for the error message.
    value : object
        The value to check (a callback such as an event function).

    Returns
    -------
    callable or None
        The value.

    Raises
    ------
    InputError
        If the value is neither None nor callable.
    """
    if value is not None and not callable(value):
        raise InputError(field, value, "None or a callable")
    return value
