"""A scenario as a packet-level run specification (plain JSON for the ns-3 child process).

Choices made here (stated in every result's ``solver`` record):

- **Packets.** Every data packet is ``packet_bytes`` bytes at the IP layer (1000 B for the Huang
  et al. scenarios, 1500 B for TCP Symbiosis: the scenario file's ``packet_bytes``); capacities
  in packets/s are converted to bit/s with that size.  TCP baselines use a segment of
  ``packet_bytes - 40`` bytes (20-byte IP and TCP headers, timestamps off).  The rate-based
  senders (AECP, PE-TCP, Symbiosis) send UDP datagrams of ``packet_bytes`` bytes; their
  receivers answer every packet with a 48-byte ACK (IP 20 + UDP 8 + 20-byte ecocc header).
- **Delays.** Link ``l`` has its one-way delay ``delay_s``; each flow gets an access link at
  each end of ``(rtt_s/2 - sum of its links' delays)/2`` seconds, so that its round-trip
  propagation delay is ``rtt_s`` (plus serialisation: one packet time per link).  The fluid
  model's ``delay_split`` has no packet-level counterpart: packets really travel.
- **Buffers.** Drop-tail FIFO of ``buffer_pkts`` packets on the forward direction of every link
  (``inf`` becomes :data:`INF_BUFFER_PKTS`); the reverse direction carries the ACKs.  Reno
  scenarios with ``aqm = "red"`` drop on the instantaneous queue with the fluid model's RED
  profile.  Access links run at ``access_factor`` times the fastest link.
- **Reverse-path flows.** ``reverse_flows`` (an argument, not part of the fluid scenario: the fluid
  models have no reverse direction) send their data over their links' reverse direction and their
  ACKs over the forward one, with the scenario's protocol.  Then every link's reverse direction gets
  a router of its own (drop-tail with the link's buffer, its own AECP rate factor or Symbiosis
  stamp): each flow's data meets a stamping router on its own forward direction only, never the
  other direction's (a router that stamped both would regulate the ACKs).  The per-link counters of
  the result stay those of the forward direction; the reverse direction's are in ``link_vars``.
- **Cross traffic.** ``constant`` and ``schedule``: a paced UDP source with the piecewise-constant
  rate.  ``onoff``: ``n_sources`` ns-3 OnOff UDP sources with exponential on and off times (the
  fluid model's ``mean`` or binned ``random`` realisation is a different, smoothed thing).
"""
from __future__ import annotations

import math

from ..errors import InputError, check, check_finite
from ..models import get_model

#: Buffer used at packet level where the scenario says ``inf`` (packets).
INF_BUFFER_PKTS = 100_000

#: protocol names accepted by ``--protocol``: ecocc's own rate-based senders and ns-3 TCPs
TCP_TYPES = {
    "reno": "ns3::TcpNewReno", "newreno": "ns3::TcpNewReno", "highspeed": "ns3::TcpHighSpeed",
    "scalable": "ns3::TcpScalable", "bic": "ns3::TcpBic", "cubic": "ns3::TcpCubic",
}
RATE_PROTOCOLS = ("aecp", "petcp", "symbiosis")
PROTOCOLS = RATE_PROTOCOLS + tuple(TCP_TYPES)

#: scenario model -> packet-level protocol
MODEL_PROTOCOL = {"aecp": "aecp", "cltcp": "aecp", "petcp": "petcp", "symbiosis": "symbiosis", "reno": "reno"}


def protocol_for(model: str, protocol: str | None = None) -> str:
    """Return the packet-level protocol of a scenario model, or the explicit ``protocol``.

    Parameters
    ----------
    model : str
        The scenario's model (a key of :data:`MODEL_PROTOCOL`; checked only without ``protocol``).
    protocol : str or None, optional
        An explicit protocol, one of :data:`PROTOCOLS` (any case).

    Returns
    -------
    str
        The protocol, lower case.

    Raises
    ------
    InputError
        For an unknown ``protocol``, or a model without a packet-level protocol.
    """
    if protocol is not None:
        p = str(protocol).lower()
        check(p in PROTOCOLS, "protocol", protocol, f"one of {', '.join(PROTOCOLS)}")
        return p
    check(model in MODEL_PROTOCOL, "scenario.model", model, f"one of {sorted(MODEL_PROTOCOL)}")
    return MODEL_PROTOCOL[model]


