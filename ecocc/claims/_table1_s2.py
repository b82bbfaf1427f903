"""Table 1 S2 of AECP (004) and Table I S2 of CLTCP (001) from a packet-level run with reverse-path flows.

S2 is the robustness run of Fig. 8 (web-like on/off traffic, a UDP burst) with as many reverse-path flows
as forward ones: their data crosses the bottleneck's reverse direction and their ACKs share the forward
direction with the forward flows' data.  The fluid models have no reverse direction; the ns-3 back end
builds them (:func:`ecocc.packet.spec.build_spec`, ``reverse_flows``), with a stamping router on each
direction so that every flow's data meets one on its own forward path only.

Scale.  The paper's runs (500 Mbps for 300 s; 120 Mbps for 200 s, both directions loaded) are 40 to 75
million packet transmissions: hours of ns-3 here.  The run is made at 10 Mbps with every quantity that
has the dimension of a rate or of a number of packets multiplied by the same factor ``s`` (capacity, web
and UDP rates, buffer, q0); times (RTT, T, T2, on/off periods, start times, burst window) are kept.  The
fluid model of eq. (6)/(46)-(49) is invariant under that scaling (rates and queues over C are unchanged),
so utilization and loss ratio compare directly and the queue compares as ``queue / s`` (the queueing delay
is the same).  What the scaling changes is the packet granularity (one packet is 0.8 ms at 10 Mbps,
16 us at 500 Mbps): that is what this packet-level reading adds to the fluid ones, and why its verdict
belongs to the scaled run.

The forward flows join every ``start_every_s`` as in Fig. 8 (the paper's S2 is that run); the reverse-path
flows join at the same times (the paper does not say when they start: our choice).
"""
from __future__ import annotations

import math
import tomllib
from importlib import resources

from ._packet import combine, not_run_reading, packet_evidence
from .base import Reading

#: the bottleneck of the packet-level run (Mbps)
RUN_MBPS = 10.0


def s2_scenario(base: str, scale: float) -> tuple[dict, list]:
    """The scaled S2 scenario (as :func:`ecocc.scenarios.from_dict` reads it) and its reverse-path flows.

    Parameters
    ----------
    base : str
        Shipped scenario of the paper's robustness run (``aecp-fig8`` or ``cltcp-fig8``).
    scale : float
        Factor on capacities, cross-traffic rates, buffer and q0 (dimensionless, > 0).

    Returns
    -------
    scenario : dict
        The scenario dict: rates and buffers scaled, web traffic as ``n_sources`` exponential on/off sources.
    reverse_flows : list of dict
        One reverse-path flow per forward flow, the same RTT and start time (:func:`ecocc.packet.spec.build_spec`).
    """
    d = tomllib.loads(resources.files("ecocc.scenarios").joinpath("data", f"{base}.toml").read_text())
    sc = dict(d["scenario"])
    sc["name"] = f"{base}-s2-x{scale:g}"
    sc["notes"] = f"Table 1 S2 at packet level: {base} scaled by {scale:g}, with reverse-path flows"
    params = dict(d.get("params", {}))
    params["q0_pkts"] = float(params.get("q0_pkts", 100.0)) * scale
    links = [dict(lk, capacity_mbps=lk["capacity_mbps"] * scale, buffer_pkts=max(1, round(lk["buffer_pkts"] * scale)))
             for lk in d["links"]]
    cross = []
    for c in d["cross_traffic"]:
        c = dict(c)
        if "rate_mbps" in c:
            c["rate_mbps"] = c["rate_mbps"] * scale
        if "schedule_mbps" in c:
            c["schedule_mbps"] = [[t, r * scale] for t, r in c["schedule_mbps"]]
        cross.append(c)
    flows = [dict(f) for f in d["flows"]]
    out = {"scenario": sc, "params": params, "links": links, "flows": flows, "cross_traffic": cross}
    rev = []
    for f in flows:
        for k in range(int(f.get("count", 1))):
            rev.append({"name": f"rev_{k + 1}", "route": list(f["route"]), "rtt_ms": f["rtt_ms"],
                        "start_s": float(f.get("start_s", 0.0)) + k * float(f.get("start_every_s", 0.0))})
    return out, rev


