"""Discrete-time (sampled) implementations of the controllers and their stability.

The papers derive their protocols from differential equations and then
implement a *sampled* version.  This module simulates those sampled laws
event by event on a single bottleneck, with the fluid queue integrated
exactly between events, and derives the stability of each map by
linearization (spectral radius of the one-period matrix).

1. CLTCP / AECP controller, eq. (44)-(49) of 001_ceee9933a8b24a34.txt and
   Section 5 of 004_3a45f1aa9a94cd50.txt::

       x(k+1) = x(k)^(1 - alpha T1) r(k - tau/T1)^(alpha T1)                (46), (48)
       r(k+1) = r(k) exp(beta T2 (1 - (sum x(k) + (q(k) - q0)/T) / C))        (46), (49)

   Each sender updates once per its own RTT (T1 = tau, eq. 47) with the rate
   factor carried back by its ACKs: the router's value when the ACKed
   packet crossed it, i.e. one RTT old (with T1 = tau this is eq. (48)'s
   ``r(k-1)``, our reading).  The router updates every T2 (0.1 s in the
   papers) from the mean arrival rate over its last interval and the queue at
   the sampling instant.  The printed (45)-(46) divide ``q - q0`` by ``C``;
   eq. (47)/(49) divide by 2 = T (and so does the continuous model, eq. 6):
   we follow ``T``.

2. PE-TCP control law, eq. (6)-(11) of 000_76a89ab68a61e51d.txt, driven by
   what a sender measures: one update per ACK round; the sample period is
   the measured RTT ``tau = tau_min + q/B``; ``tau_l`` the previous RTT;
   ``tau_Delta = 1/B`` (packet pair, exact in a fluid model); ``X`` from
   eq. (9); the new rate from eq. (11).

3. TCP Symbiosis window update, eq. (10) of 002_2fcfdbe8ba8bf605.txt: once per
   RTT ``w <- eq. (10)`` with ``w(0)`` the current window and ``t = tau``,
   and the available bandwidth ``A_i = K - sum_{j != i} w_j/tau_j``
   (eq. 17) measured one RTT earlier (``lag_rtts``), clipped to ``[0, K]``
   (a measured available bandwidth is never negative nor above the physical
   one).

Stability functions return :class:`DiscreteStability` records (symbolic
condition as text and SymPy expression, spectral radius, numeric boundary).

Units: seconds, packets, packets/s throughout.
"""
from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field

import numpy as np

from .dde.adaptive import Status
from .errors import InputError, check, check_finite, check_int
from .network import Network

__all__ = [
    "DiscreteResult", "DiscreteStability",
    "simulate_aecp_discrete", "simulate_petcp_discrete", "simulate_symbiosis_discrete",
    "symbiosis_window_update",
    "aecp_source_stability", "aecp_discrete_matrix", "aecp_discrete_charpoly", "aecp_discrete_stability",
    "aecp_critical_alpha", "petcp_discrete_matrix", "petcp_discrete_stability",
    "symbiosis_discrete_stability", "symbiosis_critical_eps", "logistic_discrete_stability",
    "log_deviation_envelope",
]

_TIME_TOL_S = 1e-9  # event times closer than this are the same instant (grid arithmetic round-off)


# ---------------------------------------------------------------------------
# result
# ---------------------------------------------------------------------------

@dataclass
class DiscreteResult:
    """Output of an event-driven discrete-controller run.

    Attributes
    ----------
    scenario : str
        Human-readable scenario name (used as the plot title).
    model : str
        ``"aecp-discrete"``, ``"petcp-discrete"`` or ``"symbiosis-discrete"``.
    t_s : ndarray, shape (n,)
        Sample times (s): every event instant.
    rate_pps : ndarray, shape (n, n_flows)
        Sending rate of each flow (packets/s) just after the events at
        ``t_s``; NaN while a flow is inactive.
    rate_factor_pps : ndarray or None, shape (n,)
        Router rate factor r (packets/s), AECP only.
    queue_pkts : ndarray or None, shape (n,)
        Bottleneck queue (packets) at ``t_s``.
    window_pkts : ndarray or None, shape (n, n_flows)
        Congestion windows (packets), TCP Symbiosis only.
    status, message :
        :class:`ecocc.dde.adaptive.Status` and an explanation.
    flow_names : list of str
    capacity_pps : float
    mean_queue_pkts : float
        Exact time average of the fluid queue over ``[t_avg_from_s, t_end]``
        (NaN where there is no queue).
    t_avg_from_s : float
    lost_pkts : float
        Fluid dropped at a full buffer.
    """

    scenario: str
    model: str
    t_s: np.ndarray
    rate_pps: np.ndarray
    rate_factor_pps: np.ndarray | None
    queue_pkts: np.ndarray | None
    status: Status
    message: str
    flow_names: list
    capacity_pps: float
    mean_queue_pkts: float = math.nan
    t_avg_from_s: float = 0.0
    lost_pkts: float = 0.0
    window_pkts: np.ndarray | None = None
    n_updates: int = 0

    @property
    def ok(self) -> bool:
        return self.status == Status.SUCCESS

    def plot(self, fig=None):
        """Plot rates (packets/s), rate factor, queue (packets) or windows against time (s).

        Parameters
        ----------
        fig : matplotlib.figure.Figure or None, optional
            Figure to draw into (its subplots are added); None creates one.

        Returns
        -------
        matplotlib.figure.Figure
            The figure: one panel of rates (with the rate factor and the capacity), then windows and/or
            the queue where the run has them; the title names the status when it is not ``success``.
        """
        import matplotlib.pyplot as plt

        panels = 1 + (self.queue_pkts is not None) + (self.window_pkts is not None)
        if fig is None:
            fig = plt.figure(figsize=(10, 3 * panels + 1), layout="constrained")
        axs = np.atleast_1d(fig.subplots(panels, 1, sharex=True))
        ax = axs[0]
        for j, nm in enumerate(self.flow_names):
            ax.step(self.t_s, self.rate_pps[:, j], where="post", lw=1.1, label=f"rate {nm}")
        if self.rate_factor_pps is not None:
            ax.step(self.t_s, self.rate_factor_pps, where="post", color="k", ls="--", lw=1.1,
                    label="router rate factor r")
        ax.axhline(self.capacity_pps, color="grey", ls=":", lw=1, label="capacity C")
        ax.set_ylabel("rate (packets/s)")
        ax.legend(loc="upper right", fontsize="small", ncol=2)
        i = 1
        if self.window_pkts is not None:
            for j, nm in enumerate(self.flow_names):
                axs[i].step(self.t_s, self.window_pkts[:, j], where="post", lw=1.1, label=f"window {nm}")
            axs[i].set_ylabel("window (packets)")
            axs[i].legend(loc="upper right", fontsize="small", ncol=2)
            i += 1
        if self.queue_pkts is not None:
            axs[i].plot(self.t_s, self.queue_pkts, lw=1.1, label="bottleneck queue")
            if np.isfinite(self.mean_queue_pkts):
                axs[i].axhline(self.mean_queue_pkts, color="r", ls="--", lw=1,
                               label=f"time mean {self.mean_queue_pkts:.3g} packets")
            axs[i].set_ylabel("queue (packets)")
            axs[i].legend(loc="upper right", fontsize="small")
        axs[-1].set_xlabel("time (s)")
        for a in axs:
            a.grid(alpha=0.3)
        status = "" if self.ok else f"  [status: {self.status.value}]"
        fig.suptitle(f"{self.scenario} ({self.model}){status}")
        return fig


# ---------------------------------------------------------------------------
# exact fluid queue between events
# ---------------------------------------------------------------------------

