"""Theorems 2 and 3 of CLTCP (001) and AECP (004), eq. (17)-(33), redone in SymPy step by step.

Run: ``python proofs/aecp_convergence_time.py``.  Each step prints FOLLOWS or
DOES NOT FOLLOW.  The numeric counterexample to Theorem 2's lower bound uses
the delay-free eq. (6) integrated with LSODA (ecocc.claims._huang).
Units: C, x, r in packets/s; q0 in packets; T, t in s; alpha, beta in 1/s.
Every step carries a dimension check (``dims=``, proofs/_steps.py).
"""
import math
import os
import sys

import sympy as sp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _steps import equal, pkt, sec, step, summary, terms_same_dims  # noqa: E402


def theorem2():
    print("== Theorem 2 (convergence to efficiency), eq. (19)-(27)")
    t = sp.symbols("t", nonnegative=True)
    C, N, x0, b, a, q0, T, th = sp.symbols("C N x_0 beta alpha q_0 T theta", positive=True)
    x = sp.Function("x")
    units = {C: pkt / sec, x0: pkt / sec, q0: pkt, T: sec, b: 1 / sec, a: 1 / sec, N: 1, t: sec, th: 1,
             x: pkt / sec}
    # (19) with q = 0: 1 - (N x + (0 - q0)/T)/C = 1 - (N x - q0/T)/C
    step("(19): with q = 0 the link factor is 1 - (N x - q0/T)/C",
         sp.simplify((1 - (N * x0 + (0 - q0) / T) / C) - (1 - (N * x0 - q0 / T) / C)) == 0,
         dims=(1 - (N * x0 + (0 - q0) / T) / C, sp.Integer(1), units))
    step("(19): dimensions of N x and q0/T agree with C", terms_same_dims(N * x0 - q0 / T, C, units),
         dims=(N * x0 - q0 / T, C, units))
    # (20) misprint: x' = r, but (21) needs x = r
    step("(20) 'x_i'(t) = r(t)' yields (21)", False,
         "x' = r makes x a ramp of r; (21) x' = beta x (1 - (N x - q0/T)/C) follows from x = r (then x' = r'), "
         "which is what the text says ('let x_i(t) equal r(t)')",
         dims=[(sp.Derivative(x(t), t), x(t), units), (sp.Derivative(x(t), t), b * x(t) * (1 - (N * x(t) - q0 / T) / C),
                                                        units)])
    # (22): solve (21)
    k_right = 1 + q0 / (C * T)
    sol = sp.dsolve(sp.Eq(x(t).diff(t), b * x(t) * (1 - (N * x(t) - q0 / T) / C)), x(t), ics={x(0): x0})
    K = C * k_right / N
    right = K / (1 + (K / x0 - 1) * sp.exp(-b * k_right * t))
    step("(21) solved by SymPy equals the logistic with K = C(1 + q0/(CT))/N, rate beta(1 + q0/(CT))",
         sp.simplify(sol.rhs - right) == 0, dims=[(sol.rhs, right, units), (right, x0, units)])
    Kp = C * (1 - q0 / (C * T)) / N
    printed = Kp / (1 + (Kp / x0 - 1) * sp.exp(-b * (1 - q0 / (C * T)) * t))
    res = sp.simplify(printed.diff(t) - b * printed * (1 - (N * printed - q0 / T) / C))
    step("(22) as printed (1 - q0/(CT)) solves (21)", res == 0,
         "sign slip: q = 0 < q0 makes the queue term ADD capacity; substituted back the residual is nonzero",
         dims=(sp.Derivative(printed, t), b * printed * (1 - (N * printed - q0 / T) / C), units))
    # (23) -> (24)
    x23 = (C / N) / (1 + (C / (N * x0)) * sp.exp(-b * t))
    t1 = sp.solve(sp.Eq(N * x23 / C, th), t)[0]
    step("(24) approximate t1 = ln(C/(N x0) theta/(1-theta))/beta from (23)",
         sp.simplify(t1 - sp.log(C / (N * x0) * th / (1 - th)) / b) == 0,
         dims=[(t1, t, units), (sp.log(C / (N * x0) * th / (1 - th)) / b, t, units)])
    x22q0 = (C / N) / (1 + (C / (N * x0) - 1) * sp.exp(-b * t))
    t1e = sp.solve(sp.Eq(N * x22q0 / C, th), t)[0]
    pts = [{C: 62500, N: 4, x0: 10, th: sp.Rational(99, 100), b: 1}, {C: 1250, N: 1, x0: 3, th: sp.Rational(1, 2), b: 2}]
    step("(24) exact t1 = ln((C/(N x0) - 1) theta/(1-theta))/beta from (22) with q0 = 0",
         equal(t1e, sp.log((C / (N * x0) - 1) * th / (1 - th)) / b, pts),
         dims=(t1e, sp.log((C / (N * x0) - 1) * th / (1 - th)) / b, units))
    # (25)-(26)
    Kc = C / N
    xg = Kc * sp.exp(sp.log(x0 / Kc) * sp.exp(-a * t))
    step("Gompertz x = K exp(ln(x0/K) e^(-alpha t)) solves (25)",
         sp.simplify(xg.diff(t) - a * xg * (sp.log(Kc) - sp.log(xg))) == 0 and sp.simplify(xg.subs(t, 0) - x0) == 0,
         dims=[(sp.Derivative(xg, t), a * xg * sp.log(Kc / xg), units), (xg.subs(t, 0), x0, units)])
    t2 = sp.log(sp.log(N * x0 / C) / sp.log(th)) / a
    step("(26): x(t2) = theta C/N", sp.simplify(sp.expand_log(sp.log(xg.subs(t, t2) / Kc) - sp.log(th), force=True)) == 0,
         dims=[(t2, t, units), (xg.subs(t, t2), th * C / N, units)])
    step("'Certainly max(t1, t2) < t_theta < t1 + t2'", False,
         "not argued: the coupled system is neither case; numerically (below) the lower bound fails",
         dims=[(t1, t, units), (t2, t, units), (t1 + t2, t, units)])
    from ecocc.claims._huang import aecp_t_theta, pps, thm2_bounds
    Cn, Nn, x0n = pps(500), 4, 10.0
    t1n, t2n = thm2_bounds(Cn, Nn, x0n, 0.99)
    for lab, r0 in (("r0 = x0", x0n), ("r0 = C/N", Cn / Nn)):
        tn = aecp_t_theta(Cn, Nn, x0n, 0.99, r0)
        step(f"numeric, 500 Mbps, N = 4, x0 = 10 pkt/s, {lab}: max(t1, t2) < t_theta",
             tn > max(t1n, t2n), f"t_theta = {tn:.3f} s, t1 = {t1n:.3f} s, t2 = {t2n:.3f} s, t1 + t2 = {t1n + t2n:.3f} s",
             dims=[(t1, t, units), (t2, t, units)])


