"""TCP Symbiosis: Lotka-Volterra competition driven by available bandwidth.

Eq. (8)-(9) of 002_2fcfdbe8ba8bf605.txt::

    w_i'(t) = eps (1 - (w_i + gamma (K_i - A_i) tau_i) / (K_i tau_i)) w_i

with K_i the physical bandwidth, A_i the available bandwidth and tau_i the
round-trip propagation delay.  Defaults eps = 1.95, gamma = 0.9 (Section IV).

Choices (the paper leaves them open):

* ``available="paper"`` (default): eq. (17), ``K - A_i = sum_{k != i}
  w_k / tau_k`` -- every link publishes its spare capacity
  ``C_l - c_l - sum_k w_k/tau_k`` (c_l: cross traffic) and a flow adds back its
  own ``w_i/tau_i`` (one RTT old) and takes the minimum over its path;
  ``A_i`` is capped at ``K_i``.  ``available="measured"`` uses the actual
  arrival rates instead (what an ideal ImTCP would measure).
* ``rate="window"`` (default): the flow sends ``w_i / (tau_i + queueing
  delay)`` (self-clocking), which gives the queue of eq. (19)-(20):
  ``Q = n K tau/(1+(n-1)gamma) - K tau``.  ``rate="propagation"`` sends
  ``w_i/tau_i`` as eq. (18) assumes; then the queue grows without bound
  whenever ``sum_i w_i/tau_i > C`` (a finite buffer drops the excess).
* A_i reaches the sender one backward delay late.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import ModelParams, NetworkModel


@dataclass(frozen=True)
class SymbiosisParams(ModelParams):
    """TCP Symbiosis parameters (eq. 9 of 002).

    epsilon_per_s : intrinsic growth rate eps (1/s)
    gamma : competition coefficient (0 < gamma < 1 for coexistence, eq. 4)
    available : "paper" (eq. 17) or "measured"
    rate : "window" or "propagation"
    """

    epsilon_per_s: float = 1.95
    gamma: float = 0.9
    available: str = "paper"
    rate: str = "window"
    _positive = ("epsilon_per_s",)
    _nonneg = ("gamma",)
    CHOICES = {"available": ("paper", "measured"), "rate": ("window", "propagation")}


class Symbiosis(NetworkModel):
    name = "symbiosis"
    Params = SymbiosisParams
    flow_states = ("w",)
    flow_log = (True,)
    path_aggregate = "min"
    needs_own_delayed = True
    signal_uses_arrival = True
    separate_load = True
    description = "TCP Symbiosis, eq. (8)-(9) of 002"

    def flow_rate(self, ops, s, qdelay, P, st):
        if P.rate == "window":
            return s["w"] / (st["rtt"] + qdelay)
        return s["w"] / st["rtt"]

    def flow_load(self, ops, s, qdelay, P, st):
        if P.available == "paper":
            return s["w"] / st["rtt"]
        return self.flow_rate(ops, s, qdelay, P, st)

    def own_load(self, ops, s, P, st):
        return s["w"] / st["rtt"]

    def link_signal(self, ops, ls, q, y, C, P, lst):
        return C - y  # spare capacity left by the load

    def flow_law(self, ops, s, fb, own, qdelay, P, st):
        w, K, tau = s["w"], st["K"], st["rtt"]
        A = ops.minimum(K, fb + own)
        return {"w": P.epsilon_per_s * (1 - (w + P.gamma * (K - A) * tau) / (K * tau)) * w}

    def initial_flow_state(self, net, P):
        a = net.arrays
        return {"w": a.initial_rate_pps * a.rtt_s}

    def equilibrium(self, net, P):
        """Eq. (11) solved jointly for all flows on one link, eq. (19)-(20).

        u_i = w_i*/tau_i solves (1 - gamma) u_i + gamma (c + sum_k u_k) = K_i;
        the queue solves sum_i w_i*/(tau_i + q/C) = C (q = 0 if the link is
        not saturated).  ``available="paper"`` only.
        """
        if net.n_links != 1 or P.available != "paper":
            return None
        from scipy.optimize import brentq
        from .aecp import _mean_cross
        a = net.arrays
        C, c = a.capacity_pps[0], _mean_cross(net)[0]
        if not np.isfinite(c):
            return None
        n = net.n_flows
        M = (1 - P.gamma) * np.eye(n) + P.gamma * np.ones((n, n))
        u = np.linalg.solve(M, a.physical_bw_pps - P.gamma * c)
        w = u * a.rtt_s
        if P.rate == "window":
            excess = lambda q: np.sum(w / (a.rtt_s + q / C)) + c - C  # noqa: E731
            q = 0.0 if excess(0.0) <= 0 else brentq(excess, 0.0, np.sum(w) + 1.0, xtol=1e-12)
            rates = w / (a.rtt_s + q / C)
        else:
            q = 0.0 if u.sum() + c <= C else np.inf
            rates = u
        return {"rate_pps": rates, "queue_pkts": np.array([q]), "window_pkts": w,
                "source": "eq. (11), (19)-(20) of 002 (w* = {(1-gamma)K + gamma A} tau, Q = sum w - K tau)"}
