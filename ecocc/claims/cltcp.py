"""Claims of CLTCP: Huang et al., "Improving the Convergence and Stability of Congestion
Control Algorithm" (seed 001_ceee9933a8b24a34.txt).

Model eq. (6) (the same as AECP, 004): the computations are shared with
:mod:`ecocc.claims.aecp` through :mod:`ecocc.claims._aecp_checks`; each paper
has its own records.  Experiments: 120 Mbps bottleneck, 1000-byte packets,
parking lot 120/60/120 Mbps.
"""
from __future__ import annotations

from . import _aecp_checks as K
from .base import claim, record
from ._paperwrap import not_checkable, register

P = "cltcp"
SRC = "001_ceee9933a8b24a34.txt"

register("cltcp.thm1", f"{SRC} Sec. IV.A, Theorem 1, eq. (7)-(14)",
         "Eq. (6) is globally asymptotically stable independent of the bottleneck capacity, the number of flows and "
         "the round-trip time (Lyapunov function (10), derivative (14))", K.thm1, P,
         run="ecocc.claims._aecp_checks.thm1; ecocc.stability.analyze('aecp', rtt_s=...)")
register("cltcp.eq15", f"{SRC} Sec. IV.A, eq. (15)",
         "Equilibrium conditions: alpha x* (ln eta* - ln x*) = 0, beta eta* (1 - N x_i* + ((q* - q0)/T)/C) = 0, "
         "N x* - C = 0", K.eq15, P)
register("cltcp.eq16", f"{SRC} Sec. IV.A, eq. (16)",
         "Equilibrium: x_i* = r* = C/N and q* = q0 (each flow the same rate, full utilization)", K.eq16, P)
register("cltcp.thm2", f"{SRC} Sec. IV.B.1, Theorem 2, eq. (18)/(27)",
         "N synchronous flows from x0 << C/N reach theta-efficiency at t_theta with max(t1, t2) < t_theta < t1 + t2, "
         "t1 = ln(C/(N x0) theta/(1-theta))/beta, t2 = ln(ln(N x0/C)/ln theta)/alpha; O(ln(C/N))", K.thm2, P)
register("cltcp.eq20", f"{SRC} Sec. IV.B.1, eq. (20)", "Case (1) of the proof of Theorem 2: x_i'(t) = r(t)",
         K.eq20, P)
register("cltcp.eq22", f"{SRC} Sec. IV.B.1, eq. (22)",
         "The solution of eq. (21): x(t) = (C(1 - q0/CT)/N) / (1 + (C(1 - q0/CT)/(N x0) - 1) exp(-b(1 - q0/CT) t))",
         K.eq22, P)
register("cltcp.eq26", f"{SRC} Sec. IV.B.1, eq. (23)-(26)",
         "t1 = ln[(C/(N x0) - 1) theta/(1-theta)]/beta ~ ln(C/(N x0) theta/(1-theta))/beta (24) and "
         "t2 = ln(ln(N x0/C)/ln theta)/alpha (26)", K.eq24_26, P)
register("cltcp.thm3", f"{SRC} Sec. IV.B.2, Theorem 3, eq. (29)/(33)",
         "A new flow joining N synchronous flows at steady state reaches eps-fairness after "
         "t_eps = ln ln(C eps/(N x0))/alpha, i.e. O(ln ln(C/N))", K.thm3, P)
register("cltcp.eq32", f"{SRC} Sec. IV.B.2, eq. (31)-(32)",
         "From g' = -alpha g ln g (31): ln ln g(t) = -alpha t (32)", K.eq32, P)
register("cltcp.eq35", f"{SRC} Sec. IV.C, eq. (34)-(37)",
         "The partial derivatives (35) of F, G, H at x* = r* = C/N, q* = q0 and the linear system (36)-(37)",
         K.eq35, P)
register("cltcp.eq38", f"{SRC} Sec. IV.C, eq. (38)",
         "Open-loop transfer function L(s) = alpha beta (s + 1/T) / (s^2 (s + alpha))", K.eq38, P)
register("cltcp.eq43", f"{SRC} Sec. IV.C, eq. (39)-(43)",
         "Matching (38) to the PI-compensated loop (41) with the rule (42) tau = 4 T0, Ti = 8 K0 T0^2 gives "
         "beta = alpha/2, T = 4/alpha; alpha = 2 /s gives beta = 1 /s, T = 2 s", K.eq43, P)
