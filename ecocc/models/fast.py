"""FAST TCP (Jin, Wei & Low, "FAST TCP: motivation, architecture,
algorithms, performance", IEEE INFOCOM 2004) as a fluid model.

Window update of Section 3.4 (eq. (3) there), once per update period::

    w <- min{ 2 w, (1 - gamma) w + gamma (baseRTT/RTT w + alpha) }

With the update applied once per round trip ``RTT = tau + Q`` (``Q`` the
queueing delay the flow measures) its fluid limit is (the form analysed by
Jin, Wei & Low, Section 4, and Wang, Wei & Low, INFOCOM 2005)::

    w'(t) = min{ w / RTT,  gamma (alpha - w Q / RTT) / RTT }

so at equilibrium every flow keeps ``x_i Q_i = alpha`` packets in the
queues of its path: on one link ``N`` flows hold ``N alpha`` packets and
share the capacity equally whatever their RTTs (Theorem 1 there: the
equilibrium is proportionally fair / maximizes sum alpha_i log x_i).

Signals: each link publishes its queueing delay ``q_l / C_l``; the flow
adds them along its path one backward delay late (``Q``), and sends at
``w / (tau + current queueing delay)``.  ``baseRTT`` is the true propagation
RTT ``tau`` (the paper's min-RTT estimate can be wrong when a flow joins a
standing queue, as 002 Section IV notes; not modelled).  FAST reacts to loss
like Reno; that reaction is not modelled (a finite buffer's overflow is
counted as lost).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import ModelParams, NetworkModel


@dataclass(frozen=True)
class FASTParams(ModelParams):
    """FAST TCP parameters.

    alpha_pkts : packets each flow keeps in the queues (Jin et al. 2004 use
        alpha = 200 packets in their Section 5 experiments; a choice)
    gamma : smoothing of the window update, in (0, 1] (0.5 in the paper)
    """

    alpha_pkts: float = 200.0
    gamma: float = 0.5
    _positive = ("alpha_pkts", "gamma")

    def _check(self):
        from ..errors import check
        check(self.gamma <= 1, "FASTParams.gamma", self.gamma, "a value in (0, 1]")


class FAST(NetworkModel):
    name = "fast"
    Params = FASTParams
    flow_states = ("w",)
    flow_log = (True,)
    path_aggregate = "sum"
    description = "FAST TCP (Jin, Wei, Low 2004) fluid window law, baseline"

    def flow_rate(self, ops, s, qdelay, P, st):
        return s["w"] / (st["rtt"] + qdelay)

    def link_signal(self, ops, ls, q, y, C, P, lst):
        return q / C  # queueing delay (s)

    def flow_law(self, ops, s, fb, own, qdelay, P, st):
        w = s["w"]
        rtt = st["rtt"] + fb
        return {"w": ops.minimum(w / rtt, P.gamma * (P.alpha_pkts - w * fb / rtt) / rtt)}

    def initial_flow_state(self, net, P):
        a = net.arrays
        return {"w": np.maximum(a.initial_rate_pps * a.rtt_s, 1.0)}

    def equilibrium(self, net, P):
        """Single link with constant cross traffic ``c``: ``x_i = (C - c)/N``,
        queueing delay ``Q = N alpha / (C - c)``, queue ``C Q`` packets
        (``N alpha`` without cross traffic)."""
        if net.n_links != 1:
            return None
        from .aecp import _mean_cross
        a = net.arrays
        C, c = a.capacity_pps[0], _mean_cross(net)[0]
        if not np.isfinite(c) or c >= C:
            return None
        N = net.n_flows
        Q = N * P.alpha_pkts / (C - c)
        x = np.full(N, (C - c) / N)
        return {"rate_pps": x, "queue_pkts": np.array([C * Q]), "window_pkts": x * (a.rtt_s + Q),
                "source": "FAST TCP equilibrium x_i Q = alpha (Jin, Wei, Low 2004, Section 4)"}
