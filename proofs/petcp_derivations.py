"""PE-TCP (seed 000): eq. (3)-(4), Theorem 1, Theorems 2-3 with their examples, and the discrete law (6)-(11),
redone in SymPy step by step.

Run: ``python proofs/petcp_derivations.py``.  Each step prints FOLLOWS or
DOES NOT FOLLOW.  The paper proves Theorems 1-3 in its reference [7]; the
steps here are the shortest derivations from eq. (4)-(5), and the closed forms
are checked against delay-free runs (LSODA, ecocc.claims._huang).
Units: x, X, B in packets/s; q in packets; a in packets/s^2; b in 1/s; T, tau in s.
"""
import math
import os
import sys

import sympy as sp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _steps import equal, pkt, sec, step, summary, terms_same_dims  # noqa: E402

a, b, T, B, N = sp.symbols("a b T B N", positive=True)
x, X, q = sp.symbols("x X q", positive=True)
UNITS = {a: pkt / sec ** 2, b: 1 / sec, T: sec, B: pkt / sec, x: pkt / sec, X: pkt / sec, q: pkt, N: 1}


def model():
    print("== eq. (3) -> (4)")
    e3 = b * x * (1 - (X + q / T) / B + a / (b * x))
    e4 = a + b * x * (1 - (X + q / T) / B)
    step("(3) simplifies to (4)", sp.simplify(e3 - e4) == 0)
    step("(4): every term is a rate change (packets/s^2)", terms_same_dims(e4, a, UNITS))
    step("(4): X, q/T and B are all packets/s", terms_same_dims(X + q / T, B, UNITS))


def theorem1():
    print("\n== Theorem 1: equilibrium and local stability of (4)-(5), no delay")
    xs, qs = sp.symbols("x_s q_s", positive=True)
    sol = sp.solve([a + b * xs * (1 - (N * xs + qs / T) / B), N * xs - B], [xs, qs], dict=True)[0]
    step("x* = B/N", sp.simplify(sol[xs] - B / N) == 0, str(sol[xs]))
    step("q* = a T N / b", sp.simplify(sol[qs] - a * T * N / b) == 0, str(sol[qs]))
    step("q* has units of packets", terms_same_dims(a * T * N / b, q, UNITS))
    # Jacobian entries at the equilibrium (symmetric flows)
    load = 1 - (X + q / T) / B
    xi = sp.symbols("x_i", positive=True)
    f = a + b * xi * (1 - (X + q / T) / B)
    at = {xi: B / N, X: B, q: a * T * N / b}
    d_own = sp.simplify((sp.diff(f, xi) + sp.diff(f, X)).subs(at))     # d/dx_i (x_i also enters X)
    d_other = sp.simplify(sp.diff(f, X).subs(at))
    d_q = sp.simplify(sp.diff(f, q).subs(at))
    step("dx_i'/dx_i = -a N/B - b/N", sp.simplify(d_own - (-a * N / B - b / N)) == 0, str(d_own))
    step("dx_i'/dx_j = -b/N", sp.simplify(d_other + b / N) == 0, str(d_other))
    step("dx_i'/dq = -b/(N T)", sp.simplify(d_q + b / (N * T)) == 0, str(d_q))
    s = sp.symbols("s")
    # differential modes: own - other; common mode (S = sum dx, dq): S' = N(d_other) S + (d_own - d_other) S + N d_q dq
    lam_diff = sp.simplify(d_own - d_other)
    step("differential modes decay at a N / B (> 0 for every B, N)", sp.simplify(lam_diff + a * N / B) == 0,
         f"eigenvalue {lam_diff}")
    A2 = sp.Matrix([[lam_diff + N * d_other, N * d_q], [1, 0]])
    cp = sp.expand(A2.charpoly(s).as_expr())
    step("common mode: s^2 + (aN/B + b) s + b/T", sp.simplify(cp - (s ** 2 + (a * N / B + b) * s + b / T)) == 0,
         str(cp))
    c1, c0 = sp.Poly(cp, s).all_coeffs()[1:]
    step("Routh-Hurwitz: both coefficients positive for all positive a, b, T, B, N => locally asymptotically stable "
         "independent of B and N (no delay)", bool(c1.is_positive and c0.is_positive and lam_diff.is_negative),
         f"coefficients {c1}, {c0}")
    print("   (with the one-RTT feedback delay the same equilibrium is unstable at many (B, N, RTT): claim petcp.thm1)")