class _FluidQueue:
    """q' = y - C on [0, buffer], y constant between events; integrated exactly."""

    def __init__(self, capacity_pps, buffer_pkts, q0, t_avg_from):
        self.C = float(capacity_pps)
        self.buf = float(buffer_pkts)
        self.q = float(min(q0, self.buf))
        self.arrived = 0.0          # offered arrivals since the last router sample (packets)
        self.lost = 0.0
        self.t = 0.0
        self.t_avg_from = t_avg_from
        self.q_integral = 0.0       # integral of q over [t_avg_from, t]

    def _segment(self, q, h, d):
        """Queue after h seconds of slope d from q, its integral and the lost fluid."""
        if d > 0:
            h_full = (self.buf - q) / d if math.isfinite(self.buf) else math.inf
            if h <= h_full:
                return q + d * h, q * h + 0.5 * d * h * h, 0.0
            return self.buf, q * h_full + 0.5 * d * h_full ** 2 + self.buf * (h - h_full), d * (h - h_full)
        if d < 0:
            h_empty = q / (-d)
            if h <= h_empty:
                return max(q + d * h, 0.0), q * h + 0.5 * d * h * h, 0.0
            return 0.0, 0.5 * q * h_empty, 0.0
        return q, q * h, 0.0

    def advance(self, t_new, y):
        h = t_new - self.t
        if h <= 0:
            return
        d = y - self.C
        self.arrived += y * h
        if self.t >= self.t_avg_from:
            q1, integ, lost = self._segment(self.q, h, d)
            self.q_integral += integ
        elif t_new > self.t_avg_from:
            h0 = self.t_avg_from - self.t
            qm, _, l0 = self._segment(self.q, h0, d)
            q1, integ, l1 = self._segment(qm, h - h0, d)
            self.q_integral += integ
            lost = l0 + l1
        else:
            q1, _, lost = self._segment(self.q, h, d)
        self.q, self.lost, self.t = q1, self.lost + lost, t_new


def _check_dumbbell(net: Network, what: str):
    check(isinstance(net, Network), f"{what}.net", type(net).__name__, "an ecocc.network.Network")
    check(net.n_links == 1, f"{what}.net", net.summary(),
          "a single-bottleneck network (ecocc.dumbbell); the discrete simulators model one router")
    for c in net.cross_traffic:
        check(c.kind in ("constant", "schedule") or (c.kind == "onoff" and c.realization == "mean"),
              f"{what}.cross_traffic", c.kind, "constant, schedule or mean on/off cross traffic")


def _cross_events(net, t_end):
    """(time, rate) change points of the total cross traffic on the bottleneck."""
    pts = {0.0}
    per = []
    for c in net.cross_traffic:
        times, rates = c.piecewise(t_end)
        per.append((times, rates))
        pts.update(float(t) for t in times if t <= t_end)
    out = []
    for t in sorted(pts):
        tot = 0.0
        for times, rates in per:
            k = np.searchsorted(times, t, side="right") - 1
            tot += rates[k] if k >= 0 else 0.0
        out.append((t, tot))
    return out


def _t_end(t_end_s):
    return check_finite("t_end_s", t_end_s, positive=True)


def _avg_from(t_avg_from_s, t_end):
    if t_avg_from_s is None:
        return 0.5 * t_end
    v = check_finite("t_avg_from_s", t_avg_from_s, nonneg=True)
    check(v < t_end, "t_avg_from_s", v, f"a time before t_end_s = {t_end}")
    return v


# ---------------------------------------------------------------------------
# 1. CLTCP / AECP
# ---------------------------------------------------------------------------

class _Events:
    """Time-ordered events (ties in insertion order) up to ``t_end``; seeded with
    the network's flow starts/stops and, optionally, its cross-traffic switches."""

    def __init__(self, net, t_end, with_cross=True, periodic=None):
        self.t_end, self._heap, self._seq = t_end, [], 0
        if with_cross:
            for t, c in _cross_events(net, t_end):
                self.push(t, "cross", -1, c)
        if periodic is not None:  # (kind, period_s): ticks at period, 2 period, ...
            kind, period = periodic
            m = 1
            while m * period <= t_end + _TIME_TOL_S:
                self.push(m * period, kind, -1, float(m))
                m += 1
        a = net.arrays
        for j in range(net.n_flows):
            self.push(a.start_s[j], "start", j)
            if math.isfinite(a.stop_s[j]):
                self.push(a.stop_s[j], "stop", j)

    def push(self, t, kind, j=-1, payload=0.0):
        if t <= self.t_end + _TIME_TOL_S:
            heapq.heappush(self._heap, (t, self._seq, kind, j, payload))
            self._seq += 1

    def pop(self):
        t, _, kind, j, payload = heapq.heappop(self._heap)
        return t, kind, j, payload

    def next_time(self):
        return self._heap[0][0]

    def __bool__(self):
        return bool(self._heap)


