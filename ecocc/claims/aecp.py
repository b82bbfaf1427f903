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
@claim("aecp.table1.s2", f"{SRC} Sec. 6.2, Table 1 (S2 column)",
       "With 10 reverse-path flows, 80 Mbps of web traffic (400 on-off sources) and a 160 Mbps UDP burst: AECP "
       "utilization 98.64 %, loss ratio 6.75e-4, average queue 1358 packets")
def table1_s2(figdir=None):
    """Table 1 S2 from an ns-3 run with 10 reverse-path flows at 10 Mbps (:mod:`ecocc.claims._table1_s2`).

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
    v, detail, ev, readings = s2_check("aecp.table1.s2", "aecp-fig8", 500.0, 0.9864, 0.000675, 1358.0)
    return record("aecp.table1.s2", v, detail, ev, readings,
                  run="ecocc.claims._table1_s2.s2_check('aecp.table1.s2', 'aecp-fig8', 500, ...)")
not_checkable("aecp.table1.others", f"{SRC} Sec. 6.2, Table 1 (TCPSack, VCP, XCP rows)",
              "TCPSack 100/87.14 %, VCP 93.06/89.95 %, XCP 99.97/94.28 % utilization, with the loss ratios and queues "
              "of Table 1", "models of TCP-SACK, VCP and XCP (ecocc has a Reno fluid model only) and packet effects",
              "ns-3 runs of TCP-SACK, VCP and XCP on the same dumbbell (issue 12)")
#: Fig. 9-10's parking lot at capacity x 0.02 for the packet level (10/5/10 Mbps; 500/250/500 Mbps for 60 s is 12
#: million data packets): the shipped scenario aecp-fig10 scaled, its buffers (bandwidth x the longest RTT through
#: the link, 120 ms) scaled alike.  The paper gives no duration and speaks of steady state: 180 s, judged over the
#: final 60 s (the long flow's share still grows after the shipped scenario's 60 s: 7 % of its share over 50-60 s,
#: 12 % over 60-120 s, measured).  Max-min shares: f1 and f3 2.5 Mbps, f2 and f4 7.5.
FIG10_PACKET = {
    "scenario": {"name": "aecp-fig10-x0.02", "model": "aecp", "duration_s": 180.0, "summary_window_s": 60.0,
                 "output_dt_s": 0.1, "packet_bytes": 1000},
    "links": [{"name": n, "capacity_mbps": c, "delay_ms": 20, "buffer_pkts": b}
              for n, c, b in (("l1", 10, 150), ("l2", 5, 75), ("l3", 10, 150))],
    "flows": [{"name": "f1", "route": ["l1", "l2", "l3"], "rtt_ms": 120}]
    + [{"name": f, "route": [lk], "rtt_ms": 40} for f, lk in (("f2", "l1"), ("f3", "l2"), ("f4", "l3"))],
}


@claim("aecp.fig10.others", f"{SRC} Sec. 6.3, Fig. 10",
       "In VCP flows get 67/369/174/369 Mbps; in XCP flows 1 and 3 get 125 Mbps, flow 2 338 Mbps and flow 4 365 Mbps; "
       "the TCPSack long flow gets no bandwidth")
def fig10_others(figdir=None):
    """Fig. 10's other protocols: the TCPSack part from an ns-3 run of :data:`FIG10_PACKET` (TcpNewReno, SACK).

    Parameters
    ----------
    figdir : Path, optional
        Unused (no figure).

    Returns
    -------
    Record
        Verdict ``fails`` if the TCPSack reading fails, else ``not-checkable`` (VCP and XCP parts); the TCPSack
        reading is ``not-checkable`` with the reason when ns-3 did not run.
    """
    from ._packet import combine, not_run_reading, packet_evidence
    from .base import Reading
    name = "the TCPSack long flow gets no bandwidth (ns-3 TcpNewReno with SACK, parking lot at capacity x 0.02)"
    ev, why = packet_evidence("aecp.fig10.packet", FIG10_PACKET, (120.0, 180.0), protocol="reno",
                              extra_windows=[(50.0, 60.0), (60.0, 120.0)])
    share_pps = 2.5e6 / 8000  # f1's max-min share at 10/5/10 Mbps
    if ev is None:
        tcp = not_run_reading(name, why, "ns-3 TcpNewReno (SACK on) on the parking lot at 10/5/10 Mbps for 180 s")
    else:
        g = ev["goodput_pps"]
        # "no bandwidth" read as below 10 % of its max-min share (the +-10 % band of `ecocc compare`), in steady
        # state (the final 60 s)
        starved = g[0] < FAIR_BAND * share_pps
        earlier = "; ".join(f"{a:g}-{b:g} s: {x[0] * 8e-3:.3f} Mbps ({x[0] / share_pps:.0%})"
                            for (a, b), x in zip(ev["extra_windows_s"], ev["goodput_pps_extra"]))
        tcp = Reading(name, "holds" if starved else "fails",
                      "goodput over 120-180 s: " + " / ".join(f"{n} {x * 8e-3:.3f} Mbps" for n, x in zip(ev["flows"], g))
                      + f"; f1 gets {g[0] / share_pps:.0%} of its max-min share (2.5 Mbps; 'no bandwidth' read as "
                      f"below {FAIR_BAND:.0%}); earlier, f1 got {earlier}; utilization "
                      + "/".join(f"{u:.3f}" for u in ev["utilization"])
                      + ", loss ratio " + "/".join(f"{x:.1e}" for x in ev["loss_ratio_window"]),
                      {"packet": ev, "scenario": FIG10_PACKET})
    readings = [
        tcp,
        Reading("VCP: 67/369/174/369 Mbps", "not-checkable", "no VCP: ecocc has no VCP model and the ns-3 wheel has none",
                {}),
        Reading("XCP: 125/338/125/365 Mbps", "not-checkable",
                "no packet-level XCP (ecocc's packet back end and the ns-3 wheel 3.44 have none); ecocc's fluid XCP "
                "model is a different claim's evidence (`ecocc reproduce aecp-fig10`)", {}),
    ]
    v = combine(r.verdict for r in readings)
    return record("aecp.fig10.others", v,
                  "The TCPSack part is run at packet level (ns-3); VCP and XCP have no packet-level implementation here, "
                  "so the statement as a whole is " + ("false (its TCPSack part fails)" if v == "fails" else
                                                        "not settled") + ". " + tcp.detail,
                  {"packet_level_check": "ns-3 TcpNewReno (SACK) on the parking lot at capacity x 0.02, 180 s", "packet": ev,
                   "why_not_run": None if ev is not None else why}, readings,
                  run="ecocc.packet.run_packet(scenarios.from_dict(ecocc.claims.aecp.FIG10_PACKET), protocol='reno')")
#: Fig. 6 at 10 Mbps for the packet level (capacity x 0.02: 500 Mbps for 250 s is 31 million packets).  The paper's
#: buffer is "the product of bandwidth and delay"; the delay of that product is the mean RTT, 187.5 ms, as in the
#: shipped scenario aecp-fig6 (11719 packets at 500 Mbps), i.e. 234 packets at 10 Mbps.  The run ends at 250 s,
#: when flow 4 leaves: the window 230-250 s (all four flows active) is the scenario's own window for this claim.
FIG6_PACKET = {
    "scenario": {"name": "aecp-fig6-10mbps", "model": "aecp", "duration_s": 250.0, "summary_window_s": 20.0,
                 "output_dt_s": 0.1, "packet_bytes": 1000},
    "links": [{"name": "bottleneck", "capacity_mbps": 10, "buffer_pkts": 234}],
    "flows": [{"name": f"f{i + 1}", "route": ["bottleneck"], "rtt_ms": r, "start_s": s0, "stop_s": s1,
               "initial_rate_pps": 10}
              for i, (r, s0, s1) in enumerate([(50, 0, 400), (100, 50, 350), (200, 100, 300), (400, 150, 250)])],
}
#: "max-min fairness" on one bottleneck is an equal split; a flow counts as off it when its goodput is more than
#: 10 % from the four flows' mean: the +-10 % band of the convergence time of `ecocc compare`
FAIR_BAND = 0.10


@claim("aecp.fig6.others", f"{SRC} Sec. 6.1, Fig. 6",
       "TCPSack cannot achieve max-min fairness, VCP is too slow, XCP is the fastest; AECP is a little slower than "
       "XCP")
def fig6_others(figdir=None):
    """Fig. 6's other protocols: the TCPSack part from an ns-3 run of :data:`FIG6_PACKET` (TcpNewReno, SACK).

    Parameters
    ----------
    figdir : Path, optional
        Unused (no figure).

    Returns
    -------
    Record
        Verdict ``fails`` if the TCPSack reading fails, else ``not-checkable`` (VCP and XCP parts); the TCPSack
        reading is ``not-checkable`` with the reason when ns-3 did not run.
    """
    from ._packet import combine, not_run_reading, packet_evidence
    from .base import Reading
    name = "TCPSack cannot achieve max-min fairness (ns-3 TcpNewReno with SACK, Fig. 6 at 10 Mbps = capacity x 0.02)"
    ev, why = packet_evidence("aecp.fig6.packet", FIG6_PACKET, (230.0, 250.0), protocol="reno")
    if ev is None:
        tcp = not_run_reading(name, why, "ns-3 TcpNewReno (SACK on) on Fig. 6's dumbbell at 10 Mbps for 250 s")
    else:
        g = ev["goodput_pps"]
        mean = sum(g) / len(g)
        dev = [x / mean - 1 for x in g]
        off = max(abs(d) for d in dev) > FAIR_BAND
        tcp = Reading(name, "holds" if off else "fails",
                      "goodput over 230-250 s (all four flows active): " + " / ".join(
                          f"f{i + 1} (RTT {r} ms) {x * 8e-3:.3f} Mbps ({d:+.0%})"
                          for i, (x, r, d) in enumerate(zip(g, (50, 100, 200, 400), dev)))
                      + f" of their mean; max-min fair is equal rates, a flow more than {FAIR_BAND:.0%} off counts as "
                      f"unfair; utilization {ev['utilization'][0]:.4f}, loss ratio {ev['loss_ratio_window'][0]:.2e}, "
                      f"mean queue {ev['mean_queue_pkts'][0]:.0f} of {ev['buffers_pkts'][0]:g} packets",
                      {"packet": ev, "scenario": FIG6_PACKET})
    readings = [
        tcp,
        Reading("VCP is too slow to achieve max-min fairness", "not-checkable",
                "no VCP: ecocc has no VCP model and the ns-3 wheel has no VCP", {}),
        Reading("XCP is the fastest; AECP a little slower than XCP", "not-checkable",
                "no packet-level XCP: ecocc's packet back end has none and the ns-3 wheel (3.44) has none (ecocc's "
                "XCP is a fluid model only)", {}),
    ]
    v = combine(r.verdict for r in readings)
    return record("aecp.fig6.others", v,
                  "The TCPSack part is run at packet level (ns-3); VCP and XCP exist neither in ecocc's packet back "
                  "end nor in ns-3, so the statement as a whole is " + (
                      "false (its TCPSack part fails)" if v == "fails" else "not settled") + ". " + tcp.detail,
                  {"packet_level_check": "ns-3 TcpNewReno (SACK) on Fig. 6 at 10 Mbps", "packet": ev,
                   "why_not_run": None if ev is not None else why}, readings,
                  run="ecocc.packet.run_packet(scenarios.from_dict(ecocc.claims.aecp.FIG6_PACKET), protocol='reno')")
