"""Counting and locating the characteristic roots of a retarded DDE right of a line.

For ``z' = A0 z + sum_k A_k z(t - tau_k)`` the characteristic matrix is
``Delta(s) = s I - A0 - sum_k A_k exp(-s tau_k)`` and the roots are the zeros
of ``f(s) = det Delta(s)`` (an entire function).  A root ``s`` has an
eigenvector ``v`` with ``s v = (A0 + sum_k A_k e^{-s tau_k}) v``, so

    ``|s| <= R(sigma) = ||A0|| + sum_k ||A_k|| exp(-sigma tau_k)``   for ``Re s >= sigma``

(spectral norms, after a diagonal similarity that balances the matrices --
it changes no root and usually tightens the bound).  Every root with
``Re s > sigma`` therefore lies in the rectangle ``[sigma, R] x [-R, R]``,
and their number (with multiplicity) is the winding number of ``f`` along
its boundary (argument principle).  The winding number is measured by
sampling ``arg f`` along the boundary, bisecting every step whose phase
increment exceeds ``pi/4`` until none does, and repeated on a grid of
twice the density: the two counts must agree.  This is a numerical
certificate, not interval arithmetic: a phase that winds a full turn
between two samples whose increment looks small would be missed; the
doubling check and the increment bound make that unlikely, and every result
states which line it certifies.

Roots missing from a candidate list (collocation + Newton) are found by
bisecting the rectangle: a box whose count exceeds the number of known
roots inside it is split until Newton's method from its centre converges to
a new root inside it.  This is the approach of Delves & Lyness (1967) and
Kravanja & Van Barel's ZEAL, applied to ``det Delta``; DDE-BIFTOOL instead
uses collocation + Newton with a discretisation chosen from a heuristic
bound, without a count.
"""
from __future__ import annotations

import math

import numpy as np

#: largest phase increment (rad) accepted between two boundary samples
MAX_STEP_RAD = math.pi / 4


def balance(A0, As):
    """Apply a diagonal similarity ``D^{-1} A D`` to ``A0`` and every ``A_k`` (roots unchanged).

    ``D`` balances ``|A0| + sum_k |A_k|`` (:func:`scipy.linalg.matrix_balance`, no permutation), which
    usually tightens :func:`root_bound`.

    Parameters
    ----------
    A0 : numpy.ndarray
        ``(n, n)`` matrix of the current state (1/s).
    As : sequence of numpy.ndarray
        ``(n, n)`` matrices of the delayed states (1/s).

    Returns
    -------
    A0 : numpy.ndarray
        The balanced ``A0`` (unchanged for ``n == 1`` or if balancing fails).
    As : list of numpy.ndarray
        The balanced ``A_k``.
    """
    from scipy.linalg import matrix_balance
    n = A0.shape[0]
    if n == 1:
        return A0, list(As)
    S = np.abs(A0) + sum(np.abs(A) for A in As)
    try:
        _, (scale, _perm) = matrix_balance(S, permute=False, separate=True)
    except Exception:  # pragma: no cover - scipy failure: no scaling
        return A0, list(As)
    scale = np.where(np.isfinite(scale) & (scale > 0), scale, 1.0)
    D, Di = scale[None, :], 1.0 / scale[:, None]
    return Di * A0 * D, [Di * A * D for A in As]


def root_bound(A0, As, taus, sigma):
    """Return ``R(sigma)``: every root with ``Re s >= sigma`` has ``|s| <= R``.

    Parameters
    ----------
    A0 : numpy.ndarray or float
        ``(n, n)`` matrix, or its spectral norm (a float, to save the SVD).
    As : sequence of numpy.ndarray or float
        The delayed matrices, or their spectral norms.
    taus : sequence of float
        Delays ``tau_k``, seconds, one per ``A_k``.
    sigma : float
        The line ``Re s = sigma``, 1/s.

    Returns
    -------
    float
        ``||A0|| + sum_k ||A_k|| exp(-sigma tau_k)``, 1/s (the exponent is capped at 700, so a very
        negative ``sigma`` gives a huge but finite bound).
    """
    nrm = lambda A: A if isinstance(A, float) else float(np.linalg.norm(A, 2))  # noqa: E731
    with np.errstate(over="ignore"):
        return nrm(A0) + sum(nrm(A) * math.exp(min(-sigma * t, 700.0)) for A, t in zip(As, taus))