def simulate_aecp_discrete(net: Network, t_end_s: float, *, alpha_per_s: float = 2.0, beta_per_s: float = 1.0,
                           T_s: float = 2.0, q0_pkts: float = 100.0, router_period_s: float = 0.1,
                           source_period_s=None, r0_pps=None, initial_queue_pkts: float = 0.0,
                           t_avg_from_s=None, scenario=None) -> DiscreteResult:
    """Event-driven run of the sampled CLTCP/AECP controller, eq. (46)-(49) of 001/004.

    Parameters
    ----------
    net : Network
        One bottleneck (``ecocc.dumbbell``); flows have their own RTTs,
        start/stop times and initial rates.  Cross traffic must be constant,
        a schedule or mean on/off.
    t_end_s : float
        Simulated time (s, > 0).
    alpha_per_s, beta_per_s, T_s, q0_pkts : float
        Gains (1/s) and the queue time constant (s) and target queue (packets) of
        eq. (6)/(47); defaults alpha = 2, beta = 1, T = 2 s, q0 = 100 packets
        (Section V of 001).  ``beta_per_s = 0`` freezes the router at ``r0_pps``
        (the source update alone).
    router_period_s : float
        Router sampling period T2, seconds (0.1 s in eq. 47).
    source_period_s : float or None
        Sender sampling period T1, seconds; ``None`` is the papers' T1 = tau
        (each flow's own RTT, eq. 47).
    r0_pps : float or None
        Initial rate factor (packets/s); ``None`` means C / (number of flows).
    initial_queue_pkts : float
        Queue at t = 0 (packets).
    t_avg_from_s : float or None
        Start of the queue time-average, seconds (default: half of ``t_end_s``).
    scenario : str or None
        Name for the result and plot title; None builds one from the network and gains.

    Returns
    -------
    DiscreteResult
        Rates, rate factor and queue at every event instant, the exact mean queue over
        ``[t_avg_from_s, t_end_s]``, the lost fluid and the number of source updates; status
        ``failed`` on overflow (the run stops there).

    Raises
    ------
    InputError
        For a network that is not one bottleneck or has random cross traffic, or any gain, period or
        time out of range (``t_avg_from_s`` must be before ``t_end_s``).

    Notes
    -----
    Sender ``i`` updates at ``start_i + k T1``:
    ``ln x <- (1 - alpha T1) ln x + alpha T1 ln r_fb`` with ``r_fb`` the
    router value at ``t - d_b`` (``d_b`` the backward delay of the flow:
    the whole RTT with the papers' ``delay_split="feedback"``), i.e. the
    value stamped on the packet being acknowledged -- eq. (48)'s
    ``r(k-1)`` when T1 = tau.  The router at ``m T2`` uses the mean offered
    arrival rate over ``[(m-1) T2, m T2]`` and ``q(m T2)`` in eq. (49) with
    ``(q - q0)/T`` (eq. 47 divides by 2 = T; the ``/C`` of eq. 45-46 is a
    misprint).  Rates are held constant between updates; a flow's packets
    reach the router after its forward delay.
    """
    _check_dumbbell(net, "simulate_aecp_discrete")
    t_end = _t_end(t_end_s)
    alpha = check_finite("alpha_per_s", alpha_per_s, positive=True)
    beta = check_finite("beta_per_s", beta_per_s, nonneg=True)
    T = check_finite("T_s", T_s, positive=True)
    q0 = check_finite("q0_pkts", q0_pkts, nonneg=True)
    T2 = check_finite("router_period_s", router_period_s, positive=True)
    if source_period_s is not None:
        check_finite("source_period_s", source_period_s, positive=True)
    qi = check_finite("initial_queue_pkts", initial_queue_pkts, nonneg=True)
    t_avg = _avg_from(t_avg_from_s, t_end)
    a = net.arrays
    n = net.n_flows
    C = float(a.capacity_pps[0])
    r0 = C / n if r0_pps is None else check_finite("r0_pps", r0_pps, positive=True)
    T1 = a.rtt_s.copy() if source_period_s is None else np.full(n, float(source_period_s))
    fwd = a.pair_fwd_s.copy()          # one pair per flow on a dumbbell, in flow order
    bwd = a.pair_bwd_s.copy()
    queue = _FluidQueue(C, a.buffer_pkts[0], qi, t_avg)

    lnx = np.log(a.initial_rate_pps)
    src_rate = np.zeros(n)                 # what each source is sending now
    arr_rate = np.zeros(n)                 # what arrives at the router now (after the forward delay)
    r_times, r_vals = [0.0], [math.log(r0)]  # router log-rate-factor history (right-continuous)
    cross_rate = 0.0
    ev = _Events(net, t_end, periodic=("router", T2))
    push = ev.push

    def r_at(t):
        k = np.searchsorted(r_times, t + _TIME_TOL_S, side="right") - 1
        return r_vals[max(k, 0)]

    rec_t, rec_x, rec_r, rec_q = [], [], [], []
    active = np.zeros(n, dtype=bool)
    n_upd = 0

    def record(t):
        rec_t.append(t)
        rec_x.append(np.where(active, np.exp(lnx), np.nan))
        rec_r.append(math.exp(r_vals[-1]))
        rec_q.append(queue.q)

    record(0.0)
    while ev:
        t, kind, j, payload = ev.pop()
        queue.advance(t, arr_rate.sum() + cross_rate)
        if kind == "cross":
            cross_rate = payload
        elif kind == "arrive":
            arr_rate[j] = payload
        elif kind == "start":
            active[j] = True
            src_rate[j] = math.exp(lnx[j])
            push(t + fwd[j], "arrive", j, src_rate[j])
            push(t + T1[j], "update", j)
        elif kind == "stop":
            active[j] = False
            src_rate[j] = 0.0
            push(t + fwd[j], "arrive", j, 0.0)
        elif kind == "update":
            if not active[j] or t >= a.stop_s[j] - _TIME_TOL_S:
                continue
            g = alpha * T1[j]
            lnx[j] = (1.0 - g) * lnx[j] + g * r_at(t - bwd[j])     # eq. (46)/(48) in logs
            src_rate[j] = math.exp(lnx[j]) if lnx[j] < 700 else math.inf
            n_upd += 1
            push(t + fwd[j], "arrive", j, src_rate[j])
            push(t + T1[j], "update", j)
        elif kind == "router":
            mean_in = queue.arrived / T2
            queue.arrived = 0.0
            lr = r_vals[-1] + beta * T2 * (1.0 - (mean_in + (queue.q - q0) / T) / C)   # eq. (49), /T
            r_times.append(t)
            r_vals.append(lr)
        if not ev or ev.next_time() > t + _TIME_TOL_S:
            record(t)
        if not np.all(np.isfinite(lnx)) or not math.isfinite(queue.q):
            break
    x = np.array(rec_x)
    st, msg = Status.SUCCESS, "ok"
    if not (np.all(np.isfinite(np.array(r_vals))) and np.all(np.isfinite(lnx)) and math.isfinite(queue.q)):
        st, msg = Status.FAILED, f"overflow at t = {rec_t[-1]:.4g} s"
    span = max(queue.t - t_avg, 0.0)
    return DiscreteResult(
        scenario=scenario or f"{net.name}: sampled AECP, alpha={alpha:g}/s, beta={beta:g}/s, T={T:g} s, T2={T2:g} s",
        model="aecp-discrete", t_s=np.array(rec_t), rate_pps=x, rate_factor_pps=np.array(rec_r),
        queue_pkts=np.array(rec_q), status=st, message=msg, flow_names=[f.name for f in net.flows],
        capacity_pps=C, mean_queue_pkts=queue.q_integral / span if span > 0 else math.nan,
        t_avg_from_s=t_avg, lost_pkts=queue.lost, n_updates=n_upd)


# ---------------------------------------------------------------------------
# 2. PE-TCP
# ---------------------------------------------------------------------------

