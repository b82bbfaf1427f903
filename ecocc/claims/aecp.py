"""Claims of AECP: Huang et al., "Distributed bandwidth allocation based on alternating
evolution algorithm", J. Parallel Distrib. Comput. 2010 (seed 004_3a45f1aa9a94cd50.txt).

The journal version of CLTCP (001): the same model eq. (6) and theorems; the
computations are shared with :mod:`ecocc.claims.cltcp` through
:mod:`ecocc.claims._aecp_checks`.  Experiments: 500 Mbps bottleneck,
1000-byte packets, buffer = bandwidth-delay product, parking lot 500/250/500 Mbps.
"""
from __future__ import annotations

from . import _aecp_checks as K
from ._paperwrap import not_checkable, register
from .base import claim, record

P = "aecp"
SRC = "004_3a45f1aa9a94cd50.txt"

register("aecp.thm1", f"{SRC} Sec. 4.1, Theorem 1, eq. (7)-(14)",
         "Eq. (6) is globally asymptotically stable independent of the bottleneck capacity, the number of flows and "
         "the round-trip time (Lyapunov function (10), derivative (14))", K.thm1, P,
         run="ecocc.claims._aecp_checks.thm1; ecocc.stability.analyze('aecp', rtt_s=...)")
register("aecp.eq15", f"{SRC} Sec. 4.1, eq. (15)",
         "Equilibrium conditions: alpha x* (ln r* - ln x*) = 0, beta r* (1 - (N x_i* + (q* - q0)/T)/C) = 0, "
         "N x* - C = 0", K.eq15, P)
register("aecp.eq16", f"{SRC} Sec. 4.1, eq. (16)",
         "Equilibrium: x_i* = r* = C/N and q* = q0 (each flow the same rate, full utilization)", K.eq16, P)
register("aecp.thm2", f"{SRC} Sec. 4.2.1, Theorem 2, eq. (18)/(27)",
         "N synchronous flows from x0 << C/N reach theta-efficiency at t_theta with max(t1, t2) < t_theta < t1 + t2, "
         "t1 = ln(C/(N x0) theta/(1-theta))/beta, t2 = ln(ln(N x0/C)/ln theta)/alpha; O(ln(C/N))", K.thm2, P)
register("aecp.eq20", f"{SRC} Sec. 4.2.1, eq. (20)", "Case (1) of the proof of Theorem 2: x_i'(t) = r(t)",
         K.eq20, P)
register("aecp.eq22", f"{SRC} Sec. 4.2.1, eq. (22)",
         "The solution of eq. (21): x(t) = (C(1 - q0/CT)/N) / (1 + (C(1 - q0/CT)/(N x0) - 1) exp(-b(1 - q0/CT) t))",
         K.eq22, P)
register("aecp.eq26", f"{SRC} Sec. 4.2.1, eq. (23)-(26)",
         "t1 = ln[(C/(N x0) - 1) theta/(1-theta)]/beta ~ ln(C/(N x0) theta/(1-theta))/beta (24) and "
         "t2 = ln(ln(N x0/C)/ln theta)/alpha (26)", K.eq24_26, P)
register("aecp.thm3", f"{SRC} Sec. 4.2.2, Theorem 3, eq. (29)/(33)",
         "A new flow joining N synchronous flows at steady state reaches eps-fairness after "
         "t_eps = ln ln(C eps/(N x0))/alpha, i.e. O(ln ln(C/N))", K.thm3, P)
register("aecp.eq32", f"{SRC} Sec. 4.2.2, eq. (31)-(32)",
         "From g\' = -alpha g ln g (31): ln ln g(t) = -alpha (32)", K.eq32, P)
register("aecp.eq35", f"{SRC} Sec. 4.3, eq. (34)-(37)",
         "The partial derivatives (35) of F, G, H at x* = r* = C/N, q* = q0 and the linear system (36)-(37)",
         K.eq35, P)
register("aecp.eq38", f"{SRC} Sec. 4.3, eq. (38)",
         "Open-loop transfer function L(s) = alpha beta (s + 1/T) / (s^2 (s + alpha))", K.eq38, P)
register("aecp.eq43", f"{SRC} Sec. 4.3, eq. (39)-(43)",
         "Matching (38) to the PI-compensated loop (41) with the rule (42) tau = 4 T0, Ti = 8 K0 T0^2 gives "
         "beta = alpha/2, T = 4/alpha; alpha = 2 /s gives beta = 1 /s, T = 2 s", K.eq43, P)
register("aecp.eq47", f"{SRC} Sec. 5, eq. (44)-(49)",
         "Discretisation: (45) from (44) and (6), (46) from (45), and with T1 = tau, T2 = 0.1 s, q0 = 100 the final "
         "controller (47) x(k+1) = x(k)^(1-2 tau) r(k-1)^(2 tau), r(k+1) = r(k) exp{0.1 (1 - (sum x + (q - 100)/2)/C)}",
         K.eq47, P)