def char_det(s, A0, As, taus):
    """Evaluate ``det Delta(s) = det(s I - A0 - sum_k A_k exp(-s tau_k))`` for an array of complex ``s``.

    Parameters
    ----------
    s : array_like of complex
        Points of the complex plane, 1/s.
    A0 : numpy.ndarray
        ``(n, n)`` matrix of the current state.
    As : sequence of numpy.ndarray
        ``(n, n)`` matrices of the delayed states.
    taus : sequence of float
        Delays, seconds.

    Returns
    -------
    numpy.ndarray
        Complex determinants, shape of ``s`` (one-dimensional for ``n > 1``).
    """
    s = np.asarray(s, complex)
    n = A0.shape[0]
    if n == 1:
        f = s - A0[0, 0]
        for A, t in zip(As, taus):
            f = f - A[0, 0] * np.exp(-s * t)
        return f
    M = s[:, None, None] * np.eye(n) - A0
    for A, t in zip(As, taus):
        M = M - np.exp(-s * t)[:, None, None] * A
    return np.linalg.det(M)


def _wrap(d):
    return (d + math.pi) % (2 * math.pi) - math.pi


def _refine(f, s, ph, min_len, max_pts):
    """Bisect until every phase increment is below MAX_STEP_RAD; None if the contour passes too near a
    zero (an interval shorter than ``min_len`` still jumps) or the samples exceed ``max_pts``."""
    for _ in range(200):
        d = _wrap(np.diff(ph))
        bad = ~(np.abs(d) < MAX_STEP_RAD)
        if not bad.any():
            return s, ph
        if np.min(np.abs(s[1:][bad] - s[:-1][bad])) < min_len or s.size + bad.sum() > max_pts:
            return None
        mids = 0.5 * (s[:-1][bad] + s[1:][bad])
        with np.errstate(all="ignore"):
            fm = f(mids)
        if not np.all(np.isfinite(fm)) or np.any(fm == 0):
            return None
        idx = np.flatnonzero(bad) + 1
        s = np.insert(s, idx, mids)
        ph = np.insert(ph, idx, np.angle(fm))
    return None


def count_zeros(f, box, h0, *, max_pts=4_000_000):
    """Count the zeros of ``f`` inside ``box = (re_lo, re_hi, im_lo, im_hi)`` by the argument principle.

    Parameters
    ----------
    f : callable
        ``f(s)`` for an array of complex ``s``, analytic inside and on the box (e.g. :func:`char_det`).
    box : tuple of float
        ``(re_lo, re_hi, im_lo, im_hi)``, 1/s.
    h0 : float
        Initial sample spacing along the boundary, 1/s (at least 8 samples per side).
    max_pts : int, optional
        Sampling budget.

    Returns
    -------
    count : int or None
        Number of zeros with multiplicity; None when the boundary passes (numerically) through a zero,
        the sampling budget is spent, or the count and its check at twice the density disagree.
    n_samples : int
        Samples used.
    """
    x0, x1, y0, y1 = box
    corners = [complex(x0, y0), complex(x1, y0), complex(x1, y1), complex(x0, y1)]
    parts = []
    for a, b in zip(corners, corners[1:] + corners[:1]):
        m = max(8, int(math.ceil(abs(b - a) / h0)))
        parts.append(a + (b - a) * np.arange(m) / m)
    s = np.concatenate(parts + [np.array([corners[0]])])
    if s.size > max_pts:
        return None, s.size
    with np.errstate(all="ignore"):
        fs = f(s)
    if not np.all(np.isfinite(fs)) or np.any(fs == 0):
        return None, s.size
    size = max(x1 - x0, y1 - y0)
    min_len = 1e-12 * max(size, abs(x0), abs(x1), abs(y0), abs(y1), 1.0)
    counts = []
    for _pass in range(2):
        r = _refine(f, s, np.angle(fs) if _pass == 0 else ph, min_len, max_pts)
        if r is None:
            return None, s.size
        s, ph = r
        counts.append(int(round(np.sum(_wrap(np.diff(ph))) / (2 * math.pi))))
        if _pass == 0:  # the check: every interval halved, refined again, counted again
            mids = 0.5 * (s[:-1] + s[1:])
            with np.errstate(all="ignore"):
                fm = f(mids)
            if not np.all(np.isfinite(fm)) or np.any(fm == 0) or 2 * s.size > max_pts:
                return None, s.size
            s2 = np.empty(2 * s.size - 1, complex)
            p2 = np.empty(2 * s.size - 1)
            s2[0::2], s2[1::2] = s, mids
            p2[0::2], p2[1::2] = ph, np.angle(fm)
            s, ph = s2, p2
    if counts[0] != counts[1] or counts[0] < 0:
        return None, s.size
    return counts[0], s.size