def simulate_petcp_discrete(net: Network, t_end_s: float, *, a_pps2: float = 125.0, b_per_s: float = 1.0,
                            T_s: float = 0.01, initial_queue_pkts: float = 0.0, t_avg_from_s=None,
                            scenario=None) -> DiscreteResult:
    """Event-driven run of PE-TCP's measured control law, eq. (6)-(11) of 000.

    Parameters
    ----------
    net : Network
        One bottleneck; ``B`` is its capacity (packets/s).  The papers'
        dumbbell: ``ecocc.dumbbell(12500, [0.05]*5, initial_rate_pps=12.5)``.
        Cross traffic must be constant, a schedule or mean on/off.
    t_end_s : float
        Simulated time (s, > 0).
    a_pps2, b_per_s, T_s : float
        Section 4.3 of 000: a = 1 Mbps/s = 125 packets/s^2 at 1000-byte
        packets, b = 1 /s, T = 0.01 s.
    initial_queue_pkts : float
        Queue at t = 0 (packets).
    t_avg_from_s : float or None
        Start of the exact queue time-average, seconds (default: half of the run).
    scenario : str or None
        Name for the result and plot title; None builds one from the network and gains.

    Returns
    -------
    DiscreteResult
        Rates and queue at every event instant, the exact mean queue, the lost fluid and the number of
        rate updates; status ``failed`` if a rate overflows.

    Raises
    ------
    InputError
        For a network that is not one bottleneck or has random cross traffic, or any gain or time out of
        range.

    Notes
    -----
    Flow ``i`` updates at ``t_0 = start_i`` and then at
    ``t_{k+1} = t_k + tau_k``, where ``tau_k = tau_min + q(t_k)/B`` is the
    RTT of the packet sent at ``t_k`` (it meets the queue ``q(t_k)`` at
    once with the papers' feedback delay placement; the fluid FIFO delay is
    exactly ``q/B``).  When that ACK returns the sender knows ``tau = tau_k``,
    ``tau_l = tau_{k-1}`` (the RTT stored in the hash table with the packet),
    ``tau_Delta = 1/B`` (eq. 6: packet pair is exact here), ``x_i(t) = x_k``
    and applies eq. (11)::

        q > 0 : x_{k+1} = x_k + a tau + b tau x_k (1 - (2 tau - tau_l)/tau - (tau - tau_min)/T)
        q = 0 : x_{k+1} = x_k + a tau + b tau x_k (1 - x_k tau_Delta)

    (eq. 9: ``X = (2 tau - tau_l)/(tau tau_Delta)`` when the queue is
    nonempty, ``X = x_i`` when empty).  The first round uses
    ``tau_l = tau``.  Rates are floored at 1e-9 packets/s (eq. 11 can go
    negative for large steps; a sender cannot send a negative rate).
    """
    _check_dumbbell(net, "simulate_petcp_discrete")
    t_end = _t_end(t_end_s)
    A = check_finite("a_pps2", a_pps2, positive=True)
    b = check_finite("b_per_s", b_per_s, positive=True)
    T = check_finite("T_s", T_s, positive=True)
    qi = check_finite("initial_queue_pkts", initial_queue_pkts, nonneg=True)
    t_avg = _avg_from(t_avg_from_s, t_end)
    a = net.arrays
    n = net.n_flows
    B = float(a.capacity_pps[0])
    tau_d = 1.0 / B
    fwd = a.pair_fwd_s.copy()
    tau_min = a.rtt_s.copy()
    queue = _FluidQueue(B, a.buffer_pkts[0], qi, t_avg)
    x = a.initial_rate_pps.astype(float).copy()
    tau_last = np.full(n, np.nan)
    arr_rate = np.zeros(n)
    active = np.zeros(n, dtype=bool)
    cross_rate = 0.0
    ev = _Events(net, t_end)
    push = ev.push
    rec_t, rec_x, rec_q = [], [], []
    n_upd = 0

    def record(t):
        rec_t.append(t)
        rec_x.append(np.where(active, x, np.nan))
        rec_q.append(queue.q)

    record(0.0)
    pending = {}  # flow -> tau of the packet in flight (sent at the last update)
    while ev:
        t, kind, j, payload = ev.pop()
        queue.advance(t, arr_rate.sum() + cross_rate)
        if kind == "cross":
            cross_rate = payload
        elif kind == "arrive":
            arr_rate[j] = payload
        elif kind == "stop":
            active[j] = False
            push(t + fwd[j], "arrive", j, 0.0)
        elif kind in ("start", "update"):
            if kind == "start":
                active[j] = True
            elif not active[j]:
                continue
            else:
                tau = pending[j]                                   # measured RTT of the ACKed packet
                tau_l = tau if np.isnan(tau_last[j]) else tau_last[j]
                if tau > tau_min[j] * (1 + 1e-12):                 # queue was nonempty: eq. (9) first case
                    x_new = x[j] + A * tau + b * tau * x[j] * (1 - (2 * tau - tau_l) / tau
                                                               - (tau - tau_min[j]) / T)
                else:                                              # empty queue: X = x_i
                    x_new = x[j] + A * tau + b * tau * x[j] * (1 - x[j] * tau_d)
                tau_last[j] = tau
                x[j] = max(x_new, 1e-9)
                n_upd += 1
            # send the next packet: its RTT is tau_min + queueing delay met now (exact fluid FIFO)
            pending[j] = tau_min[j] + queue.q / B
            push(t + fwd[j], "arrive", j, x[j])
            push(t + pending[j], "update", j)
        if not ev or ev.next_time() > t + _TIME_TOL_S:
            record(t)
        if not np.all(np.isfinite(x)):
            break
    st, msg = (Status.SUCCESS, "ok") if np.all(np.isfinite(x)) else (Status.FAILED, "overflow")
    span = max(queue.t - t_avg, 0.0)
    return DiscreteResult(
        scenario=scenario or f"{net.name}: PE-TCP eq. (11), a={A:g} pkt/s^2, b={b:g}/s, T={T:g} s",
        model="petcp-discrete", t_s=np.array(rec_t), rate_pps=np.array(rec_x), rate_factor_pps=None,
        queue_pkts=np.array(rec_q), status=st, message=msg, flow_names=[f.name for f in net.flows],
        capacity_pps=B, mean_queue_pkts=queue.q_integral / span if span > 0 else math.nan,
        t_avg_from_s=t_avg, lost_pkts=queue.lost, n_updates=n_upd)


# ---------------------------------------------------------------------------
# 3. TCP Symbiosis
# ---------------------------------------------------------------------------

def symbiosis_window_update(w0_pkts, available_pps, physical_pps, rtt_s, eps_per_s, gamma, t_s=None):
    """Return the logistic window of eq. (10) of 002 after ``t_s`` seconds (default one RTT).

    ``w(t) = w0 E W / (w0 (E - 1) + W)`` with
    ``E = exp(eps t (1 - gamma (1 - A/K)))`` and
    ``W = {K - gamma (K - A)} tau`` (eq. 11's ``w*``; the printed
    ``{K - gamma(K - A_i) tau_i}`` misplaces the brace -- dimensions and
    eq. (11) need the whole bracket times tau).

    Parameters
    ----------
    w0_pkts : float or numpy.ndarray
        Window at the start, packets.
    available_pps : float or numpy.ndarray
        Available bandwidth A, packets/s.
    physical_pps : float or numpy.ndarray
        Physical bandwidth K, packets/s.
    rtt_s : float or numpy.ndarray
        Round-trip time tau, seconds.
    eps_per_s : float
        Growth rate eps, 1/s.
    gamma : float
        Competition coefficient (dimensionless).
    t_s : float or None, optional
        Elapsed time, seconds; None: one RTT.

    Returns
    -------
    float or numpy.ndarray
        The window in packets, broadcast over the arguments.  Nothing is validated.
    """
    t = rtt_s if t_s is None else t_s
    growth = eps_per_s * (1.0 - gamma * (1.0 - available_pps / physical_pps))
    W = (physical_pps - gamma * (physical_pps - available_pps)) * rtt_s
    z = growth * t
    # w0 E W / (w0 (E-1) + W) = w0 W / (w0 (1 - e^-z) + W e^-z): no overflow for large z
    em = np.exp(-z)
    return w0_pkts * W / (w0_pkts * (1.0 - em) + W * em)


