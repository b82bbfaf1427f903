"""PE-TCP (seed 000): eq. (3)-(4), Theorem 1, Theorems 2-3 with their examples, and the discrete law (6)-(11),
redone in SymPy step by step.

Run: ``python proofs/petcp_derivations.py``.  Each step prints FOLLOWS or
DOES NOT FOLLOW.  The paper proves Theorems 1-3 in its reference [7]; the
steps here are the shortest derivations from eq. (4)-(5), and the closed forms
are checked against delay-free runs (LSODA, ecocc.claims._huang).
Units: x, X, B in packets/s; q in packets; a in packets/s^2; b in 1/s; T, tau in s; tau_Delta (the
spacing of two ACKs, eq. 6: B = 1/tau_Delta) in s per packet.  Every step carries a dimension check
(``dims=``, proofs/_steps.py).
"""
import math
import os
import sys

import sympy as sp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _steps import equal, pkt, sec, step, summary, terms_same_dims  # noqa: E402

a, b, T, B, N = sp.symbols("a b T B N", positive=True)
x, X, q = sp.symbols("x X q", positive=True)
t, x0, th, eps, s_ = sp.symbols("t x_0 theta epsilon s", positive=True)
UNITS = {a: pkt / sec ** 2, b: 1 / sec, T: sec, B: pkt / sec, x: pkt / sec, X: pkt / sec, q: pkt, N: 1,
         t: sec, x0: pkt / sec, th: 1, eps: 1, s_: 1 / sec}


def model():
    print("== eq. (3) -> (4)")
    e3 = b * x * (1 - (X + q / T) / B + a / (b * x))
    e4 = a + b * x * (1 - (X + q / T) / B)
    step("(3) simplifies to (4)", sp.simplify(e3 - e4) == 0, dims=(e3, e4, UNITS))
    step("(4): every term is a rate change (packets/s^2)", terms_same_dims(e4, a, UNITS), dims=(e4, a, UNITS))
    step("(4): X, q/T and B are all packets/s", terms_same_dims(X + q / T, B, UNITS), dims=(X + q / T, B, UNITS))


def theorem1():
    print("\n== Theorem 1: equilibrium and local stability of (4)-(5), no delay")
    xs, qs = sp.symbols("x_s q_s", positive=True)
    xi = sp.symbols("x_i", positive=True)
    U = {**UNITS, xs: pkt / sec, qs: pkt, xi: pkt / sec}
    sol = sp.solve([a + b * xs * (1 - (N * xs + qs / T) / B), N * xs - B], [xs, qs], dict=True)[0]
    step("x* = B/N", sp.simplify(sol[xs] - B / N) == 0, str(sol[xs]), dims=(sol[xs], B / N, U))
    step("q* = a T N / b", sp.simplify(sol[qs] - a * T * N / b) == 0, str(sol[qs]), dims=(sol[qs], a * T * N / b, U))
    step("q* has units of packets", terms_same_dims(a * T * N / b, q, UNITS), dims=(a * T * N / b, q, U))
    # Jacobian entries at the equilibrium (symmetric flows)
    f = a + b * xi * (1 - (X + q / T) / B)
    at = {xi: B / N, X: B, q: a * T * N / b}
    d_own = sp.simplify((sp.diff(f, xi) + sp.diff(f, X)).subs(at))     # d/dx_i (x_i also enters X)
    d_other = sp.simplify(sp.diff(f, X).subs(at))
    d_q = sp.simplify(sp.diff(f, q).subs(at))
    step("dx_i'/dx_i = -a N/B - b/N", sp.simplify(d_own - (-a * N / B - b / N)) == 0, str(d_own),
         dims=[(sp.Derivative(f, xi), d_own, U), (d_own, -a * N / B - b / N, U)])
    step("dx_i'/dx_j = -b/N", sp.simplify(d_other + b / N) == 0, str(d_other),
         dims=[(sp.Derivative(f, X), d_other, U), (d_other, -b / N, U)])
    step("dx_i'/dq = -b/(N T)", sp.simplify(d_q + b / (N * T)) == 0, str(d_q),
         dims=[(sp.Derivative(f, q), d_q, U), (d_q, -b / (N * T), U)])
    s = sp.symbols("s")
    U[s] = 1 / sec
    # differential modes: own - other; common mode (S = sum dx, dq): S' = N(d_other) S + (d_own - d_other) S + N d_q dq
    lam_diff = sp.simplify(d_own - d_other)
    step("differential modes decay at a N / B (> 0 for every B, N)", sp.simplify(lam_diff + a * N / B) == 0,
         f"eigenvalue {lam_diff}", dims=(lam_diff, -a * N / B, U))
    A2 = sp.Matrix([[lam_diff + N * d_other, N * d_q], [1, 0]])
    cp = sp.expand(A2.charpoly(s).as_expr())
    step("common mode: s^2 + (aN/B + b) s + b/T", sp.simplify(cp - (s ** 2 + (a * N / B + b) * s + b / T)) == 0,
         str(cp), dims=(cp, s ** 2 + (a * N / B + b) * s + b / T, U))
    c1, c0 = sp.Poly(cp, s).all_coeffs()[1:]
    step("Routh-Hurwitz: both coefficients positive for all positive a, b, T, B, N => locally asymptotically stable "
         "independent of B and N (no delay)", bool(c1.is_positive and c0.is_positive and lam_diff.is_negative),
         f"coefficients {c1}, {c0}", dims=[(c1 * s, s ** 2, U), (c0, s ** 2, U)])
    print("   (with the one-RTT feedback delay the same equilibrium is unstable at many (B, N, RTT): claim petcp.thm1)")


