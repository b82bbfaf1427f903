"""The derivations of Iguchi, Hasegawa & Murata (003_20a360af4d80ed69.txt) redone step by step in SymPy.

Run: ``python proofs/iguchi_derivations.py``.  ``main()`` returns
``{step: (follows, detail)}``; a step that does not follow is printed with
``DOES NOT FOLLOW``.

Units: w in packets, K and A in packets/s, base_rtt (tau) in s, eps of the
continuous law in 1/s.  Every step carries a dimension check of its two sides
(proofs/_steps.py ``dims``), printed under it and kept in :data:`DIMS`.  The
discrete and per-RTT laws count time in steps or RTTs (dimensionless), so their
eps is per step (``eps_k``, dimensionless); the per-ACK law counts the ACKs of
a window, w/P1 with ``P1`` one packet.
"""
import os
import sys

import sympy as sp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _steps import check_dims, pkt, sec  # noqa: E402

DIMS = {}  # step -> (dimensions match, text), filled by main()


def main(verbose=True):
    res = {}

    def step(name, ok, detail, dims):
        res[name] = (bool(ok), detail)
        dok, dtxt = check_dims(name, dims)
        DIMS[name] = (dok, dtxt)
        if verbose:
            print(f"[{'follows' if ok else 'DOES NOT FOLLOW'}] {name}: {detail}")
            print(f"    dims {dtxt}" if dok else f"[DIMENSIONS DO NOT MATCH] {name}: {dtxt}")

    eps, g, K, A, tau, N, w, t = sp.symbols("epsilon gamma K A tau N w t", positive=True)
    ek, P1 = sp.symbols("epsilon_k P_1", positive=True)  # eps per step/RTT (dimensionless); one packet
    U = {eps: 1 / sec, g: 1, K: pkt / sec, A: pkt / sec, tau: sec, N: pkt / sec, w: pkt, t: sec, ek: 1, P1: pkt,
         sp.Symbol("x0", positive=True): pkt / sec}
    # Sec. 2.1: the continuous logistic never overshoots; the discrete map's multiplier is 1 - eps
    x = sp.Function("x")
    sol = sp.dsolve(sp.Eq(x(t).diff(t), eps * (1 - x(t) / K) * x(t)), x(t), ics={x(0): sp.Symbol("x0", positive=True)})
    x0 = sp.Symbol("x0", positive=True)
    xs = sp.simplify(sol.rhs)
    dxdt = sp.simplify(sp.diff(xs, t))
    gap = sp.simplify(K - xs)
    step("sec2.1.continuous", sp.simplify(gap - (K - x0) * sp.exp(-eps * t) * K / (x0 + (K - x0) * sp.exp(-eps * t)))
         == 0, f"K - x(t) = (K - x0) e^(-eps t) K / (x0 + (K - x0) e^(-eps t)): keeps the sign of K - x0 for all t, so "
               "the continuous logistic converges to K for every eps > 0 without overshoot (the text's eps = 2.4, 3.0 "
               "'do not converge' and 1.8's 'overshoot' do not follow from the displayed equation)",
         [(sp.Derivative(xs, t), eps * (1 - xs / K) * xs, {**U, x: pkt / sec}),
          (gap, (K - x0) * sp.exp(-eps * t) * K / (x0 + (K - x0) * sp.exp(-eps * t)), U)])
    step("sec2.1.continuous_no_limit", False, "the claim 'eps must be < 2' does not follow for the continuous equation "
         "(and compares eps, a rate in 1/s, with a pure number: the bound belongs to the discrete map's eps per step)",
         (eps, sp.Integer(2), U))
    f = N + ek * N * (1 - N / K)
    mult = sp.simplify(sp.diff(f, N).subs(N, K))
    step("sec2.1.discrete", sp.simplify(mult - (1 - ek)) == 0,
         f"discrete map N <- N + eps N (1 - N/K): multiplier at K = {mult}: stable iff 0 < eps < 2, overshoot "
         "(negative multiplier) iff eps > 1", [(f, N, U), (sp.Derivative(f, N), 1 - ek, U)])
    # eq. (2)-(3): identical species: gamma < K/K = 1
    g12, g21, K1, K2 = sp.symbols("gamma_12 gamma_21 K_1 K_2", positive=True)
    N1, N2 = sp.symbols("N_1 N_2", positive=True)
    U.update({g12: 1, g21: 1, K1: pkt / sec, K2: pkt / sec, N1: pkt / sec, N2: pkt / sec})
    eqs = [1 - (N1 + g12 * N2) / K1, 1 - (N2 + g21 * N1) / K2]
    s = sp.solve(eqs, [N1, N2], dict=True)[0]
    step("eq2.interior", True, f"interior equilibrium N1 = {sp.factor(s[N1])}, N2 = {sp.factor(s[N2])}: both positive "
                               "(and stable) iff gamma_12 < K1/K2 and gamma_21 < K2/K1 (with gamma_12 gamma_21 < 1) -- "
                               "two inequalities, the printed eq. (2) has one",
         [(s[N1], K1, U), (g12, K1 / K2, U), (g21, K2 / K1, U)])
    # eq. (5): substitution
    So = sp.Symbol("S_o", positive=True)
    U[So] = pkt / sec
    e4 = eps * (1 - (N + g * So) / K) * N
    e5 = eps * (1 - (N + g * (K - A)) / K) * N
    step("eq5", sp.simplify(e5.subs(A, K - So) - e4) == 0, "eq. (5) = eq. (4) with A_i = K - sum_{j!=i} N_j",
         (e5.subs(A, K - So), e4, U))
    # w = N base_rtt
    dw = sp.simplify(tau * e5.subs(N, w / tau))
    law = eps * (1 - (w + g * tau * (K - A)) / (K * tau)) * w
    step("eq5.window", sp.simplify(dw - law) == 0, "dw/dt = tau dN/dt gives the unnumbered window law", (dw, law, U))
    # eq. (6): time in RTTs k = t / tau: dw/dk = tau dw/dt
    k = sp.Symbol("k", positive=True)
    U[k] = 1  # time in RTTs
    dwdk = tau * law
    step("eq6", sp.simplify(dwdk - law) == 0,
         f"dw/dk = tau dw/dt = {sp.factor(dwdk)} != eq. (6)'s right-hand side unless tau = 1 s; eq. (6) holds only with "
         "eps read per RTT (eps_RTT = eps tau)", [(sp.Derivative(w, k), dwdk, U), (dwdk, law, U)])
    # per-ACK: w ACKs per RTT, Delta w = law / w
    dW = eps * (1 - (w + g * tau * (K - A)) / (K * tau))
    law_k = ek * (1 - (w + g * tau * (K - A)) / (K * tau)) * w     # eq. (6) per RTT (eps per RTT)
    dW_k = ek * (1 - (w + g * tau * (K - A)) / (K * tau)) * P1      # per-ACK increment (packets)
    step("sec3.ack.sum", sp.simplify(w * dW - law) == 0, "w ACKs x Delta w = eq. (6)'s dw/drtt (eps per RTT)",
         (w / P1 * dW_k, law_k, U))
    # per-ACK compounding: x_{m+1} = x_m + Delta w(x_m) is linear: w* - x_{m+1} = (w* - x_m)(1 - eps/(K tau))
    xm, m = sp.symbols("x_m m", positive=True)
    U.update({xm: pkt, m: 1})
    ws = (K - g * (K - A)) * tau
    nxt = xm + dW.subs(w, xm)
    step("sec3.ack.linear", sp.simplify((ws - nxt) - (ws - xm) * (1 - eps / (K * tau))) == 0,
         "w* - x_{m+1} = (w* - x_m)(1 - eps/(K tau)): after n ACKs w* - x_n = (w* - x_0)(1 - eps/(K tau))^n",
         [(xm + dW_k.subs(w, xm), xm, U), (ws - xm - dW_k.subs(w, xm), (ws - xm) * (1 - ek * P1 / (K * tau)), U)])
    # round map F(w) = w* - (w* - w) q^w, q = 1 - eps/(K tau); derivative at w = w*
    q = 1 - eps / (K * tau)
    F = ws - (ws - w) * q ** w
    dF = sp.simplify(sp.diff(F, w).subs(w, ws))
    step("sec3.ack.multiplier", sp.simplify(dF - q ** ws) == 0,
         f"dF/dw at w* = {dF} = (1 - eps/(K tau))^(w*) -> exp(-eps w*/(K tau)) as eps/(K tau) -> 0: the same "
         "multiplier as eq. (6) over one RTT and as 002's eq. (10) update with eps tau -> eps_RTT",
         (sp.Derivative(ws - (ws - w) * (1 - ek * P1 / (K * tau)) ** (w / P1), w).subs(w, ws),
          (1 - ek * P1 / (K * tau)) ** (ws / P1), U))
    dFA = sp.simplify(sp.diff(F.subs(w, sp.Symbol("w_f", positive=True)), A).subs(sp.Symbol("w_f", positive=True), ws))
    step("sec3.ack.A_gain", sp.simplify(dFA - (1 - q ** ws) * g * tau) == 0,
         "dF/dA at w* = (1 - q^w*) gamma tau: the same A-gain as eq. (10) (1 - mu) gamma tau, so the n-flow stability "
         "boundary is ecocc.discrete.symbiosis_critical_eps with eps tau -> eps_RTT",
         (sp.Derivative(ws - (ws - w) * (1 - ek * P1 / (K * tau)) ** (w / P1), A), (1 - sp.exp(-ek)) * g * tau, U))
    return res


if __name__ == "__main__":
    r = main()
    print("\nsteps that do not follow:", [k for k, (ok, _) in r.items() if not ok])
    print(f"{len(DIMS)} dimension checks; do not match:", [k for k, (ok, _) in DIMS.items() if not ok])
