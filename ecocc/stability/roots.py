"""Characteristic roots of a linear DDE by Chebyshev collocation.

``z'(t) = A0 z(t) + sum_k A_k z(t - tau_k)``.  The infinitesimal generator
of the solution semigroup is discretised on ``N + 1`` Chebyshev points of
``[-tau_max, 0]`` (Breda, Maset & Vermiglio; DDE-BIFTOOL's
``dde_stst_eig_cheb``): derivative rows from the Chebyshev differentiation
matrix, the row at ``theta = 0`` is the DDE itself with the delayed values
interpolated.  Its eigenvalues approximate the rightmost roots; each is then
refined by Newton's method on ``Delta(lam) v = 0, c^T v = 1`` with
``Delta(lam) = lam I - A0 - sum_k A_k exp(-lam tau_k)``, and the residual
``sigma_min(Delta(lam)) / ||Delta||`` is reported.  Units: 1/s.
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
        Refined roots (1/s), sorted by decreasing real part.
    residuals : ndarray
        ``sigma_min(Delta(lam)) / (1 + ||A0|| + sum ||A_k|| + |lam|)``.
    rightmost_per_s : complex
    stable : bool
        ``Re(rightmost) < -tol_real``.
    n_nodes : int
    status : str
        ``"ok"``, ``"marginal"`` (|Re| <= tol_real) or ``"unconverged"``.
    messages : tuple of str
    """

    roots_per_s: np.ndarray
    residuals: np.ndarray
    rightmost_per_s: complex
    stable: bool
    n_nodes: int
    status: str
    messages: tuple = ()


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


def characteristic_roots(A0, delayed, delays_s, *, n_nodes=40, n_roots=12, tol_real=1e-9) -> CharacteristicRoots:
    """Rightmost roots of ``det(lam I - A0 - sum_k A_k e^{-lam tau_k}) = 0``.

    Parameters
    ----------
    A0 : (n, n) array
    delayed : sequence of (n, n) arrays ``A_k`` (or one array)
    delays_s : sequence of float ``tau_k`` (s, >= 0)
    n_nodes : int
        Chebyshev degree ``N`` (matrix size ``(N+1) n``).
    n_roots : int
        How many rightmost roots to refine and return.
    tol_real : float
        Real parts within ``tol_real`` (1/s) of 0 are called marginal.
    """
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
    msgs = []
    tmax = max(taus) if taus else 0.0
    if tmax == 0.0:
        ev = np.linalg.eigvals(A0 + sum(As) if As else A0)
    else:
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
        ev = ev[np.abs(ev) < 0.5 * n_nodes / tmax * math.pi + 1.0] if ev.size else ev
    ev = ev[np.argsort(-ev.real)][: 3 * n_roots]
    normA = 1.0 + np.linalg.norm(A0) + sum(np.linalg.norm(A) for A in As)
    roots, res = [], []
    for lam in ev:
        with np.errstate(all="ignore"):
            r = _newton(complex(lam), A0, As, taus) if As else complex(lam)
            if not np.isfinite(r) or abs(r - lam) > 0.5 * (1 + abs(lam)):
                r = complex(lam)  # Newton wandered off: keep the collocation value, residual tells
            M, _ = _delta(r, A0, As, taus)
            try:
                rs = np.linalg.svd(M, compute_uv=False)[-1] / (normA + abs(r))
            except np.linalg.LinAlgError:
                continue
        if any(abs(r - q) < 1e-8 * max(1, abs(r)) for q in roots):
            continue
        roots.append(r); res.append(rs)
    roots = np.array(roots); res = np.array(res)
    order = np.argsort(-roots.real)
    roots, res = roots[order][:n_roots], res[order][:n_roots]
    good = res < 1e-8
    if np.any(good) and np.any(~good & (roots.real > roots[good][0].real)):
        msgs.append(f"{int(np.sum(~good & (roots.real > roots[good][0].real)))} unconverged collocation "
                    "eigenvalue(s) right of the rightmost refined root (raise n_nodes)")
    if not np.any(good):
        return CharacteristicRoots(roots, res, complex("nan"), False, n_nodes, "unconverged", tuple(msgs))
    rm = roots[good][0]
    status = "marginal" if abs(rm.real) <= tol_real else "ok"
    return CharacteristicRoots(roots, res, complex(rm), bool(rm.real < -tol_real), n_nodes, status, tuple(msgs))