def theorem3():
    print("\n== Theorem 3 (convergence to fairness), eq. (28)-(33)")
    t = sp.symbols("t", nonnegative=True)
    a, g0, C, N, x0, eps = sp.symbols("alpha g_0 C N x_0 epsilon", positive=True)
    r = sp.Function("r")(t)
    xj, xn = sp.Function("x_j")(t), sp.Function("x_n")(t)
    units = {a: 1 / sec, g0: 1, C: pkt / sec, N: 1, x0: pkt / sec, eps: 1, t: sec, r.func: pkt / sec,
             xj.func: pkt / sec, xn.func: pkt / sec}
    # (31) from (30): g = x_j/x_n
    dj = a * xj * (sp.log(r) - sp.log(xj))
    dn = a * xn * (sp.log(r) - sp.log(xn))
    g = xj / xn
    gdot = (dj * xn - xj * dn) / xn ** 2
    step("(31) g' = -alpha g ln g follows from (30) (r cancels)",
         sp.simplify(sp.expand_log(gdot + a * g * sp.log(g), force=True)) == 0,
         dims=[(dj, a * xj * sp.log(r / xj), units), (gdot, -a * g * sp.log(g), units)])
    G = sp.exp(sp.log(g0) * sp.exp(-a * t))
    step("g(t) = exp(ln g(0) e^(-alpha t)) solves (31)", sp.simplify(G.diff(t) + a * G * sp.log(G)) == 0,
         dims=(sp.Derivative(G, t), -a * G * sp.log(G), units))
    lnln = sp.expand_log(sp.log(sp.expand_log(sp.log(G), force=True)), force=True)
    step("(32) 'ln ln g(t) = -alpha t' (CLTCP) / '-alpha' (AECP)", sp.simplify(lnln + a * t) == 0,
         f"ln ln g(t) = {lnln}: the constant ln ln g(0) is dropped (AECP also drops t)",
         dims=[(lnln, -a * t, units), (lnln, -a, units)])
    tsol = sp.solve(sp.Eq(lnln, sp.log(sp.log(1 / eps))), t)[0]
    corrected = sp.log(sp.log(C / (N * x0)) / sp.log(1 / eps)) / a
    pts = [{C: 62500, N: 3, x0: 10, eps: sp.Rational(9, 10), a: 2}, {C: 1250, N: 1, x0: 3, eps: sp.Rational(1, 2), a: 1}]
    step("solving g(t_eps) = 1/eps with g(0) = C/(N x0)", equal(tsol.subs(g0, C / (N * x0)), corrected, pts),
         f"t_eps = {corrected}", dims=(tsol.subs(g0, C / (N * x0)), corrected, units))
    printed = sp.log(sp.log(C * eps / (N * x0))) / a
    vals = {C: 62500, N: 3, x0: 10, eps: sp.Rational(9, 10), a: 2}
    step("(29)/(33) t_eps = ln ln(C eps/(N x0))/alpha equals the solved form",
         sp.simplify(printed - corrected) == 0,
         f"at 500 Mbps, N = 3, x0 = 10 pkt/s, eps = 0.9: printed {float(printed.subs(vals)):.4f} s, "
         f"solved {float(corrected.subs(vals)):.4f} s", dims=(printed, corrected, units))
    from ecocc.claims._huang import aecp_t_eps
    tn = aecp_t_eps(62500.0, 3, 10.0, 0.9)
    step("numeric delay-free run matches the solved form (rel. 1e-6)",
         abs(tn - float(corrected.subs(vals))) < 1e-6 * tn, f"run {tn:.6f} s", dims=(corrected, t, units))


def main():
    theorem2()
    theorem3()
    return summary()


if __name__ == "__main__":
    main()