def simulate_symbiosis_discrete(net: Network, t_end_s: float, *, eps_per_s: float = 1.95, gamma: float = 0.9,
                                lag_rtts: float = 1.0, scenario=None) -> DiscreteResult:
    """Event-driven run of TCP Symbiosis's per-RTT window update, eq. (10) of 002.

    Parameters
    ----------
    net : Network
        One bottleneck; ``K_i`` is each flow's physical bandwidth
        (``physical_bw_pps``, default the capacity, packets/s), ``tau_i`` its RTT; the
        initial window is ``initial_rate_pps * tau_i`` packets.  Cross traffic is ignored.
    t_end_s : float
        Simulated time (s, > 0).
    eps_per_s, gamma : float
        Growth rate (1/s) and competition coefficient of eq. (8)-(10) (Section IV
        of 002: 1.95 and 0.9).
    lag_rtts : float
        Age of the available-bandwidth measurement in RTTs (>= 0).  ``A_i`` at an
        update instant ``t`` uses the other flows' windows in force just
        before ``t - lag_rtts * tau_i``.  1 (default): what the ACKs that
        returned during the last RTT report (their packets left one RTT
        earlier), i.e. ``w_j(k-1)`` when the current windows are ``w(k)``;
        0: the windows in force during the last RTT (an ideal, instantaneous
        measurement of the current load).
    scenario : str or None
        Name for the result and plot title; None builds one from the network and parameters.

    Returns
    -------
    DiscreteResult
        Windows (packets) and rates ``w_i / tau_i`` (packets/s) at every event instant, no queue;
        status ``failed`` if a window is not finite.

    Raises
    ------
    InputError
        For a network that is not one bottleneck or a parameter out of range.

    Notes
    -----
    Flow ``i`` updates at ``start_i + k tau_i``:
    ``A_i = clip(K_i - sum_{j != i} w_j((t - lag tau_i)^-)/tau_j, 0, K_i)``
    (eq. 17, the other flows' windows over their propagation RTTs), then
    ``w_i <- eq. (10)`` with ``w(0) = w_i`` and ``t = tau_i``.  The sending
    rate reported is ``w_i / tau_i`` (eq. 18); no queue is simulated (eq. 17
    does not depend on it).
    """
    _check_dumbbell(net, "simulate_symbiosis_discrete")
    t_end = _t_end(t_end_s)
    eps = check_finite("eps_per_s", eps_per_s, positive=True)
    g = check_finite("gamma", gamma, nonneg=True)
    lag = check_finite("lag_rtts", lag_rtts, nonneg=True)
    a = net.arrays
    n = net.n_flows
    K = a.physical_bw_pps.astype(float)
    tau = a.rtt_s.astype(float)
    w = a.initial_rate_pps * tau
    active = np.zeros(n, dtype=bool)
    hist_t = [[] for _ in range(n)]   # window history per flow (time, window), 0 while inactive
    hist_w = [[] for _ in range(n)]

    def w_at(j, t):
        # window in force just before t (left limit): same-instant updates never count
        k = np.searchsorted(hist_t[j], t - _TIME_TOL_S, side="right") - 1
        return hist_w[j][k] if k >= 0 else 0.0

    def set_w(j, t, val):
        hist_t[j].append(t)
        hist_w[j].append(val)

    ev = _Events(net, t_end, with_cross=False)
    push = ev.push
    rec_t, rec_w = [0.0], [np.full(n, np.nan)]
    n_upd = 0
    while ev:
        t, kind, j, _ = ev.pop()
        if kind == "start":
            active[j] = True
            set_w(j, t, w[j])
            push(t + tau[j], "update", j)
        elif kind == "stop":
            active[j] = False
            set_w(j, t, 0.0)
        elif active[j]:
            t_meas = t - lag * tau[j]
            others = sum(w_at(k, t_meas) / tau[k] for k in range(n) if k != j)
            A = min(max(K[j] - others, 0.0), K[j])
            w[j] = symbiosis_window_update(w[j], A, K[j], tau[j], eps, g)
            set_w(j, t, w[j])
            n_upd += 1
            push(t + tau[j], "update", j)
        if not ev or ev.next_time() > t + _TIME_TOL_S:
            rec_t.append(t)
            rec_w.append(np.where(active, w, np.nan))
    W = np.array(rec_w)
    st, msg = (Status.SUCCESS, "ok") if np.all(np.isfinite(w)) else (Status.FAILED, "non-finite window")
    return DiscreteResult(
        scenario=scenario or f"{net.name}: TCP Symbiosis eq. (10), eps={eps:g}/s, gamma={g:g}, lag={lag:g} RTT",
        model="symbiosis-discrete", t_s=np.array(rec_t), rate_pps=W / tau, rate_factor_pps=None,
        queue_pkts=None, status=st, message=msg, flow_names=[f.name for f in net.flows],
        capacity_pps=float(a.capacity_pps[0]), window_pkts=W, n_updates=n_upd)


# ---------------------------------------------------------------------------
# measurement helper
# ---------------------------------------------------------------------------

def log_deviation_envelope(res: DiscreteResult, target_pps, windows_s):
    """Return the largest ``|ln x - ln target|`` over flows and time in each time window.

    The decay of a perturbation is read off these envelopes.

    Parameters
    ----------
    res : DiscreteResult
        A discrete run.
    target_pps : float or numpy.ndarray
        Target rate, packets/s (one value or one per flow).  Inactive flows (NaN rate) count as on target.
    windows_s : sequence of (float, float)
        Closed time windows ``(t0, t1)``, seconds.

    Returns
    -------
    numpy.ndarray
        One deviation (natural-log units) per window; NaN for a window holding no sample.
    """
    x = res.rate_pps
    dev = np.abs(np.log(np.where(np.isnan(x), target_pps, x)) - np.log(target_pps))
    out = []
    for t0, t1 in windows_s:
        sel = (res.t_s >= t0) & (res.t_s <= t1)
        out.append(float(np.max(dev[sel])) if np.any(sel) else math.nan)
    return np.array(out)


# ---------------------------------------------------------------------------
# stability records
# ---------------------------------------------------------------------------

@dataclass
class DiscreteStability:
    """Linear stability of a sampled controller at its equilibrium.

    Attributes
    ----------
    model : str
    condition : str
        The stability condition in words/symbols.
    expr : sympy expression or None
        Symbolic form (characteristic polynomial or inequality) where tractable.
    spectral_radius : float
        Of the one-period linearized map (per update period of the map).
    stable : bool
        ``spectral_radius < 1``.
    boundary : dict
        Numeric boundary (e.g. critical RTT or gain), with units in the keys.
    period_s : float
        Time of one period of the map (to convert the spectral radius to a
        decay rate: ``ln(radius)/period_s`` per second).
    details : dict
    """

    model: str
    condition: str
    expr: object
    spectral_radius: float
    stable: bool
    boundary: dict = field(default_factory=dict)
    period_s: float = math.nan
    details: dict = field(default_factory=dict)

    @property
    def decay_rate_per_s(self) -> float:
        return math.log(self.spectral_radius) / self.period_s if self.spectral_radius > 0 else -math.inf


def _rho(M):
    return float(np.max(np.abs(np.linalg.eigvals(M))))


# -- AECP --------------------------------------------------------------------

def aecp_source_stability(alpha_per_s: float, T1_s: float) -> DiscreteStability:
    """Linear stability of the source update alone (router value fixed), eq. (46).

    ``ln x(k+1) - ln r = (1 - alpha T1)(ln x(k) - ln r)``: stable iff
    ``0 < alpha T1 < 2``; monotone for ``alpha T1 < 1``, oscillating for
    ``1 < alpha T1 < 2``.  With T1 = tau: ``tau < 2/alpha``.

    Parameters
    ----------
    alpha_per_s : float
        Source gain alpha, 1/s (> 0).
    T1_s : float
        Source update period T1, seconds (> 0).

    Returns
    -------
    DiscreteStability
        Multiplier ``1 - alpha T1`` as spectral radius (absolute value), ``boundary`` with
        ``T1_max_s``, ``T1_oscillation_s`` and ``alpha_max_per_s``.

    Raises
    ------
    InputError
        For a gain or period that is not a finite number > 0.
    """
    import sympy as sp
    alpha = check_finite("alpha_per_s", alpha_per_s, positive=True)
    T1 = check_finite("T1_s", T1_s, positive=True)
    a_, t_ = sp.symbols("alpha T_1", positive=True)
    m = 1 - alpha * T1
    return DiscreteStability(
        model="aecp-source", condition="|1 - alpha*T1| < 1  <=>  0 < alpha*T1 < 2 (oscillating if alpha*T1 > 1)",
        expr=sp.Abs(1 - a_ * t_) < 1, spectral_radius=abs(m), stable=abs(m) < 1,
        boundary={"T1_max_s": 2.0 / alpha, "T1_oscillation_s": 1.0 / alpha, "alpha_max_per_s": 2.0 / T1},
        period_s=T1, details={"multiplier": m})


def _aecp_steps(alpha, beta, T, T2, M):
    """Per-router-tick matrices (no source update, source update) of the symmetric mode.

    State at tick m (after the events of that instant):
    ``[u, s, v(m), v(m-1), ..., v(m-M+1)]`` with ``u = ln(x/x*)`` (all
    flows), ``s = (q - q0)/C`` (seconds) and ``v = ln(r/r*)``.  Over one tick
    ``s <- s + T2 u``; the router, eq. (49) linearized with
    ``sum x = C(1 + u)``: ``v(m+1) = v(m) - beta T2 (u + s(m+1)/T)``; at a
    source instant ``u <- (1 - alpha tau) u + alpha tau v(m+1-M)``.
    """
    d = M + 2
    A = np.zeros((d, d))
    A[0, 0] = 1.0
    A[1, 0], A[1, 1] = T2, 1.0
    A[2, 0] = -beta * T2 * (1.0 + T2 / T)
    A[2, 1] = -beta * T2 / T
    A[2, 2] = 1.0
    for i in range(3, d):
        A[i, i - 1] = 1.0
    Af = A.copy()
    g = alpha * M * T2
    Af[0, :] = 0.0
    Af[0, 0] = 1.0 - g
    Af[0, 2 + M - 1] = g      # v(m+1-M): the oldest stored router value
    return A, Af


