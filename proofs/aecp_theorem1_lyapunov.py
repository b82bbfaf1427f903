"""The Lyapunov argument of Theorem 1 of CLTCP (001, eq. 7-14) and AECP (004, eq. 7-14), redone in SymPy.

Run: ``python proofs/aecp_theorem1_lyapunov.py``.  Each step prints FOLLOWS or
DOES NOT FOLLOW with the reason.  Notation of AECP (004): u_p = ln x_p,
v_l = ln r_l (CLTCP swaps the letters).  Single bottleneck, N synchronous
flows (a special case of eq. 6: a step that fails here fails in general).

What the argument establishes, and what it does not, is printed at the end.
Units: x, r, C in packets/s; q, q0 in packets; T, tau, t in s; alpha, beta in 1/s;
u = ln x and v = ln r are logarithms of rates (their unit is carried by a
reference rate of 1 packet/s: differences u - v are dimensionless).  Every step
carries a dimension check (``dims=``, proofs/_steps.py).
"""
import math
import os
import sys

import sympy as sp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _steps import pkt, same_dims, sec, step, summary, terms_same_dims  # noqa: E402


def main():
    t = sp.symbols("t", real=True)
    a, b, T, C, q0, N, tau = sp.symbols("alpha beta T C q_0 N tau", positive=True)
    u, v, q, ud, vd = sp.symbols("u v q u_d v_d", real=True)   # ud, vd: values at t - tau
    x, r = sp.exp(u), sp.exp(v)
    X0 = sp.Symbol("X_0", positive=True)  # the reference rate of the logarithms (1 packet/s)
    du = {t: sec, a: 1 / sec, b: 1 / sec, T: sec, C: pkt / sec, q0: pkt, N: 1, tau: sec, u: 1, v: 1, q: pkt, ud: 1,
          vd: 1, X0: pkt / sec}

    print("== Step 1: change of variables, eq. (6) -> eq. (7)")
    X, R = sp.symbols("x r", positive=True)
    xdot6 = a * X * (sp.log(sp.exp(vd)) - sp.log(X))        # eq. (6) source, r(t - tau) = e^{v_d}
    rdot6 = b * R * (1 - (N * X + (q - q0) / T) / C)
    udot7 = a * (vd - u)
    vdot7 = b * (1 - (N * x + (q - q0) / T) / C)
    units = {X: pkt / sec, R: pkt / sec, C: pkt / sec, q: pkt, q0: pkt, T: sec, a: 1 / sec, b: 1 / sec, N: 1, vd: 1,
             tau: sec}
    du.update({X: pkt / sec, R: pkt / sec})
    step("u' = x'/x gives eq. (7) source line", sp.simplify((xdot6 / X).subs(X, x) - udot7) == 0,
         dims=(a * (sp.log(X0 * sp.exp(vd)) - sp.log(X)), udot7, {**units, X0: pkt / sec, u: 1}))
    step("v' = r'/r gives eq. (7) link line", sp.simplify((rdot6 / R).subs({R: r, X: x}) - vdot7) == 0,
         dims=(rdot6 / R, vdot7.subs(x, X), units))
    step("dimensions of the link law: x, (q - q0)/T and C are all packets/s",
         terms_same_dims(N * X + (q - q0) / T, C, units), "N x, q/T, q0/T vs C", dims=(N * X + (q - q0) / T, C, units))

    print("\n== Step 2: eq. (8) 'a mapping f from u_p to v_l'")
    f = 1 - (N * x + (q - q0) / T) / C
    step("f depends on the current u only", not f.has(q),
         "f = 1 - (N e^u + (q - q0)/T)/C also depends on the queue q, a state of its own (q' = N e^u - C): "
         "f is not a function of u(t). CLTCP even writes u_l = beta f(v_p) (eq. 8), AECP v_l' = beta f(u_p)",
         dims=(f.subs(x, X0 * x), sp.Integer(1), du))

    print("\n== Step 3: eq. (10), the candidate U")
    y = sp.symbols("y")
    U = b * sp.integrate(y, (y, 0, -f)) + a * (vd - u) ** 2 / 2
    du[y] = 1
    Ux = lambda e: e.subs(x, X0 * x)  # noqa: E731  (x = X0 e^u: the rate in packets/s)
    step("the integral in (10) is beta f^2 / 2", sp.simplify(U - (b * f ** 2 / 2 + a * (vd - u) ** 2 / 2)) == 0,
         dims=(Ux(U), b * Ux(f) ** 2 / 2, du))
    # positive definite about the equilibrium x = r = C/N, q = q0?  U = 0 on a whole curve, tau = 0 (v_d = v):
    U0 = U.subs(vd, v)
    pt = {u: sp.log(C / (2 * N)), v: sp.log(C / (2 * N)), q: q0 + T * C / 2}
    step("U is positive definite (zero only at the equilibrium)", sp.simplify(U0.subs(pt)) != 0,
         f"U = {sp.simplify(U0.subs(pt))} at x = r = C/(2N), q = q0 + TC/2, which is not an equilibrium "
         f"(q' = N x - C = -C/2): U is only positive SEMI-definite", dims=(Ux(U0), b, du))

    print("\n== Step 4: eq. (11) dU/du_p = -alpha (v_p(t - tau) - u_p) - beta f")
    dUdu = sp.diff(U, u)
    printed11 = -a * (vd - u) - b * f
    step("eq. (11) is the partial derivative of (10)", sp.simplify(dUdu - printed11) == 0,
         f"dU/du = {sp.simplify(dUdu)}: the f-term is beta f df/du = -beta f N e^u / C, not -beta f "
         "(the chain rule through f is dropped)", dims=(Ux(dUdu), Ux(printed11), du))

    print("\n== Step 5: eq. (12) dU/dv_l = alpha (v_p(t - tau) - u_p)")
    dUdv = sp.diff(U, v)
    step("eq. (12) with the delay kept", sp.simplify(dUdv - a * (vd - u)) == 0,
         f"U contains v(t - tau), not v(t): dU/dv(t) = {dUdv}. Eq. (12) treats v_p(t - tau) as v_l(t)",
         dims=(sp.Derivative(Ux(U), v), a * (vd - u), du))
    step("eq. (12) without delay (tau = 0, v_d = v)", sp.simplify(sp.diff(U0, v) - a * (v - u)) == 0,
         dims=(sp.Derivative(Ux(U0), v), a * (v - u), du))

    print("\n== Step 6: the algebra of eq. (14), taking (11)-(13) as given")
    lhs14 = printed11 * udot7 + a * (vd - u) * b * f
    step("(11)*(u') + (12)*(v') = -[alpha (v_d - u)]^2 (pure algebra)", sp.simplify(lhs14 + (a * (vd - u)) ** 2) == 0,
         dims=(Ux(lhs14), -(a * (vd - u)) ** 2, du))

    print("\n== Step 7: the true derivative of U along eq. (7), no delay (tau = 0), queue non-empty")
    qdot = N * x - C
    fdot = sp.diff(f, u) * a * (v - u) + sp.diff(f, q) * qdot
    Udot = b * f * fdot + a * (v - u) * (b * f - a * (v - u))
    Udot = sp.simplify(Udot)
    step("dU/dt = -[alpha (v - u)]^2", sp.simplify(Udot + (a * (v - u)) ** 2) == 0, f"dU/dt = {Udot}",
         dims=(Ux(Udot), -(a * (v - u)) ** 2, du))
    vals = {a: 2, b: 1, T: 2, C: 1000, N: 1, q0: 100}
    cex = {u: sp.log(500), v: sp.log(500), q: 100}
    val = float(Udot.subs(cex).subs(vals))
    step("dU/dt <= 0 everywhere (no delay)", val <= 0,
         f"at x = r = C/2, q = q0 (C = 1000 pkt/s, N = 1, alpha = 2, beta = 1, T = 2): dU/dt = {val:.4g} > 0: U "
         "grows, so U is not a Lyapunov function even without delay", dims=(Ux(Udot), a ** 2, du))

    print("\n== Step 8: with the delay, U is a functional of the history")
    step("Lyapunov's theorem applies to U(u(t), v(t)) as written", False,
         "U depends on v(t - tau); a Lyapunov-Krasovskii functional (an integral over [t - tau, t]) would be needed, "
         "and then the derivative contains v'(t - tau) = beta f(t - tau), which (14) does not have",
         dims=(Ux(U), sp.Integral(b * (v - u) ** 2, (t, -tau, 0)) / tau, du))

    print("\n== Step 9: what does hold, checked independently (linearisation, alpha = 2, beta = 1, T = 2)")
    s = sp.symbols("s")
    du[s] = 1 / sec
    L = a * b * (s + 1 / T) / (s ** 2 * (s + a))
    char = sp.expand(sp.numer(sp.together(1 + L)).subs({a: 2, b: 1, T: 2}))
    roots = [complex(z) for z in sp.Poly(char, s).nroots()]
    step("delay-free closed-loop poles all in the left half plane", all(z.real < 0 for z in roots),
         f"1 + L(s) = 0: {sp.factor(char)}, roots {[f'{z:.4f}' for z in roots]}", dims=(L, sp.Integer(1), du))
    w = 1.0
    mag = abs(complex(L.subs({a: 2, b: 1, T: 2, s: 1j * w})))
    ph = math.degrees(math.atan2(complex(L.subs({a: 2, b: 1, T: 2, s: 1j * w})).imag,
                                 complex(L.subs({a: 2, b: 1, T: 2, s: 1j * w})).real))
    pm = 180 + ph
    tau_c = math.radians(pm) / w
    step("unit loop gain at w = 1 rad/s", abs(mag - 1) < 1e-12, f"|L(j)| = {mag:.12f}", dims=(L, sp.Integer(1), du))
    step("delay margin = PM / w_c = atan(3/4) s", abs(tau_c - math.atan(0.75)) < 1e-12,
         f"PM = {pm:.4f} deg, tau_c = {tau_c:.6f} s: with a feedback delay above {tau_c:.4f} s the equilibrium is "
         "unstable, for every C and N (L(s) contains neither)",
         dims=(sp.atan(a * b / (2 * b) * T) / (1 / T), tau, du))
    bad = summary()
    print("\nWHAT THE ARGUMENT ESTABLISHES: the algebraic identity of step 6 only. Eq. (11) and (12) are not the "
          "partial derivatives of (10) (steps 4-5), U is not positive definite (step 3), its true derivative is "
          "positive at some states even with no delay (step 7), and the delay is not handled (step 8).")
    print("WHAT IS TRUE INSTEAD: without delay the equilibrium x = r = C/N, q = q0 is locally asymptotically stable "
          "(step 9; global stability is not proved by the paper and is only supported by our runs, claim "
          "aecp.thm1). With the delay it is locally asymptotically stable iff RTT < atan(3/4) = 0.6435 s for "
          "alpha = 2, beta = 1, T = 2, independent of C and N; 'independent of the round trip time' fails.")
    return bad


if __name__ == "__main__":
    main()
