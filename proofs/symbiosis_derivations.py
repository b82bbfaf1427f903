"""Every derivation of TCP Symbiosis (002_2fcfdbe8ba8bf605.txt) redone step by step in SymPy.

Run: ``python proofs/symbiosis_derivations.py``.  Each step substitutes back
and simplifies; a step that does not follow is printed with ``DOES NOT FOLLOW``
and what does.  ``main()`` returns ``{step: (follows, detail)}``; the ledger
(ecocc.claims.symbiosis) and tests/test_claims_symbiosis.py read it.

Dimensions: windows in packets, rates (K, A, N, x) in packets/s, times in s,
eps in 1/s.  Every step carries a dimension check of its two sides
(proofs/_steps.py ``dims``), printed under it and kept in :data:`DIMS`; where
Reno's "one packet per RTT" enters, ``P1`` is one packet (the number 1 in the
algebra, the unit packet in the dimension check), so a printed formula that
counts packets as RTTs is pinpointed.
"""
import os
import sys

import sympy as sp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _steps import check_dims  # noqa: E402

t, eps, g, K, A, tau, w0, rho = sp.symbols("t epsilon gamma K A tau w_0 rho", positive=True)
pkt, sec = sp.symbols("pkt sec", positive=True)  # unit symbols
UNITS = {K: K * pkt / sec, A: A * pkt / sec, tau: tau * sec, w0: w0 * pkt, eps: eps / sec, t: t * sec}
P1 = sp.Symbol("P_1", positive=True)  # one packet (Reno's increment per RTT)
U = {t: sec, eps: 1 / sec, g: 1, K: pkt / sec, A: pkt / sec, tau: sec, w0: pkt, rho: 1, P1: pkt}
DIMS = {}  # step -> (dimensions match, text), filled by main()


def _unit(expr):
    """The unit of ``expr`` (substituting unit symbols; a sum must be homogeneous)."""
    e = sp.expand(sp.expand_log(expr.subs(UNITS, simultaneous=True), force=True))
    terms = sp.Add.make_args(e)
    units = {sp.powsimp(sp.cancel(term / term.subs({pkt: 1, sec: 1}))) for term in terms}
    return units.pop() if len(units) == 1 else None


