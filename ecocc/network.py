"""Networks: links, flows, cross traffic and the routing matrix.

Units inside: seconds, packets, packets/s.  Builders accept the same.

Delay placement
---------------
Each flow ``p`` crossing link ``l`` has a *forward* delay ``d_f(l, p)`` (the
time its packets take from the source to link ``l``) and a *backward* delay
``d_b(l, p) = rtt_p - d_f(l, p)`` (the time the signal of link ``l`` takes to
reach the source of ``p``).  The CLTCP/AECP papers (eq. 6 of
001_ceee9933a8b24a34.txt) put the whole round trip on the feedback path:
``x_p'(t) = a x_p (ln r_p(t - tau_p) - ln x_p)`` with the link seeing
``x_p(t)``.  That is ``delay_split="feedback"`` (the default).  The
alternative ``delay_split="propagation"`` sends packets to link ``k`` of the
route after the one-way delays of the links before it, and the rest of the
round trip is feedback.  An explicit ``Flow.forward_delays_s`` overrides both.
"""
from __future__ import annotations

import dataclasses
import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from .errors import InputError, check, check_finite

DELAY_SPLITS = ("feedback", "propagation")


@dataclass(frozen=True)
class Link:
    """A unidirectional link.

    Parameters
    ----------
    name : str
        Link name, unique in its network (routes refer to it).
    capacity_pps : float
        Service rate in packets/s (> 0).
    delay_s : float
        One-way propagation delay of the link in seconds (>= 0); used by
        ``delay_split="propagation"`` and by the builders to form RTTs.
    buffer_pkts : float
        Buffer size in packets (> 0, ``inf`` for no limit).  The fluid queue
        is kept in ``[0, buffer_pkts]``; inflow above capacity with a full
        buffer is counted as lost (tail drop).
    target_queue_pkts : float or None
        Target queue of protocols that have one (q0 of CLTCP/AECP);
        ``None`` uses the model parameter.
    """

    name: str
    capacity_pps: float
    delay_s: float = 0.0
    buffer_pkts: float = math.inf
    target_queue_pkts: float | None = None

    def __post_init__(self):
        check(isinstance(self.name, str) and self.name != "", "link.name", self.name, "a non-empty string")
        object.__setattr__(self, "capacity_pps", check_finite(f"link[{self.name}].capacity_pps", self.capacity_pps, positive=True))
        object.__setattr__(self, "delay_s", check_finite(f"link[{self.name}].delay_s", self.delay_s, nonneg=True))
        b = self.buffer_pkts
        try:
            b = float(b)
        except (TypeError, ValueError):
            raise InputError(f"link[{self.name}].buffer_pkts", b, "a number > 0 or inf") from None
        check(b > 0, f"link[{self.name}].buffer_pkts", b, "a number > 0 or inf")
        object.__setattr__(self, "buffer_pkts", b)
        if self.target_queue_pkts is not None:
            object.__setattr__(self, "target_queue_pkts", check_finite(
                f"link[{self.name}].target_queue_pkts", self.target_queue_pkts, nonneg=True))