def s2_check(name: str, base: str, paper_mbps: float, util: float, loss: float, queue_pkts: float):
    """Judge Table 1 S2 (utilization, loss ratio, average queue) on a scaled packet run with reverse-path flows.

    Parameters
    ----------
    name : str
        Claim id prefix for the cache (``"aecp.table1.s2"``).
    base : str
        Shipped scenario of the robustness run (``aecp-fig8`` / ``cltcp-fig8``).
    paper_mbps : float
        The paper's bottleneck (Mbps); the run is at :data:`RUN_MBPS`, scale ``RUN_MBPS / paper_mbps``.
    util, loss, queue_pkts : float
        The paper's S2 utilization (fraction), loss ratio and average queue (packets), whole-run averages.

    Returns
    -------
    (verdict, detail, evidence, readings)
        Verdict by :func:`ecocc.claims._packet.combine` of the three readings; ``not-checkable`` with the reason
        when ns-3 did not run.
    """
    s = RUN_MBPS / paper_mbps
    scen, rev = s2_scenario(base, s)
    t_end = float(scen["scenario"]["duration_s"])
    what = (f"{len(rev)} forward and {len(rev)} reverse-path flows of {base} at {RUN_MBPS:g} Mbps (x{s:.4g}), "
            f"{t_end:g} s")
    burst = [c for c in scen["cross_traffic"] if "schedule_mbps" in c][0]["schedule_mbps"]
    b0, b1 = float(burst[0][0]), float(burst[1][0])  # the UDP burst's start and end (s)
    phases = [(0.0, b0), (b0, b0 + 10.0), (b0 + 10.0, b1), (b1, t_end)]  # where the drops happen
    ev, why = packet_evidence(f"{name}.packet", scen, (0.0, t_end), reverse_flows=rev, extra_windows=phases)
    if ev is None:
        r = not_run_reading("utilization, loss ratio and queue of S2 at packet level", why, what)
        return "not-checkable", r.detail, {"why_not_run": why}, [r]
    b = ev["links"].index("bottleneck")
    u, q = ev["utilization"][b], ev["mean_queue_pkts"][b]
    lost, ratio = ev["lost_pkts_run"][b], ev["loss_ratio_run"][b]
    offered = lost / ratio if ratio > 0 else ev.get("offered_pkts_run", [math.nan])[b]
    expect = loss * offered
    # drops counted as a Poisson count at the paper's ratio: within 2 standard deviations, plus one packet
    loss_tol = 2.0 * math.sqrt(max(expect, 0.0)) + 1.0
    tag = f"packet level, {RUN_MBPS:g} Mbps (x{s:.4g}), {len(rev)} reverse-path flows"
    readings = [
        # 0.5 percentage point: the S1 utilization readings' margin (the table rounds to 0.01 %)
        Reading(f"utilization {util:.2%}, {tag}", "holds" if abs(u - util) <= 0.005 else "fails",
                f"{u:.3%} over the whole run [0, {t_end:g}] s (the paper's Table 1 averages the whole run)", {}),
        Reading(f"loss ratio {loss:.3g}, {tag}", "holds" if abs(lost - expect) <= loss_tol else "fails",
                f"{lost:.0f} packets dropped of {offered:.0f} offered at the bottleneck (ratio {ratio:.3g}); the "
                f"paper's ratio gives {expect:.3g} +- {loss_tol:.3g} (2 sigma of a Poisson count, + 1 packet). Drops by "
                "phase: " + ", ".join(f"{a:g}-{c:g} s: {x[b]:.0f}" for (a, c), x in zip(phases, ev["lost_pkts_extra"]))
                + f" (UDP burst {b0:g}-{b1:g} s)", {}),
        # 10 %: the S1 queue readings' tolerance ('approaches q0': within 10 %)
        Reading(f"average queue {queue_pkts:g} packets, {tag}",
                "holds" if abs(q / s - queue_pkts) <= 0.1 * queue_pkts else "fails",
                f"{q:.2f} packets at {RUN_MBPS:g} Mbps, i.e. {q / s:.1f} packets at the paper's {paper_mbps:g} Mbps "
                f"(the same queueing delay, {1e3 * q / (s * paper_mbps * 125):.2f} ms); q0 scaled to "
                f"{scen['params']['q0_pkts']:.3g} packets", {}),
    ]
    v = combine(r.verdict for r in readings)
    rates = ", ".join(f"{n} {x * 8e-3:.3f}" for n, x in zip(ev["flows"], ev["send_rate_pps"]))
    detail = (f"ns-3 run of {what}: the paper's S2 scaled by {s:.4g} (capacity, web and UDP rates, buffer "
              f"{scen['links'][0]['buffer_pkts']} packets, q0), times kept; every flow's data meets a stamping router on "
              f"its own forward direction only. Utilization {u:.3%}, loss ratio {ratio:.3g}, mean queue {q:.2f} packets "
              f"({q / s:.1f} at the paper's scale). Mean sending rates (Mbps, whole run): {rates}.")
    return v, detail, {"packet": ev, "scenario": scen, "reverse_flows": rev, "scale": s}, readings
