"""Equilibrium of TCP Symbiosis's flow law on one link, for unequal physical bandwidths K_i.

Run: ``python proofs/symbiosis_equilibrium.py``.

The law (ecocc.models.symbiosis, eq. 9 and 17 of 002_2fcfdbe8ba8bf605.txt)::

    w_i' = eps (1 - (w_i + gamma (K_i - A_i) tau_i) / (K_i tau_i)) w_i
    A_i  = min(K_i, C - c - sum_k u_k + u_i),       u_k = w_k / tau_k

(C capacity, c constant cross traffic, ``available="paper"``).  Steps:

1. a surviving flow (w_i > 0) has u_i = (1 - gamma) K_i + gamma A_i (eq. 11);
2. capped (A_i = K_i) gives u_i = K_i; uncapped gives
   u_i = K_i - gamma D with D = (sum_I K - (C - c)) / (1 - gamma + m gamma)
   for the m survivors I (solved jointly, substituted back);
3. either every survivor is capped (sum_I K + c <= C) or none is;
4. a flow j outside I stays at w_j = 0 (cannot invade) iff K_j - gamma D <= 0
   (its growth per window at w_j = 0 is eps (1 - gamma)(K_j - gamma D)/K_j, gamma < 1),
   so the survivors are the m largest K, m the largest count with positive u;
5. K_i = K, c = 0, all n survive: sum w = n K tau / (1 + (n-1) gamma), eq. (19).

With ``available="measured"`` (A from actual arrival rates) a saturated link
gives u_i = K_i for every flow and the queue alone balances the load.

Units: K, C, c, u, A in packets/s; tau in s; w in packets; eps in 1/s.  Every
step carries a dimension check of its two sides (proofs/_steps.py ``dims``),
printed after it and kept in :data:`DIMS`.
"""
import os
import sys

import sympy as sp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _steps import check_dims, pkt, sec  # noqa: E402

DIMS = {}  # step -> (dimensions match, text), filled by main()


