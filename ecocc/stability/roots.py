"""Characteristic roots of a linear DDE: Chebyshev collocation, Newton, and a root count.

``z'(t) = A0 z(t) + sum_k A_k z(t - tau_k)``.  The infinitesimal generator
of the solution semigroup is discretised on ``N + 1`` Chebyshev points of
``[-tau_max, 0]`` (Breda, Maset & Vermiglio; DDE-BIFTOOL's
``dde_stst_eig_cheb``): derivative rows from the Chebyshev differentiation
matrix, the row at ``theta = 0`` is the DDE itself with the delayed values
interpolated.  Its eigenvalues approximate the rightmost roots; each is then
refined by Newton's method on ``Delta(lam) v = 0, c^T v = 1`` with
``Delta(lam) = lam I - A0 - sum_k A_k exp(-lam tau_k)``, and the residual
``sigma_min(Delta(lam)) / ||Delta||`` is reported.  The collocation can drop
roots faster than the longest delay resolves, so the roots right of a line
are then counted by the argument principle and the missing ones searched for
(:mod:`ecocc.stability.certify`).  Units: 1/s.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import InputError


@dataclass(frozen=True)
class CharacteristicRoots:
    """Rightmost characteristic roots of a linear DDE.

    Attributes
    ----------
    roots_per_s : ndarray (complex)
        Refined roots (1/s), sorted by decreasing real part; a multiple root
        (counted by the argument principle) is repeated by its multiplicity.
    residuals : ndarray
        ``sigma_min(Delta(lam)) / (1 + ||A0|| + sum ||A_k|| + |lam|)``.
    rightmost_per_s : complex
    stable : bool
        ``Re(rightmost) < -tol_real``.
    n_nodes : int
    status : str
        ``"certified"``, ``"marginal"`` (certified, ``|Re| <= tol_real``),
        ``"uncertain"`` or ``"unconverged"`` (see :func:`characteristic_roots`).
    messages : tuple of str
    certified_right_of_per_s : float
        The line ``Re s = sigma`` (1/s) right of which the argument principle
        counted the roots (NaN if not counted).
    n_right : int
        That count (with multiplicity; -1 if not counted).
    rightmost_certified : bool
        The count agrees and the rightmost root lies right of the line: no
        root lies right of ``rightmost_per_s``.
    """

    roots_per_s: np.ndarray
    residuals: np.ndarray
    rightmost_per_s: complex
    stable: bool
    n_nodes: int
    status: str
    messages: tuple = ()
    certified_right_of_per_s: float = math.nan
    n_right: int = -1
    rightmost_certified: bool = False

    @property
    def certified(self) -> bool:
        """The verdict rests on a root count (status certified or marginal)."""
        return self.status in ("certified", "marginal")


def _cheb(n):
    x = np.cos(np.pi * np.arange(n + 1) / n)
    c = np.hstack([2.0, np.ones(n - 1), 2.0]) * (-1.0) ** np.arange(n + 1)
    X = np.tile(x, (n + 1, 1)).T
    dX = X - X.T
    D = np.outer(c, 1.0 / c) / (dX + np.eye(n + 1))
    D = D - np.diag(D.sum(axis=1))
    return x, D


def _bary_weights(n):
    w = (-1.0) ** np.arange(n + 1)
    w[0] *= 0.5; w[-1] *= 0.5
    return w


def _interp_row(x, w, xi):
    d = xi - x
    if np.any(np.abs(d) < 1e-14):
        row = np.zeros_like(x); row[np.argmin(np.abs(d))] = 1.0
        return row
    t = w / d
    return t / t.sum()


def _delta(lam, A0, As, taus):
    n = A0.shape[0]
    M = lam * np.eye(n) - A0
    dM = np.eye(n, dtype=complex)
    for A, t in zip(As, taus):
        e = np.exp(-lam * t)
        M = M - A * e
        dM = dM + A * t * e
    return M, dM


def _newton(lam, A0, As, taus, iters=30):
    n = A0.shape[0]
    M, _ = _delta(lam, A0, As, taus)
    _, _, Vh = np.linalg.svd(M)
    v = Vh[-1].conj()
    c = v.conj() / np.vdot(v, v)
    for _ in range(iters):
        M, dM = _delta(lam, A0, As, taus)
        F = np.concatenate([M @ v, [c @ v - 1]])
        J = np.zeros((n + 1, n + 1), complex)
        J[:n, :n] = M; J[:n, n] = dM @ v; J[n, :n] = c
        try:
            step = np.linalg.solve(J, -F)
        except np.linalg.LinAlgError:
            break
        if not np.all(np.isfinite(step)):
            break
        v = v + step[:n]; lam = lam + step[n]
        if abs(step[n]) < 1e-14 * max(1.0, abs(lam)):
            break
    return lam


def _candidates(A0, As, taus, n_nodes):
    """Collocation eigenvalues of the discretised generator (Chebyshev, ``n_nodes``), resolved part."""
    n = A0.shape[0]
    tmax = max(taus)
    x, D = _cheb(n_nodes)
    theta = tmax / 2 * (x - 1)          # x_0 = 1 -> theta = 0
    D = D * (2.0 / tmax)
    w = _bary_weights(n_nodes)
    M = np.kron(D, np.eye(n))
    row0 = np.kron(np.eye(n_nodes + 1)[0], A0)
    for A, t in zip(As, taus):
        row0 = row0 + np.kron(_interp_row(theta, w, -t), A)
    M[:n, :] = row0
    ev = np.linalg.eigvals(M)
    # keep the part of the spectrum the collocation resolves
    return ev[np.abs(ev) < 0.5 * n_nodes / tmax * math.pi + 1.0] if ev.size else ev


def _refined(lam, A0, As, taus, normA):
    """Newton from ``lam``; ``(root, residual)`` (residual inf when Newton failed)."""
    with np.errstate(all="ignore"):
        r = _newton(complex(lam), A0, As, taus)
        if not np.isfinite(r):
            return complex(lam), math.inf
        M, _ = _delta(r, A0, As, taus)
        try:
            rs = np.linalg.svd(M, compute_uv=False)[-1] / (normA + abs(r))
        except np.linalg.LinAlgError:
            return r, math.inf
    return r, float(rs)


def _follow_chains(roots, newton, sigma, box, step, budget=5000):
    """New roots right of ``sigma`` inside ``box`` reached by Newton from ``r +- i step`` of known ones."""
    known = [complex(r) for r in roots]
    todo = [r for r in known if r.real > sigma]
    new = []

    def dup(r):
        return any(abs(r - q) < 1e-7 * max(1.0, abs(r)) for q in known)

    while todo and budget > 0:
        r = todo.pop()
        for s0 in (r + 1j * step, r - 1j * step):
            if not (box[2] <= s0.imag <= box[3]):
                continue
            budget -= 1
            q = newton(s0)
            if q is None or not (q.real > sigma and box[0] <= q.real <= box[1] and box[2] <= q.imag <= box[3]):
                continue
            for qq in ((q, q.conjugate()) if abs(q.imag) > 1e-12 * max(1.0, abs(q)) else (q,)):
                if not dup(qq):
                    known.append(qq); new.append(qq); todo.append(qq)
    return new


#: residual below which a Newton-refined value is accepted as a root
ROOT_RESIDUAL = 1e-8


def characteristic_roots(A0, delayed, delays_s, *, n_nodes=None, n_roots=12, tol_real=1e-9, certify=True,
                         max_nodes_size=1500) -> CharacteristicRoots:
    """Rightmost roots of ``det(lam I - A0 - sum_k A_k e^{-lam tau_k}) = 0``, certified.

    Candidates come from Chebyshev collocation of the infinitesimal generator,
    refined by Newton's method.  The number of roots right of a line
    ``Re s = sigma`` (just left of the rightmost root, or of 0) is then
    counted by the argument principle on a rectangle that the bound
    ``|s| <= ||A0|| + sum_k ||A_k|| exp(-sigma tau_k)`` shows to contain them all
    (:mod:`ecocc.stability.certify`); roots the collocation missed are
    located by bisecting that rectangle until the counts agree.

    Parameters
    ----------
    A0 : (n, n) array
        Jacobian of the current state, 1/s.
    delayed : sequence of (n, n) arrays
        Jacobians ``A_k`` of the delayed states, 1/s (or one array).
    delays_s : sequence of float
        Delays ``tau_k``, seconds (>= 0), one per ``A_k``.
    n_nodes : int, optional
        Chebyshev degree ``N`` (matrix size ``(N+1) n``).  Default: enough to
        resolve the root bound ``R(0)`` (``N ~ 2 R tau_max / pi``), at most
        ``max_nodes_size / n``; the certification finds what it misses.
    n_roots : int
        How many rightmost roots to return.
    tol_real : float
        Real parts within ``tol_real`` (1/s) of 0 are called marginal.
    certify : bool
        Count the roots by the argument principle (default).  ``False``:
        collocation + Newton only, status ``"uncertain"``.
    max_nodes_size : int
        Largest collocation matrix size ``(N+1) n`` of the default ``n_nodes``.

    Returns
    -------
    CharacteristicRoots
        ``status``: ``"certified"`` (every root right of
        ``certified_right_of_per_s`` is in ``roots_per_s``), ``"marginal"``
        (certified, but the rightmost real part is within ``tol_real`` of 0),
        ``"uncertain"`` (the count failed or disagrees; ``messages`` say how),
        ``"unconverged"`` (no root converged).  ``stable`` is True only when
        certified; an unstable verdict rests on a converged root with
        ``Re > tol_real`` and needs no count.

    Raises
    ------
    InputError
        For matrices that are not square and alike, one per delay, or not finite, negative or
        non-finite delays, or ``n_nodes`` below 2.
    """
    from . import certify as cz
    A0 = np.atleast_2d(np.asarray(A0, float))
    if isinstance(delayed, np.ndarray) and delayed.ndim == 2:
        delayed = [delayed]
    As = [np.atleast_2d(np.asarray(A, float)) for A in delayed]
    taus = [float(t) for t in np.atleast_1d(delays_s)]
    n = A0.shape[0]
    if A0.shape != (n, n) or any(A.shape != (n, n) for A in As) or len(As) != len(taus):
        raise InputError("characteristic_roots", (A0.shape, [A.shape for A in As], taus),
                         "square A0 and one A_k of the same shape per delay")
    if any(t < 0 or not math.isfinite(t) for t in taus):
        raise InputError("delays_s", taus, "finite delays >= 0")
    if not (np.all(np.isfinite(A0)) and all(np.all(np.isfinite(A)) for A in As)):
        raise InputError("characteristic_roots", "non-finite matrix entries", "finite A0 and A_k")
    if n_nodes is not None and (int(n_nodes) != n_nodes or n_nodes < 2):
        raise InputError("n_nodes", n_nodes, "an integer >= 2")
    # delays of 0 belong to A0
    A0 = A0 + sum((A for A, t in zip(As, taus) if t == 0.0), np.zeros_like(A0))
    As, taus = [A for A, t in zip(As, taus) if t > 0], [t for t in taus if t > 0]
    A0, As = cz.balance(A0, As)
    msgs = []
    if not taus:
        ev = np.linalg.eigvals(A0)
        ev = ev[np.argsort(-ev.real)]
        rm = complex(ev[0])
        status = "marginal" if abs(rm.real) <= tol_real else "certified"
        return CharacteristicRoots(ev[:n_roots], np.zeros(min(n_roots, ev.size)), rm, bool(rm.real < -tol_real),
                                   0, status, ("no delay: eigenvalues of A0 + sum A_k",), -math.inf, n, True)
    tmax = max(taus)
    normA = 1.0 + np.linalg.norm(A0) + sum(np.linalg.norm(A) for A in As)
    nA0, nAs = float(np.linalg.norm(A0, 2)), [float(np.linalg.norm(A, 2)) for A in As]
    R0 = cz.root_bound(nA0, nAs, taus, 0.0)
    n_cap = max(8, int(max_nodes_size // n) - 1)
    if n_nodes is None:
        n_nodes = int(min(max(16, math.ceil(2.2 * R0 * tmax / math.pi) + 8), n_cap))
        if 2.2 * R0 * tmax / math.pi + 8 > n_cap:
            msgs.append(f"collocation capped at N = {n_nodes} (the root bound {R0:.4g} 1/s needs "
                        f"N ~ {2.2 * R0 * tmax / math.pi:.0f}); the count finds what it misses")
    n_nodes = int(n_nodes)
    ev = _candidates(A0, As, taus, n_nodes)
    ev = ev[np.argsort(-ev.real)][: max(2 * n_roots, 16)]  # the count finds any root these miss
    roots, res = [], []
    for lam in ev:
        r, rs = _refined(lam, A0, As, taus, normA)
        if not rs < ROOT_RESIDUAL or abs(r - lam) > 0.5 * (1 + abs(lam)):
            continue  # Newton failed or wandered off: a candidate, not a root
        for q in ((r, r.conjugate()) if abs(r.imag) > 1e-12 * max(1.0, abs(r)) else (r,)):  # real matrices
            if not any(abs(q - p) < 1e-8 * max(1, abs(q)) for p in roots):
                roots.append(q); res.append(rs)
    roots = np.array(roots, complex); res = np.array(res, float)

    cert_sigma, n_right, complete = math.nan, -1, False
    if certify:
        f = lambda s: cz.char_det(s, A0, As, taus)  # noqa: E731

        def newton(s0):
            r, rs = _refined(s0, A0, As, taus, normA)
            return r if rs < ROOT_RESIDUAL else None

        # the lowest line whose rectangle stays manageable: R(sigma) <= 4 R(0) + 1
        cap = 4.0 * R0 + 1.0
        lo, hi = -1.0, 0.0
        while cz.root_bound(nA0, nAs, taus, lo) < cap and lo > -1e6:
            lo *= 2
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if cz.root_bound(nA0, nAs, taus, mid) > cap else (lo, mid)
        sigma_floor = hi
        k = None
        for _round in range(4):  # a search that finds roots further right moves the line: count again
            rm_re = float(roots.real.max()) if roots.size else 0.0
            delta = 0.02 * abs(rm_re) + 0.01 / tmax + 1e-6
            sigma = max(min(rm_re, 0.0) - delta, sigma_floor)
            for attempt in range(4):
                Rb = 1.02 * cz.root_bound(nA0, nAs, taus, sigma) + 1e-3
                box = (sigma, Rb, -Rb, Rb)
                h0 = min(Rb / 16, 0.5 / tmax)
                k, _ = cz.count_zeros(f, box, h0)
                if k is not None:
                    break
                sigma -= delta * (1.3 + attempt)  # a root on the line: move the line left
            if k is None:
                break
            have = int(np.sum(roots.real > sigma)) if roots.size else 0
            if k <= have:
                break
            # roots of a long delay come in chains spaced about 2 pi / tau_max along the imaginary axis:
            # Newton from each known root's neighbours first, then the box search for what is left
            newr = _follow_chains(roots, newton, sigma, box, 2 * math.pi / tmax)
            if newr:
                roots = np.concatenate([roots, np.array(newr, complex)])
                res = np.concatenate([res, [_refined(r, A0, As, taus, normA)[1] for r in newr]])
            if k > int(np.sum(roots.real > sigma)):
                more, _ok = cz.find_missing(f, newton, box, roots[roots.real > sigma] if roots.size else roots, h0)
                newr = list(newr) + list(more)
            else:
                more = []
            if more:
                roots = np.concatenate([roots, np.array(more, complex)])
                res = np.concatenate([res, [_refined(r, A0, As, taus, normA)[1] for r in more]])
            if not newr:
                break
            msgs.append(f"{len(newr)} root(s) right of Re s = {sigma:.4g} 1/s that the collocation "
                        f"(N = {n_nodes}) missed were found by the argument-principle search")
            if float(roots.real.max()) <= rm_re:
                have = int(np.sum(roots.real > sigma))
                break
        if k is not None and k > have:
            # multiple roots (e.g. N - 1 identical modes of N identical flows) count once in the list: count
            # each listed root's multiplicity in a small box around it and repeat it that many times
            right = roots[roots.real > sigma]
            extra_r, extra_res = [], []
            for i, r in enumerate(right):
                others = np.delete(right, i)
                rad = 0.3 * float(np.min(np.abs(others - r))) if others.size else 0.1 * (1 + abs(r))
                rad = min(rad, 0.1 * (1 + abs(r)), 0.5 * (r.real - sigma))
                mk, _ = cz.count_zeros(f, (r.real - rad, r.real + rad, r.imag - rad, r.imag + rad), rad / 8)
                if mk is not None and mk > 1:
                    extra_r += [r] * (mk - 1)
                    extra_res += [_refined(r, A0, As, taus, normA)[1]] * (mk - 1)
            if extra_r:
                roots = np.concatenate([roots, np.array(extra_r, complex)])
                res = np.concatenate([res, extra_res])
                have = int(np.sum(roots.real > sigma))
                msgs.append(f"{len(extra_r)} repeated root(s) counted by multiplicity")
        if k is None:
            msgs.append("argument-principle count failed (roots on every tried line or sampling budget spent)")
        else:
            cert_sigma, n_right = float(sigma), int(k)
            complete = k == have
            if not complete:
                msgs.append(f"the argument principle counts {k} root(s) with Re s > {sigma:.4g} 1/s, "
                            f"{have} were found")
    else:
        msgs.append("not certified (certify=False): collocation + Newton may miss roots")
    if not roots.size:
        return CharacteristicRoots(roots, res, complex("nan"), False, n_nodes, "unconverged",
                                   tuple(msgs + ["no candidate converged"]), cert_sigma, n_right, False)
    # by decreasing real part; of a conjugate pair (real parts equal to round-off) the one with Im >= 0 first
    key_re = np.round(roots.real / (1e-9 * max(1.0, float(np.abs(roots).max()))))
    order = np.lexsort((-roots.imag, -key_re))
    roots, res = roots[order], res[order]
    rm = complex(roots[0])
    if complete:
        status = "marginal" if abs(rm.real) <= tol_real else "certified"
        if rm.real < cert_sigma:
            msgs.append(f"certified: no root with Re s > {cert_sigma:.4g} 1/s (the rightmost root found, "
                        f"{rm.real:.4g}, lies left of that line and is not certified as the rightmost)")
        stable = bool(rm.real < -tol_real)
    else:
        status = "uncertain"
        stable = False  # an unstable verdict rests on a converged root; a stable one needs the count
        if rm.real > tol_real:
            msgs.append(f"unstable regardless: a converged root at {rm:.6g}")
    return CharacteristicRoots(roots[:n_roots], res[:n_roots], rm, stable, n_nodes, status, tuple(msgs),
                               cert_sigma, n_right, bool(complete and rm.real >= cert_sigma))