def _aecp_M(tau_s, T2_s):
    M = int(round(tau_s / T2_s))
    check(M >= 1 and abs(M * T2_s - tau_s) <= 1e-9 * max(1.0, tau_s), "tau_s", tau_s,
          f"a positive integer multiple of T2_s = {T2_s} (linear analysis assumes T1 = tau = M*T2)")
    return M


def aecp_discrete_matrix(alpha_per_s, beta_per_s, T_s, tau_s, T2_s=0.1):
    """Return the symmetric-mode map over one source period tau = M T2 (the monodromy matrix).

    State ``[u, s, v(m), ..., v(m-M+1)]``: ``u = ln(x/x*)``, ``s = (q - q0)/C`` (seconds),
    ``v = ln(r/r*)``; M - 1 router ticks followed by a tick with the source update.

    Parameters
    ----------
    alpha_per_s, beta_per_s : float
        Source and router gains, 1/s (alpha > 0, beta >= 0).
    T_s : float
        Queue time constant T of eq. (49), seconds (> 0).
    tau_s : float
        RTT = source period, seconds; a positive integer multiple M of ``T2_s``.
    T2_s : float, optional
        Router sampling period, seconds (> 0).

    Returns
    -------
    numpy.ndarray
        The ``(M + 2, M + 2)`` monodromy matrix.

    Raises
    ------
    InputError
        For a gain or time out of range or ``tau_s`` not a multiple of ``T2_s`` (to 1e-9 relative).
    """
    alpha = check_finite("alpha_per_s", alpha_per_s, positive=True)
    beta = check_finite("beta_per_s", beta_per_s, nonneg=True)
    T = check_finite("T_s", T_s, positive=True)
    T2 = check_finite("T2_s", T2_s, positive=True)
    tau = check_finite("tau_s", tau_s, positive=True)
    M = _aecp_M(tau, T2)
    A, Af = _aecp_steps(alpha, beta, T, T2, M)
    return Af @ np.linalg.matrix_power(A, M - 1)


def aecp_discrete_charpoly(M: int = 1):
    """Return the SymPy characteristic polynomial of the symmetric-mode monodromy for tau = M T2.

    Parameters
    ----------
    M : int, optional
        RTT in router periods, 1..4 (the symbolic determinant grows fast).

    Returns
    -------
    poly : sympy.Expr
        The factored characteristic polynomial in the symbols ``alpha, beta, T, T_2, lam``.
    lam : sympy.Symbol
        Its variable.

    Raises
    ------
    InputError
        For ``M`` not an integer in 1..4.
    """
    import sympy as sp
    check(isinstance(M, (int, np.integer)) and 1 <= M <= 4, "M", M, "an integer in 1..4 (symbolic size grows fast)")
    al, be, T, T2, lam = sp.symbols("alpha beta T T_2 lam", positive=True)
    d = M + 2
    A = sp.zeros(d, d)
    A[0, 0] = 1
    A[1, 0], A[1, 1] = T2, 1
    A[2, 0] = -be * T2 * (1 + T2 / T)
    A[2, 1] = -be * T2 / T
    A[2, 2] = 1
    for i in range(3, d):
        A[i, i - 1] = 1
    Af = A.copy()
    g = al * M * T2
    for c in range(d):
        Af[0, c] = 0
    Af[0, 0] = 1 - g
    Af[0, 2 + M - 1] = g
    P = Af * A ** (M - 1)
    return sp.factor(sp.expand((lam * sp.eye(d) - P).det())), lam


def aecp_critical_alpha(beta_per_s, T_s, tau_s, T2_s=0.1, *, n_grid=400):
    """Find the stable range of alpha for the coupled sampled loop at fixed beta, T, tau = M T2.

    The largest interval of the grid ``(0, 2/tau]`` on which the symmetric-mode spectral radius is
    < 1, endpoints refined by 60 bisections; ``alpha_high`` is capped at ``2/tau`` (the differential
    modes need ``alpha tau < 2``).  With beta and T fixed a small alpha is unstable (the loop tends to
    a triple integrator), so there is a lower boundary.  A stable interval narrower than the grid
    spacing ``2/(tau n_grid)`` can be missed.

    Parameters
    ----------
    beta_per_s : float
        Router gain, 1/s (>= 0).
    T_s : float
        Queue time constant, seconds (> 0).
    tau_s : float
        RTT, seconds; a positive integer multiple of ``T2_s``.
    T2_s : float, optional
        Router sampling period, seconds.
    n_grid : int, optional
        Number of grid points in ``(0, 2/tau]``.

    Returns
    -------
    alpha_low, alpha_high : float
        Ends of the stable interval, 1/s; ``(nan, nan)`` if no grid alpha is stable.

    Raises
    ------
    InputError
        For a parameter out of range (see :func:`aecp_discrete_matrix`).
    """
    tau = check_finite("tau_s", tau_s, positive=True)
    top = 2.0 / tau
    grid = np.linspace(top / n_grid, top, n_grid)
    good = np.array([_rho(aecp_discrete_matrix(al, beta_per_s, T_s, tau, T2_s)) < 1.0 for al in grid])
    if not good.any():
        return math.nan, math.nan
    best, cur = (0, -1), None
    for i, g_ in enumerate(good):
        if g_ and cur is None:
            cur = i
        if (not g_ or i == len(good) - 1) and cur is not None:
            last = i if g_ else i - 1
            if last - cur > best[1] - best[0]:
                best = (cur, last)
            cur = None
    i0, i1 = best

    def refine(lo, hi, lo_good):
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            ok = _rho(aecp_discrete_matrix(mid, beta_per_s, T_s, tau, T2_s)) < 1.0
            if ok == lo_good:
                lo = mid
            else:
                hi = mid
        return 0.5 * (lo + hi)

    a_lo = 0.0 if i0 == 0 else refine(grid[i0 - 1], grid[i0], False)
    a_hi = top if i1 == len(grid) - 1 else refine(grid[i1], grid[i1 + 1], True)
    return a_lo, a_hi