register("cltcp.eq47", f"{SRC} Sec. V, eq. (44)-(49)",
         "Discretisation: (45) from (44) and (6), (46) from (45), and with T1 = tau, T2 = 0.1 s, q0 = 100 the final "
         "controller (47) x(k+1) = x(k)^(1-2 tau) r(k-1)^(2 tau), r(k+1) = r(k) exp{0.1 (1 - (sum x + (q - 100)/2)/C)}",
         K.eq47, P)
register("cltcp.sec5", f"{SRC} Sec. V",
         "Selecting T1 = tau and T2 = 0.1 s guarantees the sampling precision of the discrete controller (47)",
         K.sec5_sampling, P)
register("cltcp.fig6", f"{SRC} Sec. VI.A, Fig. 6",
         "Four flows (RTT 50/100/200/400 ms) join at 0/50/100/150 s and leave at 400/350/300/250 s on 120 Mbps: "
         "full utilization, zero packet loss, max-min fairness independent of RTT", K.fig6, P, 120.0)
register("cltcp.table1", f"{SRC} Sec. VI.B, Table I (CLTCP, S1)",
         "Four flows, 120 Mbps, RTT 50 ms, no disturbing traffic: utilization 100 %, loss ratio 0, average queue "
         "108 packets (approaching q0)", K.table_s1, P, 120.0, 4, 0.0, 200.0, 100.0, 108.0, 10e6 / 1000)
register("cltcp.fig8", f"{SRC} Sec. VI.B, Fig. 8",
         "With 20 Mbps web traffic the four CLTCP flows converge to 25 Mbps; during the 40 Mbps UDP burst "
         "(100-150 s) to 15 Mbps by 105 s; back to the previous rate after 150 s", K.robustness, P, 120.0, 20.0,
         40.0, (100, 150), 4, 0.0, 200.0, (25.0, 15.0))
register("cltcp.fig10", f"{SRC} Sec. VI.C, Fig. 9-10",
         "Parking lot 120/60/120 Mbps (20 ms per link): flows 1 and 3 get 30 Mbps, flows 2 and 4 get 90 Mbps "
         "(max-min fair)", K.parking, P, (120.0, 60.0, 120.0), [30.0, 90.0, 30.0, 90.0])

_PKT = ("a packet-level run of the same scenario: `ecocc packet` / `ecocc compare` (issue 12, ns-3 with the "
        "protocol's sender and router as in Sec. V)")
@claim("cltcp.table1.s2", f"{SRC} Sec. VI.B, Table I (S2 column)",
       "With 4 reverse-path flows, 20 Mbps of web traffic (100 on-off sources) and a 40 Mbps UDP burst: "
       "CLTCP utilization 98.63 %, loss ratio 7.59e-8, average queue 393 packets")
def table1_s2(figdir=None):
    """Table 1 S2 from an ns-3 run with 4 reverse-path flows at 10 Mbps (:mod:`ecocc.claims._table1_s2`).

    Parameters
    ----------
    figdir : Path, optional
        Unused (no figure).

    Returns
    -------
    Record
        The three readings' combined verdict; ``not-checkable`` with the reason when ns-3 did not run.
    """
    from ._table1_s2 import s2_check
    v, detail, ev, readings = s2_check("cltcp.table1.s2", "cltcp-fig8", 120.0, 0.9863, 7.59e-08, 393.0)
    return record("cltcp.table1.s2", v, detail, ev, readings,
                  run="ecocc.claims._table1_s2.s2_check('cltcp.table1.s2', 'cltcp-fig8', 120, ...)")
not_checkable("cltcp.table1.xcp", f"{SRC} Sec. VI.B, Table I (XCP row)",
              "XCP: utilization 99.94 % / 86.28 %, loss 0 / 3.36e-2, average queue 0.8 / 485 packets (S1 / S2)",
              "an XCP model (ecocc has none) and packet effects", "an ns-3 XCP run beside CLTCP (issue 12)")
not_checkable("cltcp.fig10.xcp", f"{SRC} Sec. VI.C, Fig. 10(b)",
              "In XCP flows 1 and 3 get 30 Mbps, flow 2 only 81 Mbps and flow 4 only 87 Mbps",
              "an XCP model (ecocc has none)", "an ns-3 XCP run on the parking lot (issue 12)")
