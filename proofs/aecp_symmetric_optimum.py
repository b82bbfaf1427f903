"""Derivation of the AECP/CLTCP parameter rule beta = alpha/2, T = 4/alpha.

Run: ``python proofs/aecp_symmetric_optimum.py``.  Everything below is
computed from the model's own laws (ecocc.models.aecp) called with SymPy
symbols; nothing is re-typed from the papers.
"""
import math
import os
import sys

import sympy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _steps import report_dims, sec  # noqa: E402

from ecocc.stability import analyze, margins, pade_check
from ecocc.symbolic import symmetric_optimum, synchronous_loop


def main():
    loop = synchronous_loop("aecp")
    a, b, T = (loop.param_symbols[k] for k in ("alpha_per_s", "beta_per_s", "T_s"))
    s = loop.s
    print("AECP synchronous loop, N flows on one link of capacity C, feedback delay tau")
    print("states:", loop.state_names, " equilibrium:", loop.equilibrium)   # claim aecp.eq16
    print("A0 =", loop.A0.tolist())
    print("A1 =", loop.A1.tolist())
    print("loop cut:", loop.loop_cut)
    print("L(s) =", loop.L, "   (times exp(-s tau))")
    # claim aecp.eq38: L(s) = alpha beta (s + 1/T) / (s^2 (s + alpha))
    paper = a * b * (s + 1 / T) / (s ** 2 * (s + a))
    print("L(s) - alpha*beta*(s+1/T)/(s^2 (s+alpha)) =", sympy.simplify(loop.L - paper), " [aecp.eq38]")
    units = {a: 1 / sec, b: 1 / sec, T: sec, s: 1 / sec}
    report_dims("aecp.eq38: the loop gain L(s) is dimensionless", (paper, sympy.Integer(1), units))
    so = symmetric_optimum(loop, values={a: 2})
    # claim aecp.eq39-40: match to K0/Ti (1 + tau_c s)/(s^2 (1 + T0 s))
    print("coefficient matching:", so.matched, " [aecp.eq39-40]")
    # claim aecp.eq41-42: symmetric optimum tau_c = 4 T0, Ti = 8 K0 T0^2 (derived: unit gain at max phase)
    print("symmetric optimum conditions (a = 2):", so.conditions, " [aecp.eq41-42]")
    # claim aecp.eq43: beta = alpha/2, T = 4/alpha
    print("solution:", so.solution, " [aecp.eq43]")
    report_dims("aecp.eq43: beta = alpha/2 (1/s) and T = 4/alpha (s)", [(b, a / 2, units), (T, 4 / a, units)])
    report_dims("aecp.thm1: the delay margin atan(3/4)/w_c is a time (w_c = 1 rad/s at alpha = 2)",
                (sympy.atan(sympy.Rational(3, 4)) / (a / 2), T, units))
    print("crossover w_c =", so.crossover_rad_s, "rad/s;  phase margin =", so.phase_margin_deg, "=",
          float(so.phase_margin_deg), "deg")
    print("delay-free closed-loop poles at alpha = 2:", so.closed_loop_poles)
    m0 = margins(loop.rational(rtt_s=1.0).with_delay(0.0))
    print(f"exact: PM = {m0.phase_margin_deg:.4f} deg at {m0.crossover_rad_s:.4f} rad/s; "
          f"critical delay = PM/w_c = {m0.critical_delay_s:.4f} s (atan(3/4) = {math.atan(0.75):.4f})")
    # claim aecp.thm1 (global stability for any RTT): contradicted by the linearization
    print("\nRTT (s)  PM (deg)  GM      w_c (rad/s)  DM (s)   stable  rightmost root (1/s)")
    for rtt in (0.05, 0.1, 0.2, 0.5, 0.6, 0.7, 1.0):
        r = analyze("aecp", rtt_s=rtt)
        m = r.margins
        print(f"{rtt:7.2f}  {m.phase_margin_deg:8.3f}  {m.gain_margin:6.3f}  {m.crossover_rad_s:11.4f}  "
              f"{m.delay_margin_s:7.4f}  {str(m.stable):6s}  {r.roots.rightmost_per_s:.4f}")
    print("=> the claim of stability for any RTT [aecp.thm1] is CONTRADICTED at RTT > 0.6435 s (alpha = 2).")
    pc = pade_check(loop.rational(rtt_s=0.3))
    print("\nPade cross-check at RTT 0.3 s: orders", pc.orders, "PM error (deg)",
          [f"{e:.2e}" for e in pc.phase_margin_error_deg])


if __name__ == "__main__":
    main()