def aecp_discrete_stability(alpha_per_s=2.0, beta_per_s=1.0, T_s=2.0, tau_s=0.1, T2_s=0.1, n_flows=1,
                            *, max_multiple=40) -> DiscreteStability:
    """Linear stability of the sampled CLTCP/AECP loop, eq. (46)-(49), N synchronous flows.

    With x* = r* = C/N and q* = q0 the symmetric mode (all flows alike) is
    the (M+2)-dimensional map of :func:`aecp_discrete_matrix` over one
    source period tau = M T2; the N-1 differential modes see a common
    router value and obey the source-only law, multiplier ``1 - alpha tau``.
    Stable iff the monodromy's spectral radius < 1 and ``alpha tau < 2``.
    ``n_flows`` does not enter the symmetric mode (x* = C/N makes the loop
    gain independent of N and C); it only decides whether differential modes exist.

    Parameters
    ----------
    alpha_per_s, beta_per_s : float, optional
        Source and router gains, 1/s.
    T_s : float, optional
        Queue time constant of eq. (49), seconds.
    tau_s : float, optional
        RTT = source period, seconds; a positive integer multiple of ``T2_s``.
    T2_s : float, optional
        Router sampling period, seconds.
    n_flows : int, optional
        Number of flows (>= 1).
    max_multiple : int, optional
        Largest M searched for the first unstable RTT ``M T2``.

    Returns
    -------
    DiscreteStability
        ``boundary["tau_crit_multiple_s"]`` is the first RTT on the grid
        ``M T2`` (M = 1..max_multiple) that is unstable (NaN if none; then
        ``tau_last_stable_multiple_s`` is NaN too), ``boundary["alpha_range_per_s"]``
        the stable alpha interval at this tau (:func:`aecp_critical_alpha`),
        ``boundary["tau_source_only_max_s"] = 2/alpha``; ``expr`` the
        characteristic polynomial for M <= 2, else None.

    Raises
    ------
    InputError
        For a parameter out of range or ``tau_s`` not a multiple of ``T2_s``.
    """
    alpha = check_finite("alpha_per_s", alpha_per_s, positive=True)
    n_flows = check_int("n_flows", n_flows)
    T2 = check_finite("T2_s", T2_s, positive=True)
    P = aecp_discrete_matrix(alpha, beta_per_s, T_s, tau_s, T2)
    rho_sym = _rho(P)
    diff = abs(1.0 - alpha * tau_s) if n_flows > 1 else 0.0
    rho = max(rho_sym, diff)
    first_bad = math.nan
    for M in range(1, int(max_multiple) + 1):
        if max(_rho(aecp_discrete_matrix(alpha, beta_per_s, T_s, M * T2, T2)), abs(1 - alpha * M * T2)) >= 1.0:
            first_bad = M * T2
            break
    M = _aecp_M(tau_s, T2)
    expr = None
    if M <= 2:
        expr, _ = aecp_discrete_charpoly(M)
    return DiscreteStability(
        model="aecp-discrete",
        condition=("spectral radius of the symmetric-mode monodromy (tau = M*T2, eq. 46-49 linearized at "
                   "x* = r* = C/N, q* = q0) < 1, and |1 - alpha*tau| < 1 for the differential modes"),
        expr=expr, spectral_radius=rho, stable=rho < 1.0,
        boundary={"tau_crit_multiple_s": first_bad, "tau_last_stable_multiple_s": first_bad - T2,
                  "alpha_range_per_s": aecp_critical_alpha(beta_per_s, T_s, tau_s, T2),
                  "tau_source_only_max_s": 2.0 / alpha},
        period_s=float(tau_s),
        details={"rho_symmetric": rho_sym, "rho_differential": diff, "M": M, "n_flows": int(n_flows)})


# -- PE-TCP ------------------------------------------------------------------

def _petcp_sym():
    import sympy as sp
    x, q, ql, a, b, T, B, N, tmin = sp.symbols("x q q_l a b T B N tau_min", positive=True)
    tau = tmin + q / B
    taul = tmin + ql / B
    xn = x + a * tau + b * tau * x * (1 - (2 * tau - taul) / tau - (tau - tmin) / T)      # eq. (11), q > 0
    qn = q + (N * x - B) * tau                                                             # fluid queue over one round
    F = sp.Matrix([xn, qn, q])
    J = F.jacobian([x, q, ql])
    eq = {x: B / N, q: a * T * N / b, ql: a * T * N / b}                                   # Theorem 1
    return J.subs(eq), (a, b, T, B, N, tmin)


def petcp_discrete_matrix(a_pps2=125.0, b_per_s=1.0, T_s=0.01, capacity_pps=12500.0, n_flows=5, rtt_s=0.05):
    """Return the Jacobian of the synchronous PE-TCP round map (state ``[x, q, q_prev]``) at Theorem 1's equilibrium.

    The map: all N flows update together every ``tau = tau_min + q/B``;
    ``x <- eq. (11)`` (nonempty-queue case), ``q <- q + (N x - B) tau``,
    ``q_prev <- q``.  Equilibrium ``x* = B/N``, ``q* = a T N / b``.

    Parameters
    ----------
    a_pps2 : float, optional
        Additive gain a, packets/s^2 (> 0).
    b_per_s : float, optional
        Multiplicative gain b, 1/s (> 0).
    T_s : float, optional
        Queueing-delay time constant T, seconds (> 0).
    capacity_pps : float, optional
        Bottleneck capacity B, packets/s (> 0).
    n_flows : int, optional
        Number of flows N (>= 1).
    rtt_s : float, optional
        Propagation RTT tau_min, seconds (> 0).

    Returns
    -------
    numpy.ndarray
        The 3 x 3 Jacobian (rate in packets/s, queues in packets).

    Raises
    ------
    InputError
        For a parameter out of range.
    """
    vals = [check_finite("a_pps2", a_pps2, positive=True), check_finite("b_per_s", b_per_s, positive=True),
            check_finite("T_s", T_s, positive=True), check_finite("capacity_pps", capacity_pps, positive=True)]
    n_flows = check_int("n_flows", n_flows)
    vals += [n_flows, check_finite("rtt_s", rtt_s, positive=True)]
    J, syms = _petcp_sym()
    return np.array(J.subs(dict(zip(syms, vals))).evalf(), dtype=float)


def petcp_discrete_stability(a_pps2=125.0, b_per_s=1.0, T_s=0.01, capacity_pps=12500.0, n_flows=5,
                             rtt_s=0.05) -> DiscreteStability:
    """Linear stability of PE-TCP's round map, eq. (11) of 000, at x* = B/N, q* = aTN/b.

    Symmetric mode: spectral radius of :func:`petcp_discrete_matrix`;
    differential modes (sum of rates fixed, queue unchanged) have multiplier
    ``1 - a tau*/x*`` (``tau* = tau_min + q*/B``).

    Parameters
    ----------
    a_pps2 : float, optional
        Additive gain a, packets/s^2.
    b_per_s : float, optional
        Multiplicative gain b, 1/s.
    T_s : float, optional
        Queueing-delay time constant T, seconds.
    capacity_pps : float, optional
        Bottleneck capacity B, packets/s.
    n_flows : int, optional
        Number of flows N.
    rtt_s : float, optional
        Propagation RTT tau_min, seconds.

    Returns
    -------
    DiscreteStability
        ``boundary["rtt_crit_s"]`` is the propagation RTT (seconds) where the symmetric mode first turns
        unstable on a log grid of 300 points over [1e-5, 10] s, refined by bisection (NaN if it is
        unstable already at 1e-5 s or stable up to 10 s), with ``q_star_pkts`` and ``x_star_pps``;
        ``period_s`` is ``tau*``; ``expr`` the factored characteristic polynomial.

    Raises
    ------
    InputError
        For a parameter out of range.
    """
    import sympy as sp
    J, syms = _petcp_sym()
    M = petcp_discrete_matrix(a_pps2, b_per_s, T_s, capacity_pps, n_flows, rtt_s)
    rho_sym = _rho(M)
    xs = capacity_pps / n_flows
    qs = a_pps2 * T_s * n_flows / b_per_s
    tau_s = rtt_s + qs / capacity_pps
    diff = abs(1 - a_pps2 * tau_s / xs) if n_flows > 1 else 0.0
    rho = max(rho_sym, diff)

    def f(r):
        return _rho(petcp_discrete_matrix(a_pps2, b_per_s, T_s, capacity_pps, n_flows, r)) - 1.0

    grid = np.geomspace(1e-5, 10.0, 300)
    vals = np.array([f(r) for r in grid])
    crit = math.nan
    if vals[0] < 0:
        bad = np.nonzero(vals >= 0)[0]
        if bad.size:
            lo, hi = grid[bad[0] - 1], grid[bad[0]]
            for _ in range(80):
                mid = 0.5 * (lo + hi)
                lo, hi = (mid, hi) if f(mid) < 0 else (lo, mid)
            crit = 0.5 * (lo + hi)
    lam = sp.Symbol("lam")
    poly = sp.factor(sp.simplify((lam * sp.eye(3) - J).det()))
    return DiscreteStability(
        model="petcp-discrete",
        condition="spectral radius of the Jacobian of the round map (x, q, q_prev) at Theorem 1's equilibrium < 1",
        expr=poly, spectral_radius=rho, stable=rho < 1.0,
        boundary={"rtt_crit_s": crit, "q_star_pkts": qs, "x_star_pps": xs},
        period_s=tau_s, details={"rho_symmetric": rho_sym, "rho_differential": diff, "jacobian": M})