def riccati_time(Bv, Nv, x0, theta, av, bv):
    k = bv * Nv / Bv
    disc = math.sqrt(bv * bv + 4 * av * k)
    xp, xm = (bv + disc) / (2 * k), (bv - disc) / (2 * k)
    xt = theta * Bv / Nv
    return math.log((xt - xm) / (xp - xt) * (xp - x0) / (x0 - xm)) / disc


def theorem2():
    print("\n== Theorem 2, eq. (12): convergence to efficiency")
    t, x0, th = sp.symbols("t x_0 theta", positive=True)
    xf = sp.Function("x")
    # q = 0 while X < B; N synchronous flows: x' = a + b x (1 - N x / B)
    logi = (B / N) / (1 + (B / (N * x0) - 1) * sp.exp(-b * t))
    step("with a = 0, x = (B/N)/(1 + (B/(N x0) - 1) e^(-bt)) solves x' = b x (1 - N x/B)",
         sp.simplify(logi.diff(t) - b * logi * (1 - N * logi / B)) == 0)
    t_log = sp.solve(sp.Eq(N * logi / B, th), t)[0]
    pts = [{B: 12500, N: 1, x0: sp.Rational(25, 2), th: sp.Rational(99, 100), b: 1}]
    step("t_theta(a = 0) = [ln(theta/(1-theta)) + ln(B/(N x0) - 1)]/b; (12) drops the -1 (B >> N x0)",
         equal(t_log, (sp.log(th / (1 - th)) + sp.log(B / (N * x0) - 1)) / b, pts))
    step("(12) accounts for the additive term a", False,
         "eq. (4) has x' = a + b x (...): while x < a/b (= 125 pkt/s = 10 x0 with the paper's values) a dominates "
         "the growth; (12) is the a = 0 logistic time")
    # exact: Riccati x' = a + b x - (b N/B) x^2
    k = b * N / B
    disc = sp.sqrt(b ** 2 + 4 * a * k)
    xp, xm = (b + disc) / (2 * k), (b - disc) / (2 * k)
    C0 = (x0 - xp) / (x0 - xm)
    xr = (xp - xm * C0 * sp.exp(-disc * t)) / (1 - C0 * sp.exp(-disc * t))
    pts = [{a: 125, b: 1, B: 12500, N: 1, x0: sp.Rational(25, 2), t: sp.Rational(3, 1)},
           {a: 10, b: 2, B: 1000, N: 5, x0: 1, t: sp.Rational(1, 2)}]
    res = xr.diff(t) - (a + b * xr - k * xr ** 2)
    step("exact solution of x' = a + b x - (bN/B) x^2 (Riccati) substituted back", equal(res, sp.Integer(0), pts))
    step("it starts at x0", equal(xr.subs(t, 0), x0, pts))
    from ecocc.claims._huang import petcp_t_theta
    tr = riccati_time(12500.0, 1, 12.5, 0.99, 125.0, 1.0)
    tn = petcp_t_theta(12500.0, 1, 12.5, 0.99)
    t12 = math.log(99) + math.log(12500 / 12.5)
    step("example: eq. (12) gives 11.5 s at B = 100 Mbps, N = 1, x0 = 0.1 Mbps, theta = 0.99, b = 1",
         abs(t12 - 11.5) < 0.05, f"{t12:.4f} s")
    step("example: the model takes 11.5 s", abs(tn - 11.5) < 0.05,
         f"delay-free run {tn:.4f} s; exact Riccati time {tr:.4f} s")
    step("the Riccati time matches the run (1e-6 relative)", abs(tr - tn) < 1e-6 * tn)


