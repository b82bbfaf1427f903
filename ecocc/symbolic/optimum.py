"""Symmetric optimum tuning of a double-integrator loop, derived with SymPy."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sympy


@dataclass(frozen=True)
class SymmetricOptimum:
    """Result of :func:`symmetric_optimum`.

    Attributes
    ----------
    status : str
        ``"ok"`` or ``"not applicable"``.
    message : str
    matched : dict
        ``{"K0/Ti": ..., "tau_c": ..., "T0": ...}`` in terms of the loop's
        parameters (from matching coefficients of ``L`` with the PI +
        first-order-lag + integrator template).
    conditions : dict
        The symmetric-optimum relations derived: ``tau_c = a^2 T0``
        (imposed) and ``K0/Ti = 1/(a^3 T0^2)`` (derived from unit gain at the
        frequency of maximum phase ``1/sqrt(tau_c T0)``).
    solution : dict
        Parameter symbol -> expression (e.g. ``{beta: alpha/2, T: 4/alpha}``).
    crossover_rad_s : sympy.Expr
        ``1/(a T0)``.
    phase_margin_deg : sympy.Expr
        ``atan(a) - atan(1/a)`` in degrees.
    closed_loop_poles : ndarray or None
        Delay-free closed-loop poles (rad/s) at ``values``.
    """

    status: str
    message: str
    matched: dict
    conditions: dict
    solution: dict
    crossover_rad_s: object = None
    phase_margin_deg: object = None
    closed_loop_poles: np.ndarray | None = None


def symmetric_optimum(L, s=None, *, a=2, solve_for=None, values=None) -> SymmetricOptimum:
    """Tune ``L(s)`` by the symmetric optimum.

    ``L`` is matched to ``K0/Ti (1 + tau_c s) / (s^2 (1 + T0 s))``; the
    symmetric optimum puts the gain crossover at the frequency of maximum
    phase lead, ``w_m = 1/sqrt(tau_c T0)`` (derived: ``d phase/dw = 0``), with
    ``tau_c = a^2 T0`` and unit gain there (derived: ``K0/Ti = 1/(a^3
    T0^2)``; a = 2 gives ``Ti = 8 K0 T0^2``).

    Parameters
    ----------
    L : sympy.Expr or SyncLoop
        The open loop without its delay factor (a :class:`SyncLoop` gives its ``L`` and ``s``).
    s : sympy.Symbol, optional
        The Laplace variable (rad/s); taken from a :class:`SyncLoop`, required with an expression.
    a : number
        Symmetric-optimum ratio (default 2: ``tau_c = 4 T0``).
    solve_for : list of sympy.Symbol, optional
        Parameters to solve for; default: the symbols of ``L`` that do not
        appear in ``T0`` (the plant lag is kept as given).
    values : dict, optional
        Symbol -> number for the numeric closed-loop poles.

    Returns
    -------
    SymmetricOptimum
        ``status = "ok"`` with the matched template, the relations and the solution (crossover in rad/s,
        phase margin in degrees); ``"not applicable"`` with the reason when ``L`` is not of the template's
        form or the equations have no solution.
    """
    if hasattr(L, "L"):
        s = L.s if s is None else s
        L = L.L
    a = sympy.nsimplify(a)
    g, tc, T0, w = sympy.symbols("g tau_c T_0 omega", positive=True)
    num, den = sympy.fraction(sympy.cancel(sympy.together(L)))
    pd = sympy.Poly(den, s)
    # number of integrators = multiplicity of the root s = 0 of the denominator
    k = 0
    while pd.eval(0) == 0:
        pd = sympy.Poly(sympy.cancel(pd.as_expr() / s), s)
        k += 1
    if k != 2 or pd.degree() != 1 or sympy.Poly(num, s).degree() > 1:
        return SymmetricOptimum("not applicable",
                                f"L(s) = {sympy.factor(L)} has {k} integrator(s) and denominator degree "
                                f"{sympy.Poly(den, s).degree()}; the symmetric optimum needs exactly the form "
                                "K0/Ti (1 + tau_c s)/(s^2 (1 + T0 s))", {}, {}, {})
    # polynomial identity num * den_template - num_template * den == 0 for all s
    ident = sympy.Poly(sympy.expand(num * s ** 2 * (1 + T0 * s) - g * (1 + tc * s) * den), s)
    matched = sympy.solve(ident.all_coeffs(), [g, tc, T0], dict=True)
    if not matched:
        return SymmetricOptimum("not applicable", "coefficient matching has no solution", {}, {}, {})
    mt = matched[0]
    # derive the symmetric-optimum relations from the template itself
    phase = sympy.atan(w * tc) - sympy.atan(w * T0)
    w_m = [r for r in sympy.solve(sympy.diff(phase, w), w) if r.is_positive is not False][0]
    gain2 = sympy.simplify((g ** 2 * (1 + w ** 2 * tc ** 2) / (w ** 4 * (1 + w ** 2 * T0 ** 2))).subs(w, w_m))
    g_rule = [r for r in sympy.solve(sympy.Eq(gain2.subs(tc, a ** 2 * T0), 1), g) if r.is_positive is not False][0]
    conditions = {"tau_c": a ** 2 * T0, "K0/Ti": sympy.simplify(g_rule), "w_m": sympy.simplify(w_m.subs(tc, a ** 2 * T0))}
    eqs = [sympy.Eq(mt[tc], (a ** 2 * T0).subs(T0, mt[T0])), sympy.Eq(mt[g], g_rule.subs(T0, mt[T0]))]
    if solve_for is None:
        solve_for = sorted(L.free_symbols - {s} - mt[T0].free_symbols, key=sympy.default_sort_key)
    sol = sympy.solve(eqs, solve_for, dict=True)
    if not sol:
        return SymmetricOptimum("not applicable", f"no solution for {solve_for}",
                                {"K0/Ti": mt[g], "tau_c": mt[tc], "T0": mt[T0]}, conditions, {})
    sol = {k_: sympy.simplify(v) for k_, v in sol[0].items()}
    wc = sympy.simplify((1 / (a * T0)).subs(T0, mt[T0]))
    pm = sympy.simplify((sympy.atan(a) - sympy.atan(1 / a)) * 180 / sympy.pi)
    poles = None
    if values is not None:
        Lt = sympy.cancel(L.subs(sol).subs(values))
        n2, d2 = sympy.fraction(sympy.together(Lt))
        poly = sympy.Poly(sympy.expand(n2 + d2), s)
        poles = np.roots([float(c) for c in poly.all_coeffs()])
    return SymmetricOptimum("ok", "matched and solved", {"K0/Ti": mt[g], "tau_c": mt[tc], "T0": mt[T0]},
                            conditions, sol, wc, pm, poles)