def find_missing(f, newton, box, known, h0, *, max_boxes=400, min_size=1e-9, conjugate=True):
    """Search ``box`` for zeros of ``f`` not in ``known``.

    Boxes whose zero count exceeds the known roots inside them are bisected
    (longer side first, off-centre); Newton (``newton(s0) -> s or None``) is tried from
    the centre of each such box and accepted when it lands inside the box
    and is new (with its conjugate when ``conjugate``: real coefficients).

    Parameters
    ----------
    f : callable
        ``f(s)`` for an array of complex ``s`` (e.g. :func:`char_det`).
    newton : callable
        ``newton(s0) -> s or None``: Newton's method from ``s0``.
    box : tuple of float
        ``(re_lo, re_hi, im_lo, im_hi)``, 1/s.
    known : array_like of complex
        Zeros already known, 1/s.
    h0 : float
        Initial boundary sample spacing of :func:`count_zeros`, 1/s.
    max_boxes : int, optional
        Budget of boxes counted.
    min_size : float, optional
        Boxes smaller than this (relative to ``max(1, |centre|)``) are not split further.
    conjugate : bool, optional
        Add the conjugate of every new complex zero.

    Returns
    -------
    new_roots : list of complex
        Zeros found that were not in ``known``.
    complete : bool
        False when a count failed, a box became too small, or the box budget ran out.
    """
    found = list(known)
    new = []
    stack = [box]
    n_boxes = 0
    complete = True

    def inside(b, r, pad=0.0):
        return b[0] - pad <= r.real <= b[1] + pad and b[2] - pad <= r.imag <= b[3] + pad

    def dup(r):
        return any(abs(r - q) < 1e-7 * max(1.0, abs(r)) for q in found)

    while stack:
        b = stack.pop()
        n_boxes += 1
        if n_boxes > max_boxes:
            return new, False
        k, _ = count_zeros(f, b, h0)
        if k is None:  # a zero on this box's boundary: shift the box's splitting and give up on exactness
            complete = False
            continue
        have = sum(1 for r in found if inside(b, r))
        if k <= have:
            continue
        c = complex(0.5 * (b[0] + b[1]), 0.5 * (b[2] + b[3]))
        r = newton(c)
        if r is not None and inside(b, r, pad=1e-12 * max(1.0, abs(r))) and not dup(r):
            found.append(r)
            new.append(r)
            if conjugate and abs(r.imag) > 1e-12 * max(1.0, abs(r)) and not dup(r.conjugate()):
                found.append(r.conjugate())  # real matrices: roots come in conjugate pairs
                new.append(r.conjugate())
            stack.append(b)  # count again: more may be inside
            continue
        w, h = b[1] - b[0], b[3] - b[2]
        if max(w, h) < min_size * max(1.0, abs(c)):
            complete = False
            continue
        # split off-centre (golden ratio) so a split line rarely runs through a symmetric root
        g = 0.5 + 0.0817
        if w >= h:
            xm = b[0] + g * w
            stack += [(b[0], xm, b[2], b[3]), (xm, b[1], b[2], b[3])]
        else:
            ym = b[2] + g * h
            stack += [(b[0], b[1], b[2], ym), (b[0], b[1], ym, b[3])]
    return new, complete