def build_spec(sc, *, protocol: str | None = None, t_end_s: float | None = None, bin_s: float = 0.1,
               seed: int = 1, access_factor: float = 10.0, overrides: dict | None = None,
               symbiosis_tau: str = "measured", reverse_flows=None) -> dict:
    """The JSON run specification of scenario ``sc`` (an :class:`ecocc.scenarios.Scenario`).

    Parameters
    ----------
    sc : Scenario
        The scenario (network in packets/s and seconds, ``packet_bytes`` 100 to 9000).
    protocol : str, optional
        One of :data:`PROTOCOLS`; default: the scenario model's (``reno`` -> ns-3 TcpNewReno).
    t_end_s : float, optional
        Simulated time (s); default the scenario's ``duration_s``.
    bin_s : float
        Sampling period of the cumulative counters and width of the rate/queue bins (s).
    seed : int
        ns-3 random seed (on/off cross traffic, RED).
    access_factor : float
        Access links run at this multiple of the fastest link's capacity.
    overrides : dict, optional
        Model parameters replacing the scenario's.
    symbiosis_tau : {"measured", "propagation"}
        TCP Symbiosis's tau_i of eq. (10): the smallest RTT the sender measured (002 defines tau_i so,
        "assumed to equal the propagation delay"; default), or the flow's propagation RTT given to it.
    reverse_flows : list of dict, optional
        Reverse-path flows, each ``{"name", "route"`` (link names in the forward order; the data
        travels them backwards), ``"rtt_ms"`` or ``"rtt_s"``, optional ``"start_s"``, ``"stop_s"``
        (seconds) and ``"initial_rate_pps"`` (packets/s, default 10)``}``; see the module docstring.

    Returns
    -------
    dict
        JSON-able: ``scenario``, ``model``, ``protocol``, ``driver_protocol``, ``packet_bytes``,
        ``t_end_s`` and ``bin_s`` (s), ``seed``, ``access_factor``, the model ``params``, the ``red``
        profile (or None), and per link (capacity in packets/s, delay in s, buffer in packets, q0, r0),
        per flow (route, RTT, start/stop in s, rates in packets/s, ``reverse``: a reverse-path flow,
        listed after the scenario's flows) and per cross-traffic source.

    Raises
    ------
    InputError
        For an unknown protocol, bad times or factors, a packet size outside 100-9000 bytes, a buffer
        below one packet, an RTT shorter than twice its links' one-way delays, or routes the
        packet-level topology cannot build.
    """
    check(symbiosis_tau in ("measured", "propagation"), "symbiosis_tau", symbiosis_tau, "'measured' or 'propagation'")
    net = sc.network
    proto = protocol_for(sc.model, protocol)
    t_end = check_finite("t_end_s", sc.duration_s if t_end_s is None else t_end_s, positive=True)
    bin_s = check_finite("bin_s", bin_s, positive=True)
    check(bin_s <= t_end, "bin_s", bin_s, f"at most t_end_s = {t_end}")
    access_factor = check_finite("access_factor", access_factor, positive=True)
    check(access_factor >= 1, "access_factor", access_factor, "a number >= 1")
    params_in = dict(sc.params)
    params_in.update(overrides or {})
    # the scenario's parameters when the protocol is the scenario model's; otherwise the paper's
    # defaults of the protocol's own model (a TCP baseline on a non-Reno scenario: drop-tail)
    if MODEL_PROTOCOL.get(sc.model) == proto:
        P = get_model(sc.model).make_params(**params_in).as_dict()
    elif proto in RATE_PROTOCOLS:
        P = get_model(proto).make_params(**(overrides or {})).as_dict()
    else:
        P = {}
    pb = float(net.packet_bytes)
    check(100 <= pb <= 9000, "packet_bytes", pb, "100 to 9000 bytes at packet level (headers of 48 bytes must "
          "fit; 9000 is a jumbo frame; population-unit scenarios such as iguchi-fig1 have no packet-level form)")
    a = net.arrays
    links = []
    for i, lk in enumerate(net.links):
        nflows = int((a.pair_link == i).sum())
        buf = lk.buffer_pkts if math.isfinite(lk.buffer_pkts) else INF_BUFFER_PKTS
        check(buf >= 1, f"link[{lk.name}].buffer_pkts", lk.buffer_pkts, "at least one packet at packet level")
        q0 = lk.target_queue_pkts if lk.target_queue_pkts is not None else P.get("q0_pkts", 100.0)
        r0 = P.get("r0_pps") or lk.capacity_pps / max(nflows, 1)  # the fluid model's choice (models/aecp.py)
        links.append({"name": lk.name, "capacity_pps": lk.capacity_pps, "delay_s": lk.delay_s,
                      "buffer_pkts": int(buf), "buffer_from_scenario": None if math.isinf(lk.buffer_pkts) else buf,
                      "q0_pkts": float(q0), "r0_pps": float(r0)})
    flows = []
    for j, f in enumerate(net.flows):
        d = sum(net.links[net.link_index(n)].delay_s for n in f.route)
        if f.rtt_s / 2 < d - 1e-12:
            raise InputError(f"flow[{f.name}].rtt_s", f.rtt_s,
                             f"at least twice the one-way delay of its links ({2 * d:g} s) at packet level")
        flows.append({"name": f.name, "route": [net.link_index(n) for n in f.route], "rtt_s": f.rtt_s,
                      "start_s": f.start_s, "stop_s": f.stop_s if math.isfinite(f.stop_s) else None,
                      "initial_rate_pps": f.initial_rate_pps, "physical_bw_pps": float(a.physical_bw_pps[j])})
    _check_routes(net)
    flows += _reverse_flows(net, reverse_flows, {f["name"] for f in flows})
    cross = []
    for c in net.cross_traffic:
        li = net.link_index(c.link)
        if c.kind == "onoff":
            p_on = c.mean_on_s / (c.mean_on_s + c.mean_off_s)
            cross.append({"link": li, "kind": "onoff", "n": int(c.n_sources), "mean_on_s": c.mean_on_s,
                          "mean_off_s": c.mean_off_s, "peak_pps": c.rate_pps / (int(c.n_sources) * p_on),
                          "mean_pps": c.rate_pps})
        else:
            times, rates = c.piecewise(t_end)
            cross.append({"link": li, "kind": "cbr", "times": [float(t) for t in times],
                          "rates": [float(r) for r in rates]})
    red = None
    if P.get("aqm") == "red":
        red = {"min_th_pkts": P["red_min_th_pkts"], "max_th_pkts": P["red_max_th_pkts"], "p_max": P["red_p_max"]}
    tcp_type = TCP_TYPES.get(proto)
    return {
        "scenario": sc.name, "model": sc.model, "protocol": proto,
        "driver_protocol": f"tcp:{tcp_type}" if tcp_type else proto,
        "symbiosis_tau": symbiosis_tau, "packet_bytes": pb, "t_end_s": t_end, "bin_s": bin_s, "seed": int(seed), "access_factor": access_factor,
        "params": {k: v for k, v in P.items() if isinstance(v, (int, float, str)) or v is None}, "red": red,
        "links": links, "flows": flows, "cross": cross,
    }