register("aecp.sec5", f"{SRC} Sec. 5",
         "Selecting T1 = tau and T2 = 0.1 s guarantees the sampling precision of the discrete controller (47)",
         K.sec5_sampling, P)
register("aecp.fig6", f"{SRC} Sec. 6.1, Fig. 6",
         "Four flows (RTT 50/100/200/400 ms) join at 0/50/100/150 s and leave at 400/350/300/250 s on 500 Mbps: "
         "AECP achieves max-min fairness independent of RTT", K.fig6, P, 500.0)
register("aecp.table1", f"{SRC} Sec. 6.2, Table 1 (AECP, S1)",
         "Ten flows, 500 Mbps, RTT 50 ms, joining every 5 s, no crossing traffic: utilization 100 %, loss ratio 0, "
         "average queue 100 packets (approaching q0)", K.table_s1, P, 500.0, 10, 5.0, 200.0, 100.0, 100.0, 3125.0)
register("aecp.fig8", f"{SRC} Sec. 6.2, Fig. 8",
         "With 80 Mbps web traffic the ten AECP flows converge to 42 Mbps; during the 160 Mbps UDP burst (100-200 s) "
         "to 26 Mbps by 105 s; back to the previous rate after 200 s", K.robustness, P, 500.0, 80.0, 160.0,
         (100, 200), 10, 5.0, 300.0, (42.0, 26.0))
register("aecp.fig10", f"{SRC} Sec. 6.3, Fig. 9-10",
         "Parking lot 500/250/500 Mbps (20 ms per link): flows 1 and 3 get 125 Mbps, flows 2 and 4 get 375 Mbps "
         "(max-min fair)", K.parking, P, (500.0, 250.0, 500.0), [125.0, 375.0, 125.0, 375.0])


@claim("aecp.sec5.1", f"{SRC} Sec. 5.1",
       "The AECP header (8-bit Next Header + 16-bit pre-allocation rate factor) is 3 bytes long")
def sec5_1(figdir=None):
    """Check the AECP header size of 004 (Sec. 5.1): 8-bit Next Header + 16-bit rate factor = 3 bytes.

    Arithmetic only; whether a 16-bit field can hold the rate factors of fast links is not checkable
    from the text (the paper gives no unit), as the detail says.

    Parameters
    ----------
    figdir : pathlib.Path, optional
        Not used (this check draws no figure).

    Returns
    -------
    Record
        ``holds`` if 8 + 16 bits make 24 bits (3 bytes), else ``fails``.
    """
    bits = 8 + 16
    return record("aecp.sec5.1", "holds" if bits == 24 else "fails",
                  f"8 + 16 = {bits} bits = {bits // 8} bytes. (A 16-bit field holds rate factors up to 65535 in "
                  "whatever unit the header uses; the paper does not give the unit, so whether 10 Gbps = 1.25e6 "
                  "pkt/s fits is not checkable from the text.)", {"bits": bits})


_PKT = ("a packet-level run of the same scenario: `ecocc packet` / `ecocc compare` (issue 12, ns-3 with the "
        "protocol's sender and router as in Sec. 5)")
not_checkable("aecp.table1.s2", f"{SRC} Sec. 6.2, Table 1 (S2 column)",
              "With 10 reverse-path flows, 80 Mbps of web traffic (400 on-off sources) and a 160 Mbps UDP burst: AECP "
              "utilization 98.64 %, loss ratio 6.75e-4, average queue 1358 packets",
              "reverse-path flows (ACK path), the packet dynamics of 400 on-off web sources and per-packet tail drop",
              _PKT)
not_checkable("aecp.table1.others", f"{SRC} Sec. 6.2, Table 1 (TCPSack, VCP, XCP rows)",
              "TCPSack 100/87.14 %, VCP 93.06/89.95 %, XCP 99.97/94.28 % utilization, with the loss ratios and queues "
              "of Table 1", "models of TCP-SACK, VCP and XCP (ecocc has a Reno fluid model only) and packet effects",
              "ns-3 runs of TCP-SACK, VCP and XCP on the same dumbbell (issue 12)")
not_checkable("aecp.fig10.others", f"{SRC} Sec. 6.3, Fig. 10",
              "In VCP flows get 67/369/174/369 Mbps; in XCP flows 1 and 3 get 125 Mbps, flow 2 338 Mbps and flow 4 "
              "365 Mbps; the TCPSack long flow gets no bandwidth",
              "models of VCP, XCP and TCP-SACK", "ns-3 runs on the parking lot (issue 12)")
not_checkable("aecp.fig6.others", f"{SRC} Sec. 6.1, Fig. 6",
              "TCPSack cannot achieve max-min fairness, VCP is too slow, XCP is the fastest; AECP is a little slower "
              "than XCP", "models of TCP-SACK, VCP and XCP", "ns-3 runs of the four protocols (issue 12)")