def main(verbose=True):
    out = {}
    say = print if verbose else (lambda *a, **k: None)

    def dim(name, spec):
        ok, txt = check_dims(name, spec)
        DIMS[name] = (ok, txt)
        say(f"    dims {txt}" if ok else f"[DIMENSIONS DO NOT MATCH] {name}: {txt}")
    eps, g, C, c = sp.symbols("epsilon gamma C c", positive=True)
    m = 3  # a concrete survivor count for the joint solve; the general-m formula is checked against it
    K = sp.symbols(f"K1:{m + 1}", positive=True)
    u = sp.symbols(f"u1:{m + 1}", positive=True)
    tau = sp.symbols(f"tau1:{m + 1}", positive=True)
    S = sum(u)
    # step 1: w' = 0 with w > 0
    A = sp.Symbol("A")
    w = sp.Symbol("w", positive=True)
    lawbr = 1 - (w + g * (K[0] - A) * tau[0]) / (K[0] * tau[0])
    sol1 = sp.solve(sp.Eq(lawbr, 0), w)[0]
    ok1 = sp.simplify(sol1 / tau[0] - ((1 - g) * K[0] + g * A)) == 0
    say("step 1  w* / tau =", sp.factor(sol1 / tau[0]), " == (1-gamma)K + gamma A:", ok1)
    out["step1_eq11"] = ok1
    U = {eps: 1 / sec, g: 1, C: pkt / sec, c: pkt / sec, A: pkt / sec, w: pkt,
         **{k_: pkt / sec for k_ in K}, **{k_: pkt / sec for k_ in u}, **{k_: sec for k_ in tau}}
    dim("step1_eq11", (sol1 / tau[0], (1 - g) * K[0] + g * A, U))
    # step 2: uncapped A_i = C - c - S + u_i for all survivors; solve jointly
    eqs = [sp.Eq(u[i], (1 - g) * K[i] + g * (C - c - S + u[i])) for i in range(m)]
    sol = sp.solve(eqs, u, dict=True)[0]
    D = (sum(K) - (C - c)) / (1 - g + m * g)
    ok2 = all(sp.simplify(sol[u[i]] - (K[i] - g * D)) == 0 for i in range(m))
    say("step 2  u_i = K_i - gamma D, D = (sum K - (C - c))/(1 - gamma + m gamma):", ok2)
    # substitute back into the flow law itself (w_i = u_i tau_i): w_i' must vanish
    back = []
    for i in range(m):
        Ai = C - c - sum(sol[u[k]] for k in range(m)) + sol[u[i]]
        wi = sol[u[i]] * tau[i]
        back.append(sp.simplify(eps * (1 - (wi + g * (K[i] - Ai) * tau[i]) / (K[i] * tau[i])) * wi))
    ok2b = all(b == 0 for b in back)
    say("        substituted back into the flow law: w_i' =", back, "->", ok2b)
    # dimensions: K, C, c, u in packets/s, tau in s -> w in packets; D is a rate
    pps, s = sp.symbols("pps s", positive=True)
    dimD = sp.simplify(D.subs({K[0]: pps, K[1]: pps, K[2]: pps, C: pps, c: pps}) / pps)
    ok2c = not dimD.has(pps)
    say("        dimension of D / (packets/s) free of units:", ok2c)
    out["step2_joint"] = ok2 and ok2b and ok2c
    dim("step2_joint", [(sol[u[0]], K[0] - g * D, U), (D, C, U)])
    # step 3: spare = C - c - S, A_i - K_i = spare/(1-gamma) in the uncapped solution
    spare = sp.simplify(C - c - sum(sol.values()))
    ok3a = sp.simplify(spare - (1 - g) * (C - c - sum(K)) / (1 - g + m * g)) == 0
    AmK = sp.simplify(C - c - sum(sol.values()) + sol[u[0]] - K[0])
    ok3b = sp.simplify(AmK - spare / (1 - g)) == 0
    say("step 3  spare =", sp.factor(spare), "; A_i - K_i = spare/(1-gamma):", ok3a and ok3b)
    say("        => uncapped (A_i < K_i) iff sum_I K + c > C; capped (u_i = K_i) iff sum K + c <= C")
    out["step3_all_or_none"] = ok3a and ok3b
    dim("step3_all_or_none", [(spare, (1 - g) * (C - c - sum(K)) / (1 - g + m * g), U), (AmK, spare / (1 - g), U)])
    # step 4: invasion of an absent flow j (w_j = 0): growth rate per w at w = 0
    Kj = sp.Symbol("K_j", positive=True)
    Aj = C - c - sum(sol.values())  # its own u_j = 0
    rate0 = sp.simplify(eps * (1 - g * (Kj - Aj) / Kj))
    ok4 = sp.simplify(rate0 * Kj / eps - (1 - g) * (Kj - g * D)) == 0
    say("step 4  growth per window of an absent flow: eps (1-gamma)(K_j - gamma D)/K_j:", ok4)
    out["step4_invasion"] = ok4
    dim("step4_invasion", (rate0, eps * (1 - g) * (Kj - g * D) / Kj, {**U, Kj: pkt / sec}))
    # step 5: equal K, c = 0, n flows -> eq. (19)
    n, Kk, tt = sp.symbols("n K tau", positive=True)
    un = Kk - g * (n * Kk - C) / (1 - g + n * g)
    sum_w = sp.simplify(n * un.subs(C, Kk) * tt)
    ok5 = sp.simplify(sum_w - n * Kk * tt / (1 + (n - 1) * g)) == 0
    say("step 5  equal K = C: sum w =", sp.factor(sum_w), " == eq. (19):", ok5)
    out["step5_eq19"] = ok5
    dim("step5_eq19", (sum_w, n * Kk * tt / (1 + (n - 1) * g), {**U, n: 1, Kk: pkt / sec, tt: sec}))
    # measured reading: saturated link, A_i = min(K_i, u_i) -> u_i = K_i
    ui = sp.Symbol("u_i", positive=True)
    solm = sp.solve(sp.Eq(ui, (1 - g) * K[0] + g * ui), ui)
    okm = solm == [K[0]]
    say("measured: u_i = (1-gamma) K_i + gamma u_i ->", solm, okm)
    out["measured_u_eq_K"] = okm
    dim("measured_u_eq_K", (ui, (1 - g) * K[0] + g * ui, {**U, ui: pkt / sec}))
    return out


if __name__ == "__main__":
    r = main()
    print("all steps follow:", all(r.values()))
    print(f"{len(DIMS)} dimension checks; do not match:", [k for k, (ok, _) in DIMS.items() if not ok])