@dataclass(frozen=True)
class Flow:
    """A long-lived flow on a fixed route.

    Parameters
    ----------
    name : str
        Flow name, unique in its network.
    route : tuple of str
        Ordered names of the links the flow crosses (at least one).
    rtt_s : float
        Round-trip propagation delay in seconds (> 0).
    start_s, stop_s : float
        The flow sends in ``[start_s, stop_s)``; ``stop_s`` may be ``inf``.
    initial_rate_pps : float
        Rate (packets/s, > 0) the flow has when it starts.
    forward_delays_s : tuple of float or None
        Source-to-link delay for each link of the route; ``None`` uses the
        network's ``delay_split``.  Each must lie in ``[0, rtt_s]``.
    physical_bw_pps : float or None
        Physical bandwidth K_i the flow believes it has (TCP Symbiosis);
        ``None`` means the smallest capacity on the route.
    protocol : str or None
        The protocol this flow runs: a registry model name (``"reno"``,
        ``"symbiosis"``, ...) or a key of the ``protocols`` table given to
        :func:`ecocc.simulate` (a model with its own parameters).  ``None``
        (default): the simulation's ``model``.  Flows naming several protocols
        make a mixed network (:mod:`ecocc.mixed`).
    """

    name: str
    route: tuple
    rtt_s: float
    start_s: float = 0.0
    stop_s: float = math.inf
    initial_rate_pps: float = 10.0
    forward_delays_s: tuple | None = None
    physical_bw_pps: float | None = None
    protocol: str | None = None

    def __post_init__(self):
        check(isinstance(self.name, str) and self.name != "", "flow.name", self.name, "a non-empty string")
        check(self.protocol is None or (isinstance(self.protocol, str) and self.protocol.strip() != ""
                                        and "__" not in self.protocol),
              f"flow[{self.name}].protocol", self.protocol,
              "None or a protocol name (a non-empty string without '__')")
        route = self.route
        if isinstance(route, str):
            route = (route,)
        check(isinstance(route, (tuple, list)) and all(isinstance(r, str) and r for r in route),
              f"flow[{self.name}].route", self.route, "a sequence of link names (non-empty strings)")
        route = tuple(route)
        check(len(route) > 0, f"flow[{self.name}].route", self.route, "at least one link name")
        check(len(set(route)) == len(route), f"flow[{self.name}].route", self.route, "a route that visits each link once")
        object.__setattr__(self, "route", route)
        object.__setattr__(self, "rtt_s", check_finite(f"flow[{self.name}].rtt_s", self.rtt_s, positive=True))
        object.__setattr__(self, "start_s", check_finite(f"flow[{self.name}].start_s", self.start_s, nonneg=True))
        stop = self.stop_s
        try:
            stop = float(stop)
        except (TypeError, ValueError):
            raise InputError(f"flow[{self.name}].stop_s", stop, "a number > start_s or inf") from None
        check(stop > self.start_s, f"flow[{self.name}].stop_s", stop, f"a time after start_s = {self.start_s}")
        object.__setattr__(self, "stop_s", stop)
        object.__setattr__(self, "initial_rate_pps", check_finite(
            f"flow[{self.name}].initial_rate_pps", self.initial_rate_pps, positive=True))
        if self.forward_delays_s is not None:
            fdr = self.forward_delays_s
            check(isinstance(fdr, (tuple, list, np.ndarray)), f"flow[{self.name}].forward_delays_s", fdr,
                  "a sequence of delays in seconds")
            fd = tuple(check_finite(f"flow[{self.name}].forward_delays_s", v) for v in fdr)
            check(len(fd) == len(route), f"flow[{self.name}].forward_delays_s", self.forward_delays_s,
                  f"one delay per link of the route ({len(route)})")
            for v in fd:
                check(0 <= v <= self.rtt_s, f"flow[{self.name}].forward_delays_s", self.forward_delays_s,
                      f"delays in [0, rtt_s = {self.rtt_s}]")
            object.__setattr__(self, "forward_delays_s", fd)
        if self.physical_bw_pps is not None:
            object.__setattr__(self, "physical_bw_pps", check_finite(
                f"flow[{self.name}].physical_bw_pps", self.physical_bw_pps, positive=True))


CROSS_KINDS = ("constant", "schedule", "onoff")