def _check_routes(net) -> None:
    """Every route must be the unique fewest-hop path of the router graph the routes build.

    The packet back end joins consecutive links of a route at one router and lets ns-3's global
    routing (fewest hops) find the paths; a route that is not the unique fewest-hop path between its
    ends would silently carry its packets elsewhere, so it is refused.
    """
    from collections import deque
    L = net.n_links
    parent = list(range(2 * L))

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i
    for f in net.flows:
        idx = [net.link_index(n) for n in f.route]
        for a, b in zip(idx, idx[1:]):
            parent[find(2 * a + 1)] = find(2 * b)
    adj = {}
    for lk in range(L):
        u, v = find(2 * lk), find(2 * lk + 1)
        check(u != v, "network.flows", net.links[lk].name, "routes that do not turn a link into a loop")
        adj.setdefault(u, set()).add(v)
        adj.setdefault(v, set()).add(u)  # point-to-point links carry both directions
    for f in net.flows:
        idx = [net.link_index(n) for n in f.route]
        src, dst = find(2 * idx[0]), find(2 * idx[-1] + 1)
        dist, count = {src: 0}, {src: 1}
        q = deque([src])
        while q:
            u = q.popleft()
            for v in adj.get(u, ()):
                if v not in dist:
                    dist[v], count[v] = dist[u] + 1, count[u]
                    q.append(v)
                elif dist[v] == dist[u] + 1:
                    count[v] += count[u]
        if dist.get(dst) != len(idx) or count.get(dst) != 1:
            raise InputError(f"flow[{f.name}].route", list(f.route),
                             "the unique fewest-hop path between its ends at packet level "
                             f"(ns-3 global routing); here the fewest hops are {dist.get(dst)} over "
                             f"{count.get(dst)} path(s)")


