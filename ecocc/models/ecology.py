"""The population-ecology models the protocols borrow from.

* Logistic (Verhulst) growth, eq. (1) of 002_2fcfdbe8ba8bf605.txt::

      x'(t) = r x(t) (1 - x(t - delay) / K)

  ``delay = 0`` is the plain logistic equation with the closed form
  ``x(t) = K / (1 + (K/x0 - 1) e^{-r t})``; ``delay > 0`` is Hutchinson's
  delayed logistic equation, whose equilibrium ``K`` is locally
  asymptotically stable iff ``r * delay < pi/2``.

* n-species Lotka--Volterra competition, eq. (2)-(3) of 002::

      N_i'(t) = eps_i N_i (1 - (N_i + sum_{j != i} gamma_ij N_j) / K_i)

  with a join time per species (species ``i`` is absent, ``N_i = 0``, before
  ``join_s[i]`` and starts at ``N0[i]``).  Fig. 1 of 002: K = 100,
  eps = 1.95, gamma = 0.9, species 2 joins at 10 s.  Two identical species
  coexist iff gamma < 1 (eq. 4 of 002: gamma_12 < K1/K2, gamma_21 < K2/K1).

* The discrete logistic map ``x_{k+1} = x_k + eps x_k (1 - x_k/K)``; its fixed
  point ``K`` has multiplier ``1 - eps``, so it is asymptotically stable iff
  ``0 < eps < 2`` (002 Section III-C: "the population of the species does not
  converge with eps >= 2").  At eps = 2 exactly the multiplier is -1: the
  iterates still approach K, but only algebraically (no geometric rate).

Both continuous models run on either engine (``engine=``, as every simulation in ecocc): the NumPy
reference (:class:`ecocc.dde.problem.DDEProblem` and :func:`ecocc.dde.adaptive.solve_dde`, the problems
below), or compiled: the same equations written as SymPy expressions (:mod:`ecocc.dde.user`, the
interface for a user's own DDE) go through the generated numba right-hand side and the generic
integrator that the network models use.  The parameters are entries of the compiled kernel's parameter
array, so one kernel per model (per species count for Lotka--Volterra) serves every parameter value.
Lotka--Volterra's joins are state jumps, which the compiled kernel does not take: it runs from one join
to the next (the model has no delay, so the state at a join is all the next run needs).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..dde.adaptive import Status, solve_dde
from ..dde.problem import DDEProblem, Lookup
from ..errors import InputError, check, check_finite


@dataclass
class EcologyResult:
    """Output of an ecology simulation: samples (time x species) and status.

    Attributes
    ----------
    t_s : ndarray
        Sample times (s), shape ``(n_out,)``.
    states : ndarray
        Populations, shape ``(n_out, number of species)`` (units of ``K``).
    status : Status
        The solver's status; anything but ``SUCCESS`` means the samples may be wrong.
    message : str
        The solver's message.
    """

    t_s: np.ndarray
    states: np.ndarray
    status: Status
    message: str

    @property
    def ok(self) -> bool:
        """True when the solver reached the end time with the requested accuracy."""
        return self.status == Status.SUCCESS


def _t_eval(t_end, n_out):
    n_out = int(n_out)
    check(n_out >= 2, "n_out", n_out, "an integer >= 2")
    return np.linspace(0.0, t_end, n_out)


# ---------------------------------------------------------------------------
# logistic / Hutchinson
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class LogisticParams:
    """Logistic / Hutchinson model ``x' = r x (1 - x(t - delay)/K)`` (eq. 1 of 002).

    Parameters
    ----------
    r_per_s : float
        Intrinsic growth rate r (1/s, > 0), default 1.
    K : float
        Carrying capacity (> 0; any population unit, e.g. packets), default 100.
    x0 : float
        Initial population, also the constant history for t < 0 (> 0, unit of ``K``), default 1.
    delay_s : float
        Delay of the density feedback (s, >= 0), default 0.

    Raises
    ------
    InputError
        If a value is not finite or breaks its bound.
    """

    r_per_s: float = 1.0
    K: float = 100.0
    x0: float = 1.0
    delay_s: float = 0.0

    def __post_init__(self):
        object.__setattr__(self, "r_per_s", check_finite("LogisticParams.r_per_s", self.r_per_s, positive=True))
        object.__setattr__(self, "K", check_finite("LogisticParams.K", self.K, positive=True))
        object.__setattr__(self, "x0", check_finite("LogisticParams.x0", self.x0, positive=True))
        object.__setattr__(self, "delay_s", check_finite("LogisticParams.delay_s", self.delay_s, nonneg=True))

    def simulate(self, t_end_s: float, **kw) -> "EcologyResult":
        """Integrate the model from 0 to ``t_end_s``: :func:`simulate_logistic` with these parameters.

        Parameters
        ----------
        t_end_s : float
            End time (s, > 0).
        **kw
            ``rtol``, ``atol``, ``n_out``, ``method`` of :func:`simulate_logistic`.

        Returns
        -------
        EcologyResult
            Samples of ``x`` and the solver status.
        """
        return simulate_logistic(self, t_end_s, **kw)

    def solution(self, t):
        """Closed form of the undelayed equation at times ``t``: :func:`logistic_solution`.

        Parameters
        ----------
        t : array_like
            Times (s).

        Returns
        -------
        ndarray
            ``x(t)`` (unit of ``K``), ``delay_s`` ignored.
        """
        return logistic_solution(t, self)


def logistic_solution(t, P: LogisticParams):
    """Closed form of the undelayed logistic equation: ``x(t) = K / (1 + (K/x0 - 1) e^{-r t})``.

    Parameters
    ----------
    t : array_like
        Times (s).
    P : LogisticParams
        ``r_per_s``, ``K``, ``x0`` (``delay_s`` is ignored).

    Returns
    -------
    ndarray
        ``x(t)`` (unit of ``K``), shape of ``t``.
    """
    t = np.asarray(t, dtype=float)
    return P.K / (1.0 + (P.K / P.x0 - 1.0) * np.exp(-P.r_per_s * t))


def hutchinson_stable(P: LogisticParams) -> bool:
    """Local asymptotic stability of x* = K for Hutchinson's delayed logistic: ``r delay < pi/2``.

    Parameters
    ----------
    P : LogisticParams
        ``r_per_s`` (1/s) and ``delay_s`` (s).

    Returns
    -------
    bool
        True iff ``r_per_s * delay_s < pi/2`` (always True without delay).
    """
    return P.r_per_s * P.delay_s < math.pi / 2


def logistic_problem(P: LogisticParams) -> DDEProblem:
    """The delayed logistic equation as a one-component :class:`~ecocc.dde.problem.DDEProblem`.

    Parameters
    ----------
    P : LogisticParams
        The model; ``x0`` is also the constant history before t = 0.

    Returns
    -------
    DDEProblem
        ``x' = r x (1 - x(t - delay_s)/K)``, state named ``"x"``, one lookup at ``delay_s``.
    """
    r, K = P.r_per_s, P.K

    def rhs(t, y, Z, lo, hi):
        return r * y * (1.0 - Z[0] / K)

    return DDEProblem(n=1, rhs=rhs, y0=np.array([P.x0]), lookups=[Lookup([0], [P.delay_s])], names=["x"])


_SYM: dict = {}


def _engine(engine, method):
    """The engine of an ecology run: ``"numba"`` or ``"numpy"`` (the compiled kernel is RK45 only)."""
    from ..dde.engine import ENGINES, HAVE_NUMBA, default_engine
    if engine not in ENGINES:
        raise InputError("engine", engine, f"one of {ENGINES}")
    if engine == "auto":
        engine = default_engine()
    if engine == "auto":
        return "numba" if HAVE_NUMBA and method == "RK45" else "numpy"
    if engine == "numba" and method != "RK45":
        raise InputError("method", method, "'RK45' with engine='numba' (the compiled kernel's method)")
    return engine


def logistic_dde():
    """The delayed logistic equation as a :class:`ecocc.dde.user.SympyDDE` with parameters ``r``, ``K``,
    ``delay``, ``x0`` (set them with ``with_params``); built once per process.

    Returns
    -------
    SympyDDE
        ``x' = r x (1 - x(t - delay)/K)``, constant history ``x0``.
    """
    if "logistic" not in _SYM:
        import sympy as sp

        from ..dde.user import sympy_dde, t, y
        r, K, d, x0 = sp.symbols("r K delay x0", real=True)
        _SYM["logistic"] = sympy_dde([r * y(0) * (1 - y(0, t - d) / K)], history=[x0],
                                     params={r: 1.0, K: 1.0, d: 1.0, x0: 1.0}, names=["x"])
    return _SYM["logistic"]


def simulate_logistic(P: LogisticParams, t_end_s: float, *, rtol=1e-9, atol=1e-9, n_out=1001,
                      method="RK45", engine="auto") -> EcologyResult:
    """Integrate the (delayed) logistic equation with the project's adaptive DDE solver.

    Parameters
    ----------
    P : LogisticParams
        The model.
    t_end_s : float
        End time (s, > 0).
    rtol, atol : float
        Tolerances of :func:`ecocc.dde.adaptive.solve_dde` (default 1e-9 each; atol in population units).
    n_out : int
        Number of equally spaced output samples on ``[0, t_end_s]`` (>= 2, default 1001).
    method : {"RK45", "RK23"}
        Runge-Kutta pair of the NumPy solver (the compiled one is RK45).
    engine : {"auto", "numba", "numpy"}
        ``"auto"``: compiled (:mod:`ecocc.dde.user`) where numba is installed and ``method="RK45"``, else
        the NumPy solver.

    Returns
    -------
    EcologyResult
        ``states`` of shape ``(n_out, 1)``; check ``ok`` / ``status`` before using them.

    Raises
    ------
    InputError
        If ``t_end_s`` is not finite and positive, ``n_out < 2``, or a solver setting is not allowed.
    """
    t_end = check_finite("t_end_s", t_end_s, positive=True)
    t_eval = _t_eval(t_end, n_out)
    if _engine(engine, method) == "numba":
        dde = logistic_dde().with_params(dict(r=P.r_per_s, K=P.K, delay=P.delay_s, x0=P.x0))
        sol = dde.solve(t_end, t_eval=t_eval, rtol=rtol, atol=atol, engine="numba")
    else:
        sol = solve_dde(logistic_problem(P), t_end, rtol=rtol, atol=atol, t_eval=t_eval, method=method)
    return EcologyResult(sol.t, sol.y, sol.status, sol.message)


# ---------------------------------------------------------------------------
# Lotka--Volterra competition
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class LotkaVolterraParams:
    """Lotka-Volterra competition ``N_i' = eps_i N_i (1 - (N_i + sum_{j != i} gamma_ij N_j)/K_i)`` (eq. 2-3 of 002).

    Defaults: Fig. 1 of 002 (K = 100, eps = 1.95, gamma = 0.9, species 2
    joins at 10 s; N0 = 1 is our choice, the paper does not print it).
    Validated values are stored as tuples (``gamma`` as an n x n tuple of
    tuples with a unit diagonal).

    Parameters
    ----------
    n : int
        Number of species (>= 1).
    K : float or sequence of float
        Carrying capacities (scalar or n values, > 0; any population unit).
    eps_per_s : float or sequence of float
        Growth rates (1/s; scalar or n values, > 0).
    gamma : float or array_like
        Competition coefficients (dimensionless, >= 0): a scalar (every off-diagonal entry) or an
        n x n matrix whose diagonal is ignored.
    N0 : float or sequence of float
        Population of each species when it joins (scalar or n values, > 0).
    join_s : float or sequence of float
        Join time of each species (s; scalar or n values, >= 0).

    Raises
    ------
    InputError
        If ``n`` is not an integer >= 1, a field has the wrong length or shape, or a value is not finite
        or breaks its bound.
    """

    n: int = 2
    K: object = 100.0
    eps_per_s: object = 1.95
    gamma: object = 0.9
    N0: object = 1.0
    join_s: object = (0.0, 10.0)

    def __post_init__(self):
        try:
            n = int(self.n)
        except (TypeError, ValueError):
            raise InputError("LotkaVolterraParams.n", self.n, "an integer >= 1") from None
        check(n >= 1 and n == self.n, "LotkaVolterraParams.n", self.n, "an integer >= 1")
        object.__setattr__(self, "n", n)
        for name, pos in (("K", True), ("eps_per_s", True), ("N0", True), ("join_s", False)):
            v = getattr(self, name)
            arr = np.atleast_1d(np.asarray(v, dtype=object))
            if arr.size == 1:
                arr = np.repeat(arr, n)
            check(arr.ndim == 1 and arr.size == n, f"LotkaVolterraParams.{name}", v, f"a scalar or {n} values")
            vals = tuple(check_finite(f"LotkaVolterraParams.{name}", x, positive=pos, nonneg=not pos) for x in arr)
            object.__setattr__(self, name, vals)
        g = self.gamma
        garr = np.asarray(g, dtype=object)
        if garr.ndim == 0:
            gm = np.full((n, n), check_finite("LotkaVolterraParams.gamma", g, nonneg=True))
        else:
            check(garr.shape == (n, n), "LotkaVolterraParams.gamma", g, f"a scalar or an {n} x {n} matrix")
            gm = np.array([[check_finite("LotkaVolterraParams.gamma", x, nonneg=True) for x in row] for row in garr])
        np.fill_diagonal(gm, 1.0)
        object.__setattr__(self, "gamma", tuple(tuple(float(x) for x in row) for row in gm))

    @property
    def interaction(self) -> np.ndarray:
        """The matrix M with M_ii = 1, M_ij = gamma_ij (so N_i' = eps_i N_i (1 - (M N)_i/K_i))."""
        return np.array(self.gamma, dtype=float)

    def simulate(self, t_end_s: float, **kw) -> "EcologyResult":
        """Integrate the model from 0 to ``t_end_s``: :func:`simulate_lotka_volterra` with these parameters.

        Parameters
        ----------
        t_end_s : float
            End time (s, > 0).
        **kw
            ``rtol``, ``atol``, ``n_out``, ``method`` of :func:`simulate_lotka_volterra`.

        Returns
        -------
        EcologyResult
            Samples of every species and the solver status.
        """
        return simulate_lotka_volterra(self, t_end_s, **kw)

    def equilibrium(self) -> np.ndarray:
        """The interior equilibrium ``M N* = K``: :func:`lv_equilibrium`.

        Returns
        -------
        ndarray
            ``N*`` per species (unit of ``K``); entries may be negative when the species cannot coexist.
        """
        return lv_equilibrium(self)


def lv_equilibrium(P: LotkaVolterraParams) -> np.ndarray:
    """Interior equilibrium: the solution of ``M N* = K`` (all species present).

    Parameters
    ----------
    P : LotkaVolterraParams
        The model (``M`` = :attr:`LotkaVolterraParams.interaction`).

    Returns
    -------
    ndarray
        ``N*`` per species (unit of ``K``); an entry <= 0 means no interior equilibrium with that
        species present.

    Raises
    ------
    numpy.linalg.LinAlgError
        If ``M`` is singular (e.g. every gamma_ij = 1).
    """
    return np.linalg.solve(P.interaction, np.array(P.K))


def lv_coexistence(P: LotkaVolterraParams) -> bool:
    """Whether the species coexist at a stable interior equilibrium.

    One species: True.  Two species: eq. (4) of 002, gamma_12 < K1/K2 and
    gamma_21 < K2/K1 (for identical species gamma < 1).  n >= 3 species with a
    symmetric gamma: the interior equilibrium is positive and M is positive
    definite.  For n >= 3 with a non-symmetric gamma only the positivity of the
    interior equilibrium is tested (necessary, not sufficient for stability).

    Parameters
    ----------
    P : LotkaVolterraParams
        The model.

    Returns
    -------
    bool
        The test above.
    """
    M, K = P.interaction, np.array(P.K)
    if P.n == 1:
        return True
    if P.n == 2:
        return M[0, 1] < K[0] / K[1] and M[1, 0] < K[1] / K[0]
    Ns = lv_equilibrium(P)
    sym = np.allclose(M, M.T)
    return bool(np.all(Ns > 0) and (not sym or np.all(np.linalg.eigvalsh(M) > 0)))


def lv_problem(P: LotkaVolterraParams) -> DDEProblem:
    """The Lotka-Volterra system as a :class:`~ecocc.dde.problem.DDEProblem` (no delays).

    Species ``i`` is 0 before ``join_s[i]`` and jumps to ``N0[i]`` at that time (a jump of the
    problem, so the solver stops exactly there).

    Parameters
    ----------
    P : LotkaVolterraParams
        The model.

    Returns
    -------
    DDEProblem
        ``n`` components named ``N1``..``Nn``.
    """
    eps, K, M = np.array(P.eps_per_s), np.array(P.K), P.interaction
    join, N0 = np.array(P.join_s), np.array(P.N0)

    def rhs(t, y, Z, lo, hi):
        return eps * y * (1.0 - (M @ y) / K)

    def apply_jump(t, y):
        y = y.copy()
        hit = np.abs(join - t) <= 1e-9 * max(1.0, abs(t))
        y[hit] = N0[hit]
        return y

    y0 = np.where(join <= 0.0, N0, 0.0)
    late = join[join > 0]
    return DDEProblem(n=P.n, rhs=rhs, y0=y0, jumps=late, apply_jump=apply_jump,
                      names=[f"N{i + 1}" for i in range(P.n)])


def lv_dde(n: int):
    """n-species Lotka--Volterra competition as a :class:`ecocc.dde.user.SympyDDE` (no delay) with
    parameters ``eps_i``, ``K_i``, ``g_i_j`` (i != j) and the initial populations ``N0_i``; built once per
    process and species count.

    Parameters
    ----------
    n : int
        Number of species.

    Returns
    -------
    SympyDDE
        ``N_i' = eps_i N_i (1 - (N_i + sum_{j != i} g_ij N_j)/K_i)``.
    """
    key = ("lv", n)
    if key not in _SYM:
        import sympy as sp

        from ..dde.user import sympy_dde, y
        eps = sp.symbols(f"eps_0:{n}", real=True)
        K = sp.symbols(f"K_0:{n}", real=True)
        N0 = sp.symbols(f"N0_0:{n}", real=True)
        g = {(i, j): sp.Symbol(f"g_{i}_{j}", real=True) for i in range(n) for j in range(n) if i != j}
        f = [eps[i] * y(i) * (1 - (y(i) + sum(g[i, j] * y(j) for j in range(n) if j != i)) / K[i])
             for i in range(n)]
        params = {s: 1.0 for s in (*eps, *K, *N0, *g.values())}
        _SYM[key] = sympy_dde(f, history=list(N0), params=params, names=[f"N{i + 1}" for i in range(n)])
    return _SYM[key]


def _lv_compiled(P: LotkaVolterraParams, t_end, t_eval, rtol, atol):
    """Lotka--Volterra on the compiled kernel, one run from each join to the next (no delay: the state at
    a join is the whole past the next run needs); outputs at a join time are the state before the join,
    as the NumPy solver's."""
    from ..dde.adaptive import Status
    n = P.n
    M = P.interaction
    vals = {f"eps_{i}": P.eps_per_s[i] for i in range(n)}
    vals.update({f"K_{i}": P.K[i] for i in range(n)})
    vals.update({f"g_{i}_{j}": M[i, j] for i in range(n) for j in range(n) if i != j})
    base = lv_dde(n)
    join, N0 = np.array(P.join_s), np.array(P.N0)
    cuts = np.unique(join[(join > 0) & (join < t_end)])
    edges = np.concatenate([[0.0], cuts, [t_end]])
    state = np.where(join <= 0.0, N0, 0.0)
    ts, ys = [], []
    status, message = Status.SUCCESS, "integration reached t_end"
    for k in range(edges.size - 1):
        a, b = edges[k], edges[k + 1]
        if k > 0:
            hit = np.abs(join - a) <= 1e-9 * max(1.0, abs(a))
            state = np.where(hit, N0, state)
        sel = (t_eval > a) & (t_eval <= b) if k > 0 else (t_eval <= b)
        te = t_eval[sel]
        if te.size == 0 or te[-1] < b:
            te = np.concatenate([te, [b]])  # the end state (for the next run)
        dde = base.with_params({**vals, **{f"N0_{i}": state[i] for i in range(n)}}, t0=a)
        sol = dde.solve(b, t_eval=te, rtol=rtol, atol=atol, engine="numba")
        keep = np.isin(sol.t, t_eval[sel])
        ts.append(sol.t[keep])
        ys.append(sol.y[keep])
        if not sol.ok:
            status, message = sol.status, f"run from {a:g} s: {sol.message}"
            if sol.status == Status.FAILED:
                break
        state = sol.y[-1]
    return np.concatenate(ts), np.concatenate(ys), status, message


def simulate_lotka_volterra(P: LotkaVolterraParams, t_end_s: float, *, rtol=1e-9, atol=1e-9, n_out=1001,
                            method="RK45", engine="auto") -> EcologyResult:
    """Integrate n-species Lotka--Volterra competition with join times.

    Parameters
    ----------
    P : LotkaVolterraParams
        The model (with each species' join time).
    t_end_s : float
        End time (s, > 0).
    rtol, atol : float
        Tolerances of :func:`ecocc.dde.adaptive.solve_dde` (default 1e-9 each; atol in population units).
    n_out : int
        Number of equally spaced output samples on ``[0, t_end_s]`` (>= 2, default 1001).
    method : {"RK45", "RK23"}
        Runge-Kutta pair of the NumPy solver (the compiled one is RK45).
    engine : {"auto", "numba", "numpy"}
        ``"auto"``: compiled (:mod:`ecocc.dde.user`) where numba is installed and ``method="RK45"``, else
        the NumPy solver.

    Returns
    -------
    EcologyResult
        ``states`` of shape ``(n_out, n)``; check ``ok`` / ``status`` before using them.

    Raises
    ------
    InputError
        If ``t_end_s`` is not finite and positive, ``n_out < 2``, or a solver setting is not allowed.
    """
    t_end = check_finite("t_end_s", t_end_s, positive=True)
    t_eval = _t_eval(t_end, n_out)
    if _engine(engine, method) == "numba":
        return EcologyResult(*_lv_compiled(P, t_end, t_eval, rtol, atol))
    sol = solve_dde(lv_problem(P), t_end, rtol=rtol, atol=atol, t_eval=t_eval, method=method)
    return EcologyResult(sol.t, sol.y, sol.status, sol.message)


# ---------------------------------------------------------------------------
# discrete logistic map
# ---------------------------------------------------------------------------

def discrete_logistic(eps: float, K: float, x0: float, n_steps: int) -> np.ndarray:
    """Iterates ``x_0 .. x_n`` of the discrete logistic map ``x_{k+1} = x_k + eps x_k (1 - x_k/K)``.

    The discretisation 002 Section III-C warns about (no convergence for eps >= 2).

    Parameters
    ----------
    eps : float
        Growth per step (dimensionless, > 0).
    K : float
        Carrying capacity (> 0).
    x0 : float
        Initial population (> 0, unit of ``K``).
    n_steps : int
        Number of steps (>= 1).

    Returns
    -------
    ndarray
        The ``n_steps + 1`` iterates, starting with ``x0``.

    Raises
    ------
    InputError
        If ``eps``, ``K`` or ``x0`` is not finite and positive, or ``int(n_steps) < 1``.
    """
    eps = check_finite("eps", eps, positive=True)
    K = check_finite("K", K, positive=True)
    x0 = check_finite("x0", x0, positive=True)
    check(int(n_steps) >= 1, "n_steps", n_steps, "an integer >= 1")
    x = np.empty(int(n_steps) + 1)
    x[0] = x0
    for k in range(int(n_steps)):
        x[k + 1] = x[k] + eps * x[k] * (1.0 - x[k] / K)
    return x


def discrete_logistic_stable(eps: float) -> bool:
    """Linear stability of the fixed point x* = K of the discrete logistic map: ``abs(1 - eps) < 1``.

    The multiplier at ``K`` is ``1 - eps``, so the test is ``0 < eps < 2`` (at eps = 2 the iterates still
    approach K, but only algebraically, and this returns False).

    Parameters
    ----------
    eps : float
        Growth per step (dimensionless).

    Returns
    -------
    bool
        True iff ``0 < eps < 2``.
    """
    return 0.0 < eps < 2.0


__all__ = ["EcologyResult", "LogisticParams", "LotkaVolterraParams", "logistic_solution", "hutchinson_stable",
           "logistic_problem", "simulate_logistic", "logistic_dde", "lv_dde",
           "lv_equilibrium", "lv_coexistence", "lv_problem",
           "simulate_lotka_volterra", "discrete_logistic", "discrete_logistic_stable"]