@dataclass(frozen=True)
class CrossTraffic:
    """Unresponsive traffic offered to one link (packets/s).

    kind = ``"constant"``: ``rate_pps`` for all time.
    kind = ``"schedule"``: piecewise constant; ``schedule`` is a sequence of
    ``(time_s, rate_pps)`` pairs, each rate holding from its time to the next
    (zero before the first).  A UDP burst of 40 Mbps from 100 s to 150 s is
    ``((100, R), (150, 0))``.
    kind = ``"onoff"``: web-like traffic from ``n_sources`` exponential on/off
    sources whose mean total is ``rate_pps``.  ``realization="mean"`` offers the
    mean as a constant; ``realization="random"`` draws one seeded sample path,
    held piecewise constant over bins of ``bin_s`` seconds (each bin carries
    the exact mean of the sample path over it).

    Parameters
    ----------
    link : str
        Name of the link the traffic is offered to.
    kind : {"constant", "schedule", "onoff"}, optional
        How the rate varies in time (see above).
    rate_pps : float, optional
        Rate (``"constant"``) or mean total rate (``"onoff"``), packets/s (>= 0).
    schedule : sequence of (float, float), optional
        ``(time_s, rate_pps)`` pairs of a ``"schedule"``: times >= 0 in seconds, strictly increasing,
        rates >= 0 in packets/s.
    n_sources : int, optional
        Number of on/off sources (>= 1).
    mean_on_s, mean_off_s : float, optional
        Mean on and off durations of a source, seconds (> 0).
    realization : {"mean", "random"}, optional
        On/off traffic as its mean or as one seeded sample path.
    seed : int, optional
        Seed of the random sample path.
    bin_s : float, optional
        Width of the bins the random sample path is averaged over, seconds (> 0).

    Raises
    ------
    InputError
        For an unknown ``kind`` or ``realization``, a negative or non-finite rate, a malformed schedule
        (not pairs, no pair, times not increasing or negative, negative rates) or an on/off setting out of
        range.
    """

    link: str
    kind: str = "constant"
    rate_pps: float = 0.0
    schedule: tuple = ()
    n_sources: int = 100
    mean_on_s: float = 1.0
    mean_off_s: float = 1.0
    realization: str = "mean"
    seed: int = 0
    bin_s: float = 0.1

    def __post_init__(self):
        check(self.kind in CROSS_KINDS, "cross_traffic.kind", self.kind, f"one of {CROSS_KINDS}")
        check_finite(f"cross_traffic[{self.link}].rate_pps", self.rate_pps, nonneg=True)
        if self.kind == "schedule":
            field = f"cross_traffic[{self.link}].schedule"
            check(isinstance(self.schedule, (tuple, list)) and all(
                isinstance(e, (tuple, list)) and len(e) == 2 for e in self.schedule), field, self.schedule,
                "a sequence of (time_s, rate_pps) pairs")
            sched = tuple((check_finite(field, t), check_finite(field, r)) for t, r in self.schedule)
            check(len(sched) > 0, f"cross_traffic[{self.link}].schedule", self.schedule, "at least one (time_s, rate_pps) pair")
            times = [t for t, _ in sched]
            check(all(b > a for a, b in zip(times, times[1:])), f"cross_traffic[{self.link}].schedule",
                  self.schedule, "strictly increasing times")
            check(all(r >= 0 for _, r in sched), f"cross_traffic[{self.link}].schedule", self.schedule, "rates >= 0")
            check(all(t >= 0 for t in times), f"cross_traffic[{self.link}].schedule", self.schedule, "times >= 0")
            object.__setattr__(self, "schedule", sched)
        if self.kind == "onoff":
            check(self.realization in ("mean", "random"), f"cross_traffic[{self.link}].realization",
                  self.realization, "'mean' or 'random'")
            check(isinstance(self.n_sources, (int, np.integer)) and not isinstance(self.n_sources, bool)
                  and self.n_sources >= 1, f"cross_traffic[{self.link}].n_sources", self.n_sources, "an integer >= 1")
            check_finite(f"cross_traffic[{self.link}].mean_on_s", self.mean_on_s, positive=True)
            check_finite(f"cross_traffic[{self.link}].mean_off_s", self.mean_off_s, positive=True)
            check_finite(f"cross_traffic[{self.link}].bin_s", self.bin_s, positive=True)

    def piecewise(self, t_end: float) -> tuple[np.ndarray, np.ndarray]:
        """Return the offered rate as change times and rates on ``[0, t_end]``.

        Parameters
        ----------
        t_end : float
            End of the run, seconds; only the random on/off realization depends on it (its sample path
            covers ``ceil(t_end / bin_s) + 1`` bins).

        Returns
        -------
        times_s : numpy.ndarray
            Change times in seconds, increasing, with ``times_s[0] == 0``.
        rates_pps : numpy.ndarray
            Offered rate in packets/s; ``rates_pps[k]`` holds on ``[times_s[k], times_s[k+1])`` and the last
            one from its time on.
        """
        if self.kind == "constant" or (self.kind == "onoff" and self.realization == "mean"):
            return np.array([0.0]), np.array([float(self.rate_pps)])
        if self.kind == "schedule":
            times = [0.0] + [t for t, _ in self.schedule]
            rates = [0.0] + [r for _, r in self.schedule]
            if self.schedule[0][0] == 0.0:
                times, rates = times[1:], rates[1:]
            return np.asarray(times), np.asarray(rates)
        # random on/off sample path
        rng = np.random.default_rng(self.seed)
        n = int(self.n_sources)
        p_on = self.mean_on_s / (self.mean_on_s + self.mean_off_s)
        peak = self.rate_pps / (n * p_on)  # per-source rate while on
        nb = int(math.ceil(t_end / self.bin_s)) + 1
        edges = np.arange(nb + 1) * self.bin_s
        on_time = np.zeros(nb)
        for _ in range(n):
            t = 0.0
            on = rng.random() < p_on  # stationary start
            while t < edges[-1]:
                dur = rng.exponential(self.mean_on_s if on else self.mean_off_s)
                if on:
                    a, b = t, min(t + dur, edges[-1])
                    i0, i1 = int(a // self.bin_s), min(int(b // self.bin_s), nb - 1)
                    if i0 == i1:
                        on_time[i0] += b - a
                    else:
                        on_time[i0] += edges[i0 + 1] - a
                        on_time[i0 + 1:i1] += self.bin_s
                        on_time[i1] += b - edges[i1]
                t += dur
                on = not on
        return edges[:-1], peak * on_time / self.bin_s


@dataclass(frozen=True)
class Network:
    """Links, flows and cross traffic.  Validates itself on construction.

    ``packet_bytes`` is carried for converting at the edges (Mbps in plots and
    scenario files); nothing inside depends on it.

    Parameters
    ----------
    links : tuple of Link
        At least one link, names unique.
    flows : tuple of Flow
        At least one flow, names unique, each route naming known links.
    cross_traffic : tuple of CrossTraffic, optional
        Unresponsive traffic, each on a known link.
    delay_split : {"feedback", "propagation"}, optional
        Where a flow's round trip sits relative to each link (see the module docstring).
    packet_bytes : float, optional
        Packet size in bytes (> 0), for conversions to Mbps at the edges.
    name : str, optional
        Name shown in summaries and plots.

    Raises
    ------
    InputError
        For an empty, duplicated or mistyped link or flow list, a route or cross traffic naming an unknown
        link, an unknown ``delay_split`` or a bad ``packet_bytes``.
    """

    links: tuple
    flows: tuple
    cross_traffic: tuple = ()
    delay_split: str = "feedback"
    packet_bytes: float = 1000.0
    name: str = "network"

    def __post_init__(self):
        for fname in ("links", "flows", "cross_traffic"):
            v = getattr(self, fname)
            check(isinstance(v, (tuple, list)), f"network.{fname}", v, "a tuple or list")
        links, flows, ct = tuple(self.links), tuple(self.flows), tuple(self.cross_traffic)
        check(len(links) > 0, "network.links", links, "at least one link")
        check(len(flows) > 0, "network.flows", flows, "at least one flow")
        for obj in links:
            check(isinstance(obj, Link), "network.links", obj, "Link objects")
        for obj in flows:
            check(isinstance(obj, Flow), "network.flows", obj, "Flow objects")
        names = [lk.name for lk in links]
        dup = sorted(n for n, c in Counter(names).items() if c > 1)
        check(not dup, "network.links", dup, "unique link names")
        fdup = sorted(n for n, c in Counter(f.name for f in flows).items() if c > 1)
        check(not fdup, "network.flows", fdup, "unique flow names")
        known = set(names)
        for f in flows:
            for lname in f.route:
                if lname not in known:
                    shown = ", ".join(sorted(known)[:10]) + ("..." if len(known) > 10 else "")
                    raise InputError(f"flow[{f.name}].route", lname, f"a known link name ({shown})")
        for c in ct:
            check(isinstance(c, CrossTraffic), "network.cross_traffic", c, "CrossTraffic objects")
            check(c.link in known, "cross_traffic.link", c.link, "a known link name")
        check(self.delay_split in DELAY_SPLITS, "network.delay_split", self.delay_split, f"one of {DELAY_SPLITS}")
        check_finite("network.packet_bytes", self.packet_bytes, positive=True)
        object.__setattr__(self, "links", links)
        object.__setattr__(self, "flows", flows)
        object.__setattr__(self, "cross_traffic", ct)
        object.__setattr__(self, "_arrays", _NetworkArrays.build(self))

    # -- array views -----------------------------------------------------
    @property
    def arrays(self) -> "_NetworkArrays":
        """Index arrays of the network (routing matrix, delays, ...)."""
        return self._arrays  # type: ignore[attr-defined]

    @property
    def n_links(self) -> int:
        return len(self.links)

    @property
    def n_flows(self) -> int:
        return len(self.flows)

    def link_index(self, name: str) -> int:
        """Return the position of a link in :attr:`links`.

        Parameters
        ----------
        name : str
            The link's name.

        Returns
        -------
        int
            Its index (the row of the routing matrix).

        Raises
        ------
        KeyError
            For an unknown link name.
        """
        return self.arrays.link_index[name]

    def flow_index(self, name: str) -> int:
        """Return the position of a flow in :attr:`flows`.

        Parameters
        ----------
        name : str
            The flow's name.

        Returns
        -------
        int
            Its index (the column of the routing matrix, the state slot of its rate).

        Raises
        ------
        KeyError
            For an unknown flow name.
        """
        return self.arrays.flow_index[name]

    def replace(self, **changes) -> "Network":
        """Return a copy with some fields changed, validated again.

        Parameters
        ----------
        **changes
            New values of :class:`Network` fields (``links``, ``flows``, ``cross_traffic``, ...).

        Returns
        -------
        Network
            The new network.

        Raises
        ------
        InputError
            If the changed network is not valid; TypeError for an unknown field.
        """
        return dataclasses.replace(self, **changes)

    def scaled(self, rtt_scale: float = 1.0, capacity_scale: float = 1.0) -> "Network":
        """Return this network with every delay multiplied by ``rtt_scale`` and every capacity by ``capacity_scale``.

        Delays are the flows' RTTs and explicit forward delays and the links' one-way delays; buffers,
        rates and cross traffic are unchanged.

        Parameters
        ----------
        rtt_scale : float, optional
            Factor on all delays (> 0, dimensionless).
        capacity_scale : float, optional
            Factor on all link capacities (> 0, dimensionless).

        Returns
        -------
        Network
            The scaled network (``self`` when both factors are 1).

        Raises
        ------
        InputError
            For a factor that is not a finite number > 0.
        """
        check_finite("rtt_scale", rtt_scale, positive=True)
        check_finite("capacity_scale", capacity_scale, positive=True)
        if rtt_scale == 1.0 and capacity_scale == 1.0:
            return self
        links = tuple(dataclasses.replace(lk, delay_s=lk.delay_s * rtt_scale,
                                          capacity_pps=lk.capacity_pps * capacity_scale) for lk in self.links)
        flows = tuple(dataclasses.replace(
            f, rtt_s=f.rtt_s * rtt_scale,
            forward_delays_s=None if f.forward_delays_s is None else tuple(d * rtt_scale for d in f.forward_delays_s))
            for f in self.flows)
        return self.replace(links=links, flows=flows)

    def summary(self) -> str:
        """Describe the network in one line.

        Returns
        -------
        str
            ``"<name>: <n> flows, <m> links"``.
        """
        return f"{self.name}: {self.n_flows} flows, {self.n_links} links"


@dataclass
class _NetworkArrays:
    """Vectorised description used by the solvers (built once per Network)."""

    link_index: dict
    flow_index: dict
    capacity_pps: np.ndarray
    buffer_pkts: np.ndarray
    target_queue_pkts: np.ndarray  # nan where the link does not set one
    rtt_s: np.ndarray
    start_s: np.ndarray
    stop_s: np.ndarray
    initial_rate_pps: np.ndarray
    physical_bw_pps: np.ndarray
    # (link, flow) pairs sorted by flow, then by position on the route
    pair_link: np.ndarray
    pair_flow: np.ndarray
    pair_fwd_s: np.ndarray
    pair_bwd_s: np.ndarray
    flow_pair_start: np.ndarray  # CSR offsets into the pair arrays, length n_flows+1
    _routing: object = field(default=None, repr=False)

    @property
    def routing(self):
        """``(n_links, n_flows)`` SciPy CSR matrix, 1 where a flow crosses a link (built on first use, so
        that a run that needs only the pair arrays never imports ``scipy.sparse``)."""
        if self._routing is None:
            import scipy.sparse as sp
            L, P = self.capacity_pps.size, self.flow_pair_start.size - 1
            self._routing = sp.csr_matrix((np.ones(self.pair_link.size), (self.pair_link, self.pair_flow)),
                                          shape=(L, P))
        return self._routing

    def flows_by_link(self):
        """The routing matrix's CSR structure ``(indptr, flow indices)`` from the pair arrays: the flows of
        link ``l`` in increasing order, as ``routing.indptr`` / ``routing.indices``."""
        L = self.capacity_pps.size
        order = np.argsort(self.pair_link, kind="stable")  # pairs are sorted by flow: flows stay ascending
        indptr = np.zeros(L + 1, dtype=np.int64)
        np.cumsum(np.bincount(self.pair_link, minlength=L), out=indptr[1:])
        return indptr, self.pair_flow[order].astype(np.int64)

    def flow_sum_over_route(self, v_link):
        """``routing.T @ v``: per flow, the sum of a per-link quantity over its route (``v_link`` of shape
        ``(..., n_links)``)."""
        v = np.asarray(v_link, dtype=float)
        # np.take: the same gather as v[..., pair_link], ~8x faster on a (2001, 1) -> (2001, 1000) trajectory
        g = np.take(v, self.pair_link, axis=-1)
        fps = self.flow_pair_start
        if fps.size - 1 == self.pair_link.size and np.array_equal(fps, np.arange(fps.size)):
            return g  # one link per route: reduceat over one-element segments returns them unchanged
        return np.add.reduceat(g, fps[:-1], axis=-1)

    @classmethod
    def build(cls, net: Network) -> "_NetworkArrays":
        link_index = {lk.name: i for i, lk in enumerate(net.links)}
        flow_index = {f.name: i for i, f in enumerate(net.flows)}
        cap = np.array([lk.capacity_pps for lk in net.links])
        buf = np.array([lk.buffer_pkts for lk in net.links])
        tq = np.array([np.nan if lk.target_queue_pkts is None else lk.target_queue_pkts for lk in net.links])
        pl, pf, fwd, bwd, starts = [], [], [], [], [0]
        kphys = np.empty(len(net.flows))
        for j, f in enumerate(net.flows):
            idx = [link_index[n] for n in f.route]
            if f.forward_delays_s is not None:
                fd = list(f.forward_delays_s)
            elif net.delay_split == "feedback":
                fd = [0.0] * len(idx)
            else:
                acc, fd = 0.0, []
                for i in idx:
                    fd.append(min(acc, f.rtt_s))
                    acc += net.links[i].delay_s
            for i, d in zip(idx, fd):
                pl.append(i)
                pf.append(j)
                fwd.append(d)
                bwd.append(f.rtt_s - d)
            starts.append(len(pl))
            kphys[j] = f.physical_bw_pps if f.physical_bw_pps is not None else cap[idx].min()
        pl, pf = np.array(pl, dtype=np.int64), np.array(pf, dtype=np.int64)
        return cls(
            link_index=link_index, flow_index=flow_index, capacity_pps=cap, buffer_pkts=buf,
            target_queue_pkts=tq,
            rtt_s=np.array([f.rtt_s for f in net.flows]),
            start_s=np.array([f.start_s for f in net.flows]),
            stop_s=np.array([f.stop_s for f in net.flows]),
            initial_rate_pps=np.array([f.initial_rate_pps for f in net.flows]),
            physical_bw_pps=kphys,
            pair_link=pl, pair_flow=pf, pair_fwd_s=np.array(fwd), pair_bwd_s=np.array(bwd),
            flow_pair_start=np.array(starts, dtype=np.int64),
        )


# ---------------------------------------------------------------------------
# builders
# ---------------------------------------------------------------------------

def _broadcast(name, value, n):
    if np.ndim(value) == 0:
        return [value] * n
    value = list(value)
    check(len(value) == n, name, value, f"a scalar or {n} values")
    return value


def dumbbell(capacity_pps: float, rtts_s: Sequence[float], *, starts_s=0.0, stops_s=math.inf,
             initial_rate_pps=10.0, buffer_pkts=math.inf, target_queue_pkts=None,
             cross_traffic=(), delay_split="feedback", packet_bytes=1000.0,
             physical_bw_pps=None, name="dumbbell", protocols=None) -> Network:
    """Build one bottleneck link ``"bottleneck"`` shared by ``len(rtts_s)`` flows named ``f1, f2, ...``.

    Parameters
    ----------
    capacity_pps : float
        Bottleneck capacity, packets/s (> 0).
    rtts_s : sequence of float
        Round-trip propagation delay of each flow, seconds (> 0); one flow per entry.
    starts_s, stops_s : float or sequence of float, optional
        Start and stop time of each flow, seconds (scalar for all); ``stops_s`` may be ``inf``.
    initial_rate_pps : float or sequence of float, optional
        Rate of each flow when it starts, packets/s (> 0).
    buffer_pkts : float, optional
        Bottleneck buffer, packets (> 0, ``inf`` for none).
    target_queue_pkts : float or None, optional
        Target queue of the bottleneck, packets (>= 0); None uses the model parameter.
    cross_traffic : sequence of CrossTraffic, optional
        Unresponsive traffic on ``"bottleneck"``.
    delay_split : {"feedback", "propagation"}, optional
        Delay placement (see the module docstring; with a zero link delay both agree).
    packet_bytes : float, optional
        Packet size in bytes, for conversions to Mbps at the edges.
    physical_bw_pps : float or sequence of float or None, optional
        Physical bandwidth each flow believes it has (TCP Symbiosis), packets/s; None: the capacity.
    name : str, optional
        Network name.
    protocols : str or sequence of str or None, optional
        Each flow's :attr:`Flow.protocol`; None: the simulation's model.

    Returns
    -------
    Network
        The dumbbell network.

    Raises
    ------
    InputError
        For no RTT, a per-flow argument whose length is not ``len(rtts_s)``, or any value the
        :class:`Link`, :class:`Flow` or :class:`Network` checks refuse.
    """
    check(not isinstance(rtts_s, (str, bytes)), "rtts_s", rtts_s, "a sequence of RTTs in seconds")
    rtts = [check_finite(f"rtts_s[{i}]", v) for i, v in enumerate(np.atleast_1d(rtts_s))]  # ranges: Flow
    n = len(rtts)
    check(n > 0, "rtts_s", rtts_s, "at least one RTT")
    st = _broadcast("starts_s", starts_s, n)
    sp_ = _broadcast("stops_s", stops_s, n)
    x0 = _broadcast("initial_rate_pps", initial_rate_pps, n)
    kp = _broadcast("physical_bw_pps", physical_bw_pps, n)
    pr = [protocols] * n if protocols is None or isinstance(protocols, str) else _broadcast("protocols", protocols, n)
    link = Link("bottleneck", capacity_pps, buffer_pkts=buffer_pkts, target_queue_pkts=target_queue_pkts)
    flows = tuple(Flow(f"f{i + 1}", ("bottleneck",), float(rtts[i]), start_s=st[i], stop_s=sp_[i],
                       initial_rate_pps=x0[i], physical_bw_pps=kp[i], protocol=pr[i]) for i in range(n))
    return Network((link,), flows, tuple(cross_traffic), delay_split=delay_split,
                   packet_bytes=packet_bytes, name=name)


def parking_lot(capacities_pps: Sequence[float], link_delay_s: float, *, access_rtt_s=0.0,
                initial_rate_pps=10.0, buffer_pkts=math.inf, delay_split="feedback",
                packet_bytes=1000.0, name="parking-lot") -> Network:
    """Build the papers' parking lot: links ``l1..lK`` in a row.

    Flow ``f1`` crosses every link; flow ``f{k+1}`` crosses link ``k`` only.
    A flow's RTT is twice the one-way delays of its links plus ``access_rtt_s``
    (AECP/CLTCP: 20 ms per link one way).

    Parameters
    ----------
    capacities_pps : sequence of float
        Capacity of each link, packets/s (> 0); ``K = len(capacities_pps) >= 1``.
    link_delay_s : float
        One-way propagation delay of every link, seconds (>= 0).
    access_rtt_s : float, optional
        Round-trip delay added to every flow outside the row of links, seconds.
    initial_rate_pps : float, optional
        Rate of every flow at its start, packets/s (> 0).
    buffer_pkts : float, optional
        Buffer of every link, packets (> 0, ``inf`` for none).
    delay_split : {"feedback", "propagation"}, optional
        Delay placement (see the module docstring).
    packet_bytes : float, optional
        Packet size in bytes, for conversions to Mbps at the edges.
    name : str, optional
        Network name.

    Returns
    -------
    Network
        ``K`` links and ``K + 1`` flows.

    Raises
    ------
    InputError
        For no capacity, or any value the :class:`Link`, :class:`Flow` or :class:`Network` checks refuse
        (a resulting RTT that is not > 0, for one).
    """
    caps = list(capacities_pps)
    check(len(caps) >= 1, "capacities_pps", capacities_pps, "at least one capacity")
    links = tuple(Link(f"l{k + 1}", c, delay_s=link_delay_s, buffer_pkts=buffer_pkts) for k, c in enumerate(caps))
    long_rtt = 2 * link_delay_s * len(caps) + access_rtt_s
    flows = [Flow("f1", tuple(lk.name for lk in links), long_rtt, initial_rate_pps=initial_rate_pps)]
    for k, lk in enumerate(links):
        flows.append(Flow(f"f{k + 2}", (lk.name,), 2 * link_delay_s + access_rtt_s, initial_rate_pps=initial_rate_pps))
    return Network(links, tuple(flows), delay_split=delay_split, packet_bytes=packet_bytes, name=name)


def random_network(n_flows: int, n_links: int, *, max_hops=5, capacity_pps=(1e4, 1e5),
                   rtt_s=(0.01, 0.5), initial_rate_pps=10.0, seed=0, name=None) -> Network:
    """Build random routes of 1..``max_hops`` distinct links (for scale tests).

    Capacities and RTTs are uniform in the given ranges; seeded.  Links are named ``l0, l1, ...``,
    flows ``f0, f1, ...``; links have no delay and no buffer limit.

    Parameters
    ----------
    n_flows, n_links : int
        Number of flows and of links, each in ``[1, ecocc.limits.MAX_ELEMENTS]``.
    max_hops : int, optional
        Longest route, links (in ``[1, n_links]``).
    capacity_pps : tuple of float, optional
        ``(low, high)`` range of the link capacities, packets/s.
    rtt_s : tuple of float, optional
        ``(low, high)`` range of the flows' RTTs, seconds.
    initial_rate_pps : float, optional
        Rate of every flow at its start, packets/s.
    seed : int, optional
        Seed of the random generator.
    name : str or None, optional
        Network name; None: ``"random-<n_flows>x<n_links>"``.

    Returns
    -------
    Network
        The random network.

    Raises
    ------
    InputError
        For counts out of range, or drawn values the :class:`Link` or :class:`Flow` checks refuse.
    """
    from .limits import MAX_ELEMENTS

    def _int(field, v, lo, hi):
        check(isinstance(v, (int, np.integer)) and not isinstance(v, bool) and lo <= v <= hi, field, v,
              f"an integer in [{lo}, {hi}]" + (" (ecocc.limits.MAX_ELEMENTS)" if hi == MAX_ELEMENTS else ""))
    _int("n_flows", n_flows, 1, MAX_ELEMENTS)
    _int("n_links", n_links, 1, MAX_ELEMENTS)
    _int("max_hops", max_hops, 1, n_links)
    rng = np.random.default_rng(seed)
    caps = rng.uniform(*capacity_pps, size=n_links)
    links = tuple(Link(f"l{i}", float(c)) for i, c in enumerate(caps))
    hops = rng.integers(1, int(max_hops) + 1, size=n_flows)
    rtts = rng.uniform(*rtt_s, size=n_flows)
    flows = []
    for j in range(n_flows):
        route = rng.choice(n_links, size=hops[j], replace=False)
        flows.append(Flow(f"f{j}", tuple(f"l{i}" for i in route), float(rtts[j]), initial_rate_pps=initial_rate_pps))
    return Network(links, tuple(flows), name=name or f"random-{n_flows}x{n_links}")