def _reverse_flows(net, reverse_flows, taken) -> list:
    """The specification entries of reverse-path flows (see :func:`build_spec`), checked."""
    if reverse_flows is None:
        return []
    check(isinstance(reverse_flows, (list, tuple)), "reverse_flows", reverse_flows, "a list of flow tables")
    out = []
    names = {lk.name for lk in net.links}
    for i, f in enumerate(reverse_flows):
        where = f"reverse_flows[{i}]"
        check(isinstance(f, dict), where, f, "a table with name, route and rtt_ms (or rtt_s)")
        unknown = set(f) - {"name", "route", "rtt_ms", "rtt_s", "start_s", "stop_s", "initial_rate_pps"}
        check(not unknown, where, sorted(unknown), "keys among name, route, rtt_ms, rtt_s, start_s, stop_s, "
              "initial_rate_pps")
        name = f.get("name", f"rev{i + 1}")
        check(isinstance(name, str) and name and name not in taken, f"{where}.name", name,
              "a flow name not used by another flow")
        taken.add(name)
        route = f.get("route")
        check(isinstance(route, (list, tuple)) and len(route) > 0 and all(r in names for r in route),
              f"{where}.route", route, f"a non-empty list of link names among {sorted(names)}")
        idx = [net.link_index(r) for r in route]
        check(len(set(idx)) == len(idx), f"{where}.route", route, "each link at most once")
        for a, b in zip(idx, idx[1:]):  # consecutive links must meet at a router some forward route joins them at
            if not any(b in fr and fr.index(b) == fr.index(a) + 1 for fr in
                       ([net.link_index(n) for n in fl.route] for fl in net.flows) if a in fr):
                raise InputError(f"{where}.route", list(route), "links that some forward flow also crosses "
                                 "in this order (the packet topology joins links only where routes do)")
        check(("rtt_ms" in f) != ("rtt_s" in f), f"{where}.rtt_ms", f.get("rtt_ms", f.get("rtt_s")),
              "exactly one of rtt_ms or rtt_s")
        rtt = check_finite(f"{where}.rtt_ms", f["rtt_ms"], positive=True) * 1e-3 if "rtt_ms" in f else \
            check_finite(f"{where}.rtt_s", f["rtt_s"], positive=True)
        d = sum(net.links[k].delay_s for k in idx)
        check(rtt / 2 >= d - 1e-12, f"{where}.rtt_s", rtt, f"at least twice the one-way delay of its links ({2 * d:g} s)")
        start = check_finite(f"{where}.start_s", f.get("start_s", 0.0))
        check(start >= 0, f"{where}.start_s", start, "a time >= 0 s")
        stop = f.get("stop_s")
        if stop is not None:
            stop = check_finite(f"{where}.stop_s", stop)
            check(stop > start, f"{where}.stop_s", stop, f"a time after start_s = {start}")
        x0 = check_finite(f"{where}.initial_rate_pps", f.get("initial_rate_pps", 10.0), positive=True)
        out.append({"name": name, "route": idx, "rtt_s": rtt, "start_s": start, "stop_s": stop,
                    "initial_rate_pps": x0, "physical_bw_pps": float(min(net.links[k].capacity_pps for k in idx)),
                    "reverse": True})
    return out
