"""PE-TCP: logistic source with an additive term.

Eq. (4)-(5) of 000_76a89ab68a61e51d.txt::

    x_i'(t) = a + b x_i(t) (1 - (X(t) + q(t)/T) / B)
    q'(t)   = X(t) - B                          (q kept >= 0)

Defaults are Section 4.3's choice: a = 1 Mbps per second, b = 1 /s,
T = 0.01 s.  With 1000-byte packets a = 125 packets/s^2 (``a_pps2``).

Delays: eq. (4) has none; the sender learns X and q from its ACKs
(Section 3.2), i.e. one backward delay late.  ``delayed_feedback=True``
(default) uses ``X(t - d_b)``, ``q(t - d_b)``; ``False`` is eq. (4) as
printed.  On a network each link publishes its normalised load
``rho_l = (y_l + q_l/T)/C_l`` and a flow reacts to the most loaded link on
its path (max): the paper only treats one bottleneck, this is our choice.

Theorem 1: equilibrium x_i* = B/N, q* = a T N / b (5 flows, a = 125 pkt/s^2,
T = 0.01 s, b = 1: q* = 6.25 packets, the paper's 'theoretical value').
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import ModelParams, NetworkModel


@dataclass(frozen=True)
class PETCPParams(ModelParams):
    """PE-TCP parameters (Section 4.3 of 000).

    a_pps2 : additive increase a (packets/s per second); 125 = 1 Mbps/s at
        1000-byte packets
    b_per_s : multiplicative gain b (1/s)
    T_s : queue time constant T (s)
    delayed_feedback : whether the sender sees X and q one backward delay late
    """

    a_pps2: float = 125.0
    b_per_s: float = 1.0
    T_s: float = 0.01
    delayed_feedback: bool = True
    _positive = ("a_pps2", "b_per_s", "T_s")

    def _check(self):
        from ..errors import check
        check(isinstance(self.delayed_feedback, bool), "PETCPParams.delayed_feedback", self.delayed_feedback, "true or false")


class PETCP(NetworkModel):
    name = "petcp"
    Params = PETCPParams
    flow_states = ("x",)
    flow_log = (True,)
    link_states = ()
    link_log = ()
    path_aggregate = "max"
    signal_uses_arrival = True
    description = "PE-TCP, eq. (4)-(5) of 000"

    def flow_rate(self, ops, s, qdelay, P, st):
        return s["x"]

    def link_signal(self, ops, ls, q, y, C, P, lst):
        return (y + q / P.T_s) / C

    def flow_law(self, ops, s, fb, own, qdelay, P, st):
        x = s["x"]
        return {"x": P.a_pps2 + P.b_per_s * x * (1 - fb)}

    def initial_flow_state(self, net, P):
        return {"x": net.arrays.initial_rate_pps}

    def equilibrium(self, net, P):
        """Theorem 1 (single link): x* = (C - c)/N, q* = a T C N / (b (C - c)).

        With no cross traffic (c = 0) this is the paper's x* = B/N,
        q* = a T N / b.
        """
        if net.n_links != 1:
            return None
        from .aecp import _mean_cross
        C = net.arrays.capacity_pps[0]
        c = _mean_cross(net)[0]
        N = net.n_flows
        if not np.isfinite(c) or c >= C:
            return None
        q = P.a_pps2 * P.T_s * C * N / (P.b_per_s * (C - c))
        return {"rate_pps": np.full(N, (C - c) / N), "queue_pkts": np.array([q]),
                "source": "Theorem 1 of 000 (x* = B/N, q* = aTN/b), with constant cross traffic c: q* = aTCN/(b(C-c))"}