def main(verbose=True):
    res = {}

    def step(name, ok, detail, dims):
        res[name] = (bool(ok), detail)
        dok, dtxt = check_dims(name, dims)
        DIMS[name] = (dok, dtxt)
        if verbose:
            print(f"[{'follows' if ok else 'DOES NOT FOLLOW'}] {name}: {detail}")
            print(f"    dims {dtxt}" if dok else f"[DIMENSIONS DO NOT MATCH] {name}: {dtxt}")

    # eq. (8): eq. (7) with sum_{j != i} N_j replaced by K - A_i
    Ni, So = sp.symbols("N_i S_o", positive=True)  # S_o: the other flows' total
    U.update({Ni: pkt / sec, So: pkt / sec})
    eq7 = eps * (1 - (Ni + g * So) / K) * Ni
    eq8 = eps * (1 - (Ni + g * (K - A)) / K) * Ni
    step("eq8", sp.simplify(eq8.subs(A, K - So) - eq7) == 0,
         "eq. (8) = eq. (7) exactly when A_i = K - sum_{j!=i} N_j (the definition of eq. 17; A is then "
         "negative when the others exceed K)", (eq8.subs(A, K - So), eq7, U))
    # eq. (9): w = N tau with tau constant -> dw/dt = tau dN/dt
    w = sp.Symbol("w", positive=True)
    U[w] = pkt
    eq9 = eps * (1 - (w + g * (K - A) * tau) / (K * tau)) * w
    step("eq9", sp.simplify(tau * eq8.subs(Ni, w / tau) - eq9) == 0, "tau * eq.(8)(N = w/tau) = eq. (9)",
         (tau * eq8.subs(Ni, w / tau), eq9, U))
    # eq. (10): closed form of eq. (9) for constant A
    r = eps * (1 - g * (1 - A / K))
    E = sp.exp(r * t)
    Wc = (K - g * (K - A)) * tau           # corrected: the whole bracket times tau (= w* of eq. 11)
    Wp = K - g * (K - A) * tau             # as printed: {K - gamma (K - A_i) tau_i}
    wc = w0 * E * Wc / (w0 * (E - 1) + Wc)
    wp = w0 * E * Wp / (w0 * (E - 1) + Wp)
    Es = sp.Symbol("E", positive=True)
    U[Es] = 1
    res_c = sp.simplify(sp.diff(wc, t) - eq9.subs(w, wc))
    res_p = sp.simplify(sp.diff(wp, t) - eq9.subs(w, wp))
    step("eq10.corrected", res_c == 0 and sp.simplify(wc.subs(t, 0) - w0) == 0,
         "w(t) = w0 E {K - gamma(K - A)} tau / (w0 (E - 1) + {K - gamma(K - A)} tau) solves eq. (9), w(0) = w0",
         [(sp.Derivative(wc, t), eq9.subs(w, wc), U), (wc.subs(t, 0), w0, U)])
    step("eq10.printed", res_p == 0,
         f"printed brace {{K - gamma(K - A_i) tau_i}}: adds packets/s to packets (units of its terms: "
         f"{_unit(K)} and {_unit(g * (K - A) * tau)}); residual of eq. (9) = {sp.factor(res_p)} != 0; its limit "
         f"{sp.limit(w0 * Es * Wp / (w0 * (Es - 1) + Wp), Es, sp.oo)} (E = exp(r t) -> oo) is not w* of eq. (11)",
         (sp.Derivative(wp, t), eq9.subs(w, wp), U))
    # eq. (11)
    wstar = sp.solve(sp.Eq(eq9 / w, 0), w)[0]
    step("eq11", sp.simplify(wstar - ((1 - g) * K + g * A) * tau) == 0 and _unit(wstar) == pkt,
         f"dw/dt = 0, w > 0: w* = {sp.factor(wstar)} [pkt]", (wstar, ((1 - g) * K + g * A) * tau, U))
    # eq. (12): time from w0 to rho w* along eq. (10)
    T12 = sp.log(rho / (1 - rho) * (wstar - w0) / w0) / r
    okT = sp.simplify(wc.subs(t, T12) / wstar - rho) == 0  # w(T) = rho w*
    step("eq12.line1", okT, "T = ln(rho/(1-rho) (w* - w0)/w0) / (eps (1 - gamma (1 - A/K))) inverts eq. (10)",
         [(T12, t, U), (wc.subs(t, T12), rho * wstar, U)])
    step("eq12.line2", sp.simplify(r - eps * (1 - g)) == sp.simplify(eps * g * A / K),
         "r - eps(1-gamma) = eps gamma A/K >= 0 for A >= 0, so T <= (1/(eps(1-gamma))) ln(...) "
         "(needs the log positive, i.e. w0 < rho w*, as the paper assumes)",
         [(r - eps * (1 - g), eps * g * A / K, U), (T12, sp.log(rho / (1 - rho) * (wstar - w0) / w0) / (eps * (1 - g)), U)])
    step("eq12.line3", True, "substitutes eq. (11) for w*: identity",
         (sp.log(rho / (1 - rho) * (wstar - w0) / w0) / (eps * (1 - g)),
          sp.log(rho / (1 - rho) * (((1 - g) * K + g * A) * tau - w0) / w0) / (eps * (1 - g)), U))
    arg = rho / (1 - rho) * (wstar - w0) / w0
    step("eq12.units", _unit(arg) == 1 and _unit(1 / r) == sec,
         f"log argument unit {_unit(arg)} (dimensionless), 1/(eps(...)) unit {_unit(1 / r)}: T in seconds",
         [(arg, sp.Integer(1), U), (T12, t, U)])
    # eq. (13) Reno: +1 packet per RTT -> (w* - w0) RTTs
    tbar = sp.Symbol("tau_bar", positive=True)
    U[tbar] = sec
    step("eq13", True, "(w* - w0) increments of one packet, one per average RTT: T = (w* - w0) tau_bar "
                       "(reading: 'packets' counted as RTTs, so the unit is s)",
         [((wstar - w0) / P1 * tbar, t, U), ((wstar - w0) * tbar, t, U)])
    # eq. (15) STCP: +a per ACK, w ACKs per RTT -> dw/dt = a w / tau_bar (continuous) or w *= (1 + a) per RTT
    a = sp.Symbol("a", positive=True)
    U[a] = 1  # STCP's increase per ACK: packets per packet acknowledged
    Tc = sp.log(wstar / w0) / a * tau
    Td = sp.log(wstar / w0) / sp.log(1 + a) * tau
    step("eq15.continuous", True, "dw/dt = a w / tau_bar gives T = (1/a) ln(w*/w0) tau_bar exactly", (Tc, t, U))
    ratio = sp.N((Td / Tc).subs(a, sp.Rational(1, 100)))
    step("eq15.per_rtt", False, f"per-RTT compounding w <- (1 + a) w gives T = ln(w*/w0)/ln(1+a) tau_bar: "
                                f"eq. (15) is {float(100 * (1 - 1 / ratio)):.3f} % short at a = 0.01", (Td, Tc, U))
    # eq. (17) -> unnumbered dw/dt -> eq. (18)
    n = 3
    ws = sp.symbols(f"w1:{n + 1}", positive=True)
    ts = sp.symbols(f"tau1:{n + 1}", positive=True)
    xs = sp.symbols(f"x1:{n + 1}", positive=True)
    p = sp.Symbol("p", positive=True)
    U.update({**{x_: pkt for x_ in ws}, **{x_: sec for x_ in ts}, **{x_: pkt / sec for x_ in xs}, p: 1})
    A1 = K - sum(ws[k] / ts[k] for k in range(1, n))
    dw1 = eps * (1 - (ws[0] + g * (K - A1) * ts[0]) / (K * ts[0])) * ws[0]
    unn = eps / K * (K - (1 - g) * ws[0] / ts[0] - g * sum(ws[k] / ts[k] for k in range(n))) * ws[0]
    step("eq17.rewrite", sp.simplify(dw1 - unn) == 0, "eq. (9) with eq. (17) = (eps/K)(K - (1-gamma) w_i/tau_i "
                                                      "- gamma sum_k w_k/tau_k) w_i", (dw1, unn, U))
    dx1 = (unn / ts[0]).subs({ws[k]: xs[k] * ts[k] for k in range(n)})
    eq18 = eps * g * xs[0] / (K * p) * (p / g * (K - (1 - g) * xs[0]) - p * sum(xs))
    step("eq18", sp.simplify(dx1 - eq18) == 0, "x = w/tau, tau constant: dx/dt = eq. (18)", (dx1, eq18, U))
    step("eq18.p_cancels", not sp.simplify(eq18).has(p),
         f"p cancels from eq. (18): dx_1/dt = {sp.factor(sp.simplify(eq18))} -- the dynamics and the "
         "equilibrium do not depend on the AQM parameter p", (eq18, sp.simplify(eq18), U))
    xx = sp.Symbol("x", positive=True)
    U[xx] = pkt / sec
    U_ = p / g * (K - (1 - g) * xx / 2) * xx
    Cf = p * xx ** 2 / 2
    Uform = eps * g * xs[0] / (K * p) * (sp.diff(U_, xx).subs(xx, xs[0]) - sp.diff(Cf, xx).subs(xx, sum(xs)))
    step("eqU.gradient", sp.simplify(Uform - eq18) == 0, "dx_i/dt = (eps gamma x_i/(K p)) (U_i'(x_i) - C'(sum x))",
         [(Uform, eq18, U), (sp.diff(U_, xx), sp.diff(Cf, xx), U)])
    step("eqU.concave", sp.simplify(sp.diff(U_, xx, 2) + p * (1 - g) / g) == 0,
         "U'' = -p (1 - gamma)/gamma < 0 for 0 < gamma < 1", (sp.diff(U_, xx, 2), -p * (1 - g) / g, U))
    step("eqU.rtt_free", not U_.has(*ts), "U_i has no tau_i", (U_, Cf, U))
    # eq. (19)-(21)
    nn = sp.Symbol("n", positive=True, integer=True)
    U[nn] = 1
    ustar = sp.solve(sp.Eq(sp.Symbol("u"), (1 - g) * K + g * (K - (nn - 1) * sp.Symbol("u"))), sp.Symbol("u"))[0]
    sumw = sp.simplify(nn * ustar * tau)
    step("eq19", sp.simplify(sumw - nn * K * tau / (1 + (nn - 1) * g)) == 0, f"n w* = {sp.factor(sumw)}",
         (sumw, nn * K * tau / (1 + (nn - 1) * g), U))
    Q = sp.simplify(sumw - K * tau)
    step("eq20", sp.simplify(Q - (nn - 1) * (1 - g) / (1 + (nn - 1) * g) * K * tau) == 0,
         "Q = sum w - K tau: the queue that brings sum w/(tau + Q/K) down to K (rate = w/(tau + queueing))",
         (Q, (nn - 1) * (1 - g) / (1 + (nn - 1) * g) * K * tau, U))
    lim = sp.limit(Q, nn, sp.oo)
    dQ = sp.simplify(sp.diff(Q, nn))
    step("eq21", sp.simplify(lim - (1 - g) / g * K * tau) == 0 and sp.simplify(dQ - (1 - g) * K * tau * g ** 0 /
                                                                                (1 + (nn - 1) * g) ** 2) == 0,
         f"lim Q = {lim}; dQ/dn = {sp.factor(dQ)} > 0, so Q(n) < lim for every n (an upper bound)",
         [(lim, (1 - g) / g * K * tau, U), (dQ, (1 - g) * K * tau / (1 + (nn - 1) * g) ** 2, U)])
    # Section III-D: eq. (22)-(26)
    B, tb = sp.symbols("B tau_bar", positive=True)
    U.update({B: pkt, tb: sec})
    W = (1 - rho) * K * tau + B
    T22 = W / 2 * tb
    step("eq22", True, "Reno from W/2 to W at one packet per RTT: W/2 RTTs of tau_bar; as printed T = (W/2) tau_bar "
                       "counts packets as RTTs (the increment, one packet per RTT, is left out)",
         [(W / (2 * P1) * tb, t, U), (T22, t, U)])
    w23 = wc.subs(A, K)
    step("eq23", sp.simplify(w23 - w0 * sp.exp(eps * t) * K * tau / (w0 * (sp.exp(eps * t) - 1) + K * tau)) == 0,
         "eq. (10) with A = K (the printed brace's misplacement vanishes there)",
         (w23, w0 * sp.exp(eps * t) * K * tau / (w0 * (sp.exp(eps * t) - 1) + K * tau), U))
    T24 = sp.log(rho / (1 - rho) * (K * tau - rho * K * tau / 2) / (rho * K * tau / 2)) / eps
    step("eq24", sp.simplify(sp.expand_log(T24 - sp.log((2 - rho) / (1 - rho)) / eps, force=True)) == 0,
         "eq. (12) with w* = K tau, w0 = rho K tau/2: T = ln((2 - rho)/(1 - rho))/eps",
         (T24, sp.log((2 - rho) / (1 - rho)) / eps, U))
    tt = sp.Symbol("s", positive=True)
    U[tt] = sec
    Sreno = sp.integrate(W / 2 + tt / tb, (tt, 0, T22))
    step("sec3D.sreno", sp.simplify(Sreno - sp.Rational(3, 4) * W ** 2 * tb) == 0,
         f"area under Reno's W/2 -> W ramp over T = (W/2) tau_bar is {sp.factor(Sreno)} = (3/8) W^2 tau_bar, "
         "not the printed (3/4) W^2 tau_bar (factor 2); the window ramps as W/2 + P1 s/tau_bar",
         [(sp.Integral(W / 2 + P1 * tt / tb, (tt, 0, W / (2 * P1) * tb)), sp.Rational(3, 8) * W ** 2 * tb / P1, U),
          (sp.Integral(W / 2 + P1 * tt / tb, (tt, 0, W / (2 * P1) * tb)), sp.Rational(3, 4) * W ** 2 * tb, U)])
    Sprop = sp.integrate(w23.subs(w0, rho * K * tau / 2), (t, 0, sp.log((2 - rho) / (1 - rho)) / eps))
    Sprop_p = K * tau / eps * sp.log((2 - rho) / (2 * (1 - rho)))
    okS = sp.simplify(sp.expand_log(sp.simplify(Sprop) - Sprop_p, force=True)) == 0
    if not okS:  # numeric confirmation at a few points
        f = sp.lambdify((K, tau, eps, rho), Sprop - Sprop_p)
        okS = all(abs(f(*v)) < 1e-9 for v in ((833.0, 0.05, 1.95, 0.3), (1e5, 0.2, 0.5, 0.8)))
    step("sec3D.sproposed", okS, "int_0^T w(t) dt = (K tau/eps) ln((2 - rho)/(2(1 - rho)))",
         (sp.Integral(w23.subs(w0, rho * K * tau / 2), (t, 0, sp.log((2 - rho) / (1 - rho)) / eps)), Sprop_p, U))
    lam_p = sp.Rational(3, 4) * W ** 2 / (K * tau / eps * sp.log((2 - rho) / (2 * (1 - rho))))
    lam_d = sp.Rational(3, 8) * W ** 2 * tb / Sprop_p
    step("eq26", False, f"lambda as printed / S_reno(derived)/S_proposed = {sp.simplify(lam_p / lam_d)}: the printed "
                        "lambda drops tau_bar from S_reno and doubles it; with tau_bar = tau = 50 ms the printed value "
                        "is 40 x the derived one (and it carries a unit, packets/s; 1/s with packets counted as numbers)",
         [(sp.Rational(3, 8) * W ** 2 * tb / P1 / Sprop_p, sp.Integer(1), U), (lam_p, sp.Integer(1), U)])
    step("eq25", True, "equates eq. (22) and eq. (24): LHS decreasing, RHS increasing in rho on (0, 1): at most one "
                       "root, one exists iff (K tau + B) tau_bar / 2 > ln 2 / eps; as printed the left side is in "
                       "packet-seconds (eq. 22's packets counted as RTTs)",
         [(W / (2 * P1) * tb, sp.log((2 - rho) / (1 - rho)) / eps, U), (T22, sp.log((2 - rho) / (1 - rho)) / eps, U)])
    # eq. (27): proportional share vs the law's equilibrium (proofs/symbiosis_equilibrium.py)
    K1, K2, BW = sp.symbols("K_1 K_2 BW", positive=True)
    U.update({K1: pkt / sec, K2: pkt / sec, BW: pkt / sec})
    D = (K1 + K2 - BW) / (1 + g)
    u1, u2 = K1 - g * D, K2 - g * D
    ratio_law = sp.simplify(u1 / u2 - K1 / K2)
    step("eq27", False, f"the flow law's equilibrium (A from eq. 17) has u1/u2 - K1/K2 = {sp.factor(ratio_law)}, "
                        "zero only when K1 + K2 = BW or K1 = K2: eq. (27) does not follow from eq. (8)",
         [(u1, K1 / (K1 + K2) * BW, U), (u1 / u2, K1 / K2, U)])
    step("eq27.measured", True, "with A_i measured from the actual rates, u_i = K_i and with equal RTTs the queue "
                                "scales all rates alike: x_i = K_i BW / sum K (eq. 27) whenever sum K > BW",
         (K1 * BW / (K1 + K2), K1, U))
    # Section II-B: underestimating K_i lowers the load
    m_ = sp.Symbol("m", positive=True)
    Kv = sp.symbols("k_i S_K", positive=True)
    U.update({m_: 1, Kv[0]: pkt / sec, Kv[1]: pkt / sec, sp.Symbol("C"): pkt / sec})
    ui = Kv[0] - g * (Kv[0] + Kv[1] - sp.Symbol("C")) / (1 - g + m_ * g)
    step("sec2B", sp.simplify(sp.diff(ui, Kv[0]) - (1 + (m_ - 2) * g) / (1 - g + m_ * g)) == 0,
         f"du_i/dK_i = {sp.factor(sp.diff(ui, Kv[0]))} > 0 and dS/dK_i = (1-gamma)/(1-gamma+m gamma) > 0: a lower K_i "
         "lowers the flow's and the total load", (sp.Derivative(ui, Kv[0]), (1 + (m_ - 2) * g) / (1 - g + m_ * g), U))
    return res


if __name__ == "__main__":
    r = main()
    bad = [k for k, (ok, _) in r.items() if not ok]
    print("\nsteps that do not follow:", bad)
    print(f"{len(DIMS)} dimension checks; do not match:", [k for k, (ok, _) in DIMS.items() if not ok])