def riccati_time(Bv, Nv, x0, theta, av, bv):
    k = bv * Nv / Bv
    disc = math.sqrt(bv * bv + 4 * av * k)
    xp, xm = (bv + disc) / (2 * k), (bv - disc) / (2 * k)
    xt = theta * Bv / Nv
    return math.log((xt - xm) / (xp - xt) * (xp - x0) / (x0 - xm)) / disc


def theorem2():
    print("\n== Theorem 2, eq. (12): convergence to efficiency")
    # q = 0 while X < B; N synchronous flows: x' = a + b x (1 - N x / B)
    logi = (B / N) / (1 + (B / (N * x0) - 1) * sp.exp(-b * t))
    step("with a = 0, x = (B/N)/(1 + (B/(N x0) - 1) e^(-bt)) solves x' = b x (1 - N x/B)",
         sp.simplify(logi.diff(t) - b * logi * (1 - N * logi / B)) == 0,
         dims=(sp.Derivative(logi, t), b * logi * (1 - N * logi / B), UNITS))
    t_log = sp.solve(sp.Eq(N * logi / B, th), t)[0]
    pts = [{B: 12500, N: 1, x0: sp.Rational(25, 2), th: sp.Rational(99, 100), b: 1}]
    step("t_theta(a = 0) = [ln(theta/(1-theta)) + ln(B/(N x0) - 1)]/b; (12) drops the -1 (B >> N x0)",
         equal(t_log, (sp.log(th / (1 - th)) + sp.log(B / (N * x0) - 1)) / b, pts),
         dims=(t_log, (sp.log(th / (1 - th)) + sp.log(B / (N * x0) - 1)) / b, UNITS))
    step("(12) accounts for the additive term a", False,
         "eq. (4) has x' = a + b x (...): while x < a/b (= 125 pkt/s = 10 x0 with the paper's values) a dominates "
         "the growth; (12) is the a = 0 logistic time",
         dims=((sp.log(th / (1 - th)) + sp.log(B / (N * x0))) / b, t, UNITS))
    # exact: Riccati x' = a + b x - (b N/B) x^2
    k = b * N / B
    disc = sp.sqrt(b ** 2 + 4 * a * k)
    xp, xm = (b + disc) / (2 * k), (b - disc) / (2 * k)
    C0 = (x0 - xp) / (x0 - xm)
    xr = (xp - xm * C0 * sp.exp(-disc * t)) / (1 - C0 * sp.exp(-disc * t))
    pts = [{a: 125, b: 1, B: 12500, N: 1, x0: sp.Rational(25, 2), t: sp.Rational(3, 1)},
           {a: 10, b: 2, B: 1000, N: 5, x0: 1, t: sp.Rational(1, 2)}]
    res = xr.diff(t) - (a + b * xr - k * xr ** 2)
    step("exact solution of x' = a + b x - (bN/B) x^2 (Riccati) substituted back", equal(res, sp.Integer(0), pts),
         dims=(sp.Derivative(xr, t), a + b * xr - k * xr ** 2, UNITS))
    step("it starts at x0", equal(xr.subs(t, 0), x0, pts), dims=(xr.subs(t, 0), x0, UNITS))
    from ecocc.claims._huang import petcp_t_theta
    tr = riccati_time(12500.0, 1, 12.5, 0.99, 125.0, 1.0)
    tn = petcp_t_theta(12500.0, 1, 12.5, 0.99)
    t12 = math.log(99) + math.log(12500 / 12.5)
    step("example: eq. (12) gives 11.5 s at B = 100 Mbps, N = 1, x0 = 0.1 Mbps, theta = 0.99, b = 1",
         abs(t12 - 11.5) < 0.05, f"{t12:.4f} s", dims=((sp.log(th / (1 - th)) + sp.log(B / (N * x0))) / b, t, UNITS))
    t_ric = sp.log((th * B / N - xm) / (xp - th * B / N) * (xp - x0) / (x0 - xm)) / disc
    step("example: the model takes 11.5 s", abs(tn - 11.5) < 0.05,
         f"delay-free run {tn:.4f} s; exact Riccati time {tr:.4f} s", dims=(t_ric, t, UNITS))
    step("the Riccati time matches the run (1e-6 relative)", abs(tr - tn) < 1e-6 * tn, dims=(t_ric, t, UNITS))