def theorem3():
    print("\n== Theorem 3, eq. (13): convergence to fairness")
    eps, t, d0 = sp.symbols("epsilon t d_0", positive=True)
    # N + 1 flows after the join, equilibrium x* = B/(N+1): 1 - load = -a/(b x*)
    xs = B / (N + 1)
    rate = sp.simplify(b * (a / (b * xs)))
    step("x_old - x_new decays at a (N+1)/B (N+1 flows share the link after the join)",
         sp.simplify(rate - a * (N + 1) / B) == 0, f"rate {rate}")
    t13 = B * sp.log(1 / (1 - eps)) / (a * N)
    step("(13) is ln(1/(1-eps)) divided by that rate", sp.simplify(t13 - sp.log(1 / (1 - eps)) / rate) == 0,
         "(13) uses a N / B: the N flows already there, not the N + 1 sharing the link")
    tc = B * (sp.log(1 / (1 - eps)) + sp.log((1 + 1 / N))) / (a * (N + 1))
    # from d(0) = B/N (x0 << B/N) to d = (1 - eps) B/(N+1)
    step("corrected t_eps = B (ln(1/(1-eps)) + ln(1 + 1/N)) / (a (N+1))",
         equal(sp.exp(-rate * tc) * (B / N), (1 - eps) * B / (N + 1),
               [{a: 125, B: 12500, N: 3, eps: sp.Rational(99, 100)}, {a: 2, B: 700, N: 10, eps: sp.Rational(1, 2)}]))
    from ecocc.claims._huang import petcp_t_eps
    tn = petcp_t_eps(12500.0, 3, 12.5, 0.99)
    v13 = 12500 * math.log(100) / (125 * 3)
    vc = 12500 * (math.log(100) + math.log((4 / 3) * (1 - 3 * 12.5 / 12500))) / (125 * 4)
    step("example: eq. (13) with N = 3 gives 153 s", abs(v13 - 153) < 0.6, f"{v13:.2f} s")
    step("example: the model takes 153 s", abs(tn - 153) < 0.6, f"delay-free run {tn:.2f} s")
    step("corrected form within 1 % of the run", abs(vc - tn) < 0.01 * tn, f"{vc:.2f} s vs {tn:.2f} s")


def discrete_law():
    print("\n== eq. (6)-(11): the measured discrete law")
    tau, taul, taumin, taud = sp.symbols("tau tau_l tau_min tau_Delta", positive=True)
    Bm = 1 / taud
    qm = (tau - taumin) / taud
    dq = (qm - (taul - taumin) / taud) / tau
    step("(8) dq/dt = (tau - tau_l)/(tau tau_Delta)", sp.simplify(dq - (tau - taul) / (tau * taud)) == 0)
    Xm = Bm + dq
    step("(9) X = (2 tau - tau_l)/(tau tau_Delta) from (5)", sp.simplify(Xm - (2 * tau - taul) / (tau * taud)) == 0)
    nxt = x + tau * (a + b * x * (1 - (Xm + qm / T) / Bm))
    pr = x + a * tau + b * tau * x * (1 - (2 * tau - taul) / tau - (tau - taumin) / T)
    step("(11) first case from (4), (6)-(10)", sp.simplify(nxt - pr) == 0)
    nxt0 = x + tau * (a + b * x * (1 - x / Bm))
    step("(11) second case (empty queue, X = x_i)", sp.simplify(nxt0 - (x + a * tau + b * tau * x * (1 - x * taud))) == 0)
    u = dict(UNITS)
    u.update({tau: sec, taul: sec, taumin: sec, taud: sec / pkt})
    step("(11): every term of x(t + tau) is packets/s", terms_same_dims(pr, x, u))


def main():
    model()
    theorem1()
    theorem2()
    theorem3()
    discrete_law()
    return summary()


if __name__ == "__main__":
    main()