# -- TCP Symbiosis ------------------------------------------------------------

def _symb_modes(eps, gamma, n, rtt, lag):
    rho_star = eps / (1.0 + (n - 1) * gamma)      # growth exponent per second at equilibrium
    mu = math.exp(-rho_star * rtt)                # d w(k+1) / d w(k) at the fixed point of eq. (10)
    kappas = [gamma * (n - 1)] + ([-gamma] if n > 1 else [])
    radii = []
    for kap in kappas:
        # lambda^(lag+1) - mu lambda^lag + (1 - mu) kappa = 0
        coeffs = np.zeros(lag + 2)
        coeffs[0], coeffs[1] = 1.0, -mu
        coeffs[-1] += (1.0 - mu) * kap
        radii.append(float(np.max(np.abs(np.roots(coeffs)))))
    return radii, mu, rho_star


def symbiosis_discrete_stability(eps_per_s=1.95, gamma=0.9, n=1, rtt_s=1.0, lag_rtts=1) -> DiscreteStability:
    """Linear stability of the per-RTT eq. (10) update for n identical flows (002).

    At the fixed point ``u* = K/(1 + (n-1) gamma)`` the map
    ``w_i(k+1) = eq.(10)(w_i(k), A_i(k - lag))`` linearizes to
    ``dw_i(k+1) = mu dw_i(k) - (1 - mu) gamma sum_{j != i} dw_j(k - lag)``
    with ``mu = exp(-eps tau/(1 + (n-1) gamma))`` (eq. 10's derivative in
    ``w(0)`` is ``1/E``, in ``w*`` it is ``1 - 1/E``; ``dw*/dA = gamma tau``).
    Modes: ``lambda^(lag+1) - mu lambda^lag + (1-mu) kappa = 0`` with
    ``kappa = gamma (n-1)`` (all flows alike) and ``-gamma`` (n-1 times).

    lag = 1: stable iff ``(1 - mu) gamma (n-1) < 1`` (for gamma < 1), i.e.
    always if ``gamma (n-1) <= 1``, else
    ``eps tau < (1+(n-1)gamma) ln(gamma(n-1)/(gamma(n-1)-1))``.
    lag = 0: stable iff ``(1 - mu)(1 + gamma(n-1)) < 2`` and ``gamma < 1``.
    n = 1: ``|mu| < 1`` for every eps > 0 (the exact logistic flow map).

    Parameters
    ----------
    eps_per_s : float, optional
        Growth rate eps, 1/s (> 0).
    gamma : float, optional
        Competition coefficient (>= 0).
    n : int, optional
        Number of identical flows (>= 1).
    rtt_s : float, optional
        RTT tau = update period, seconds (> 0).
    lag_rtts : {0, 1}, optional
        Age of the available-bandwidth measurement, RTTs.

    Returns
    -------
    DiscreteStability
        Spectral radius over the modes, ``boundary["eps_tau_crit"]`` (dimensionless, ``inf`` for no
        limit) and ``boundary["eps_crit_per_s"]`` (1/s); ``details`` holds ``mu`` and each mode's radius.

    Raises
    ------
    InputError
        For a parameter out of range or ``lag_rtts`` other than 0 or 1.
    """
    import sympy as sp
    eps = check_finite("eps_per_s", eps_per_s, positive=True)
    g = check_finite("gamma", gamma, nonneg=True)
    n_ = check_int("n", n)
    tau = check_finite("rtt_s", rtt_s, positive=True)
    check(lag_rtts in (0, 1), "lag_rtts", lag_rtts, "0 or 1 (RTTs of measurement age)")
    radii, mu, rs = _symb_modes(eps, g, n_, tau, int(lag_rtts))
    e, gm, nn, tt = sp.symbols("epsilon gamma n tau", positive=True)
    musym = sp.exp(-e * tt / (1 + (nn - 1) * gm))
    if lag_rtts == 1:
        expr = (1 - musym) * gm * (nn - 1) < 1
        kap = g * (n_ - 1)
        if kap <= 1:
            crit = math.inf
        else:
            crit = (1 + (n_ - 1) * g) * math.log(kap / (kap - 1))
        cond = "(1 - exp(-eps*tau/(1+(n-1)*gamma))) * gamma*(n-1) < 1  (and gamma < 1 for the differential modes)"
    else:
        expr = (1 - musym) * (1 + gm * (nn - 1)) < 2
        crit = math.inf if (1 + g * (n_ - 1)) <= 2 else (1 + (n_ - 1) * g) * math.log((1 + g * (n_ - 1)) / (g * (n_ - 1) - 1))
        cond = "(1 - exp(-eps*tau/(1+(n-1)*gamma))) * (1 + gamma*(n-1)) < 2  (and gamma < 1)"
    rho = max(radii)
    return DiscreteStability(
        model="symbiosis-discrete", condition=cond, expr=expr, spectral_radius=rho, stable=rho < 1.0,
        boundary={"eps_tau_crit": crit, "eps_crit_per_s": crit / tau},
        period_s=tau, details={"mu": mu, "growth_at_equilibrium_per_s": rs, "rho_modes": radii,
                               "lag_rtts": int(lag_rtts)})


def symbiosis_critical_eps(gamma, n, rtt_s=1.0, lag_rtts=1):
    """Return the critical eps of :func:`symbiosis_discrete_stability` (the stability boundary of the symmetric mode).

    Parameters
    ----------
    gamma : float
        Competition coefficient (>= 0).
    n : int
        Number of identical flows (>= 1).
    rtt_s : float, optional
        RTT, seconds (> 0).
    lag_rtts : {0, 1}, optional
        Age of the available-bandwidth measurement, RTTs.

    Returns
    -------
    float
        Critical growth rate, 1/s (``inf``: no limit).

    Raises
    ------
    InputError
        For a parameter out of range.
    """
    return symbiosis_discrete_stability(1.0, gamma, n, rtt_s, lag_rtts).boundary["eps_crit_per_s"]


def logistic_discrete_stability(eps: float) -> DiscreteStability:
    """Linear stability of the plain discrete logistic x <- x + eps x (1 - x/K) (002 III-C 2, 003).

    Multiplier ``1 - eps`` at x = K: stable iff 0 < eps < 2.

    Parameters
    ----------
    eps : float
        Growth per step (dimensionless, > 0).

    Returns
    -------
    DiscreteStability
        Spectral radius ``|1 - eps|``, ``boundary["eps_crit"] = 2``, period 1 (one step).

    Raises
    ------
    InputError
        For ``eps`` not a finite number > 0.
    """
    import sympy as sp
    e = check_finite("eps", eps, positive=True)
    es = sp.Symbol("epsilon", positive=True)
    return DiscreteStability(model="discrete-logistic", condition="|1 - eps| < 1 <=> 0 < eps < 2",
                             expr=sp.Abs(1 - es) < 1, spectral_radius=abs(1 - e), stable=abs(1 - e) < 1,
                             boundary={"eps_crit": 2.0}, period_s=1.0)