def theorem3():
    print("\n== Theorem 3, eq. (13): convergence to fairness")
    # N + 1 flows after the join, equilibrium x* = B/(N+1): 1 - load = -a/(b x*)
    xs = B / (N + 1)
    rate = sp.simplify(b * (a / (b * xs)))
    step("x_old - x_new decays at a (N+1)/B (N+1 flows share the link after the join)",
         sp.simplify(rate - a * (N + 1) / B) == 0, f"rate {rate}", dims=(rate, a * (N + 1) / B, UNITS))
    t13 = B * sp.log(1 / (1 - eps)) / (a * N)
    step("(13) is ln(1/(1-eps)) divided by that rate", sp.simplify(t13 - sp.log(1 / (1 - eps)) / rate) == 0,
         "(13) uses a N / B: the N flows already there, not the N + 1 sharing the link",
         dims=(t13, sp.log(1 / (1 - eps)) / rate, UNITS))
    tc = B * (sp.log(1 / (1 - eps)) + sp.log((1 + 1 / N))) / (a * (N + 1))
    # from d(0) = B/N (x0 << B/N) to d = (1 - eps) B/(N+1)
    step("corrected t_eps = B (ln(1/(1-eps)) + ln(1 + 1/N)) / (a (N+1))",
         equal(sp.exp(-rate * tc) * (B / N), (1 - eps) * B / (N + 1),
               [{a: 125, B: 12500, N: 3, eps: sp.Rational(99, 100)}, {a: 2, B: 700, N: 10, eps: sp.Rational(1, 2)}]),
         dims=[(tc, t, UNITS), (sp.exp(-rate * tc) * (B / N), (1 - eps) * B / (N + 1), UNITS)])
    from ecocc.claims._huang import petcp_t_eps
    tn = petcp_t_eps(12500.0, 3, 12.5, 0.99)
    v13 = 12500 * math.log(100) / (125 * 3)
    vc = 12500 * (math.log(100) + math.log((4 / 3) * (1 - 3 * 12.5 / 12500))) / (125 * 4)
    step("example: eq. (13) with N = 3 gives 153 s", abs(v13 - 153) < 0.6, f"{v13:.2f} s", dims=(t13, t, UNITS))
    step("example: the model takes 153 s", abs(tn - 153) < 0.6, f"delay-free run {tn:.2f} s", dims=(t13, t, UNITS))
    tcx = B * (sp.log(1 / (1 - eps)) + sp.log((1 + 1 / N) * (1 - N * x0 / B))) / (a * (N + 1))
    step("corrected form within 1 % of the run", abs(vc - tn) < 0.01 * tn, f"{vc:.2f} s vs {tn:.2f} s",
         dims=(tcx, t, UNITS))


def discrete_law():
    print("\n== eq. (6)-(11): the measured discrete law")
    tau, taul, taumin, taud = sp.symbols("tau tau_l tau_min tau_Delta", positive=True)
    u = dict(UNITS)
    u.update({tau: sec, taul: sec, taumin: sec, taud: sec / pkt})
    Bm = 1 / taud
    qm = (tau - taumin) / taud
    dq = (qm - (taul - taumin) / taud) / tau
    step("(6)-(7): B = 1/tau_Delta and q = (tau - tau_min)/tau_Delta", True, "definitions (measurements)",
         dims=[(Bm, B, u), (qm, q, u)])
    step("(8) dq/dt = (tau - tau_l)/(tau tau_Delta)", sp.simplify(dq - (tau - taul) / (tau * taud)) == 0,
         dims=[(dq, q / tau, u), (dq, (tau - taul) / (tau * taud), u)])
    Xm = Bm + dq
    step("(9) X = (2 tau - tau_l)/(tau tau_Delta) from (5)", sp.simplify(Xm - (2 * tau - taul) / (tau * taud)) == 0,
         dims=[(Xm, X, u), (Xm, (2 * tau - taul) / (tau * taud), u)])
    nxt = x + tau * (a + b * x * (1 - (Xm + qm / T) / Bm))
    pr = x + a * tau + b * tau * x * (1 - (2 * tau - taul) / tau - (tau - taumin) / T)
    step("(11) first case from (4), (6)-(10)", sp.simplify(nxt - pr) == 0, dims=(nxt, pr, u))
    nxt0 = x + tau * (a + b * x * (1 - x / Bm))
    step("(11) second case (empty queue, X = x_i)", sp.simplify(nxt0 - (x + a * tau + b * tau * x * (1 - x * taud))) == 0,
         dims=(nxt0, x + a * tau + b * tau * x * (1 - x * taud), u))
    step("(11): every term of x(t + tau) is packets/s", terms_same_dims(pr, x, u), dims=(pr, x, u))


def main():
    model()
    theorem1()
    theorem2()
    theorem3()
    discrete_law()
    return summary()


if __name__ == "__main__":
    main()
