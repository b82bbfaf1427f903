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

    Parameters
    ----------
    alpha_pkts : packets each flow keeps in the queues (Jin et al. 2004 use
        alpha = 200 packets in their Section 5 experiments; a choice)
    gamma : smoothing of the window update, in (0, 1] (0.5 in the paper)

    Raises
    ------
    InputError
        If a value is not finite and positive, or ``gamma > 1``.
    """

    alpha_pkts: float = 200.0
    gamma: float = 0.5
    _positive = ("alpha_pkts", "gamma")

    def _check(self):
        from ..errors import check
        check(self.gamma <= 1, "FASTParams.gamma", self.gamma, "a value in (0, 1]")


class FAST(NetworkModel):
    """FAST TCP's fluid window law (Jin, Wei & Low 2004), delay-based (baseline); see the module docstring."""

    name = "fast"
    Params = FASTParams
    flow_states = ("w",)
    flow_log = (True,)
    path_aggregate = "sum"
    description = "FAST TCP (Jin, Wei, Low 2004) fluid window law, baseline"

    def flow_rate(self, ops, s, qdelay, P, st):
        """Sending rate ``x = w / (tau + Q)`` (window over the current round-trip time).

        Parameters
        ----------
        ops, P
            As in :meth:`ecocc.models.base.NetworkModel.flow_rate` (not used).
        s : dict
            ``s["w"]``: congestion window (packets).
        qdelay : array_like
            Current queueing delay ``Q`` of the path (s).
        st : dict
            ``st["rtt"]``: propagation RTT ``tau`` = baseRTT (s).

        Returns
        -------
        array_like
            Sending rate (packets/s).
        """
        return s["w"] / (st["rtt"] + qdelay)

    def link_signal(self, ops, ls, q, y, C, P, lst):
        """Queueing delay of the link, ``q_l / C_l``; flows add them along the path (``Q``).

        Parameters
        ----------
        ops, ls, y, P, lst
            As in :meth:`ecocc.models.base.NetworkModel.link_signal` (not used).
        q : array_like
            Queue (packets), one backward delay old.
        C : array_like
            Capacity (packets/s).

        Returns
        -------
        array_like
            Queueing delay (s).
        """
        return q / C  # queueing delay (s)

    def flow_law(self, ops, s, fb, own, qdelay, P, st):
        """Fluid limit of Jin, Wei & Low's eq. (3): ``w' = min(w/RTT, gamma (alpha - w Q/RTT)/RTT)``, ``RTT = tau + Q``.

        ``Q`` is the queueing delay the flow measures (the feedback, one backward delay old); the
        ``w/RTT`` branch is the update's ``min{2w, ...}`` cap (at most doubling per RTT).

        Parameters
        ----------
        ops : SimpleNamespace
            As in :meth:`ecocc.models.base.NetworkModel.flow_law`.
        s : dict
            ``s["w"]``: congestion window (packets).
        fb : array_like
            Path queueing delay ``Q = sum_l q_l/C_l``, one backward delay old (s).
        own, qdelay
            Not used (the law uses the measured ``Q``, not the current one).
        P : FASTParams
            ``alpha_pkts`` (packets) and ``gamma``.
        st : dict
            ``st["rtt"]``: propagation RTT ``tau`` (s).

        Returns
        -------
        dict
            ``{"w": w'}`` (packets/s).
        """
        w = s["w"]
        rtt = st["rtt"] + fb
        return {"w": ops.minimum(w / rtt, P.gamma * (P.alpha_pkts - w * fb / rtt) / rtt)}

    def initial_flow_state(self, net, P):
        """A flow starts with the window of its initial rate: ``w = max(x0 tau, 1)``.

        Parameters
        ----------
        net : ecocc.network.Network
            The network (``initial_rate_pps`` x0 in packets/s, ``rtt_s`` tau in s).
        P : FASTParams
            The parameters (not used).

        Returns
        -------
        dict
            ``{"w": array over the flows}`` (packets, at least 1).
        """
        a = net.arrays
        return {"w": np.maximum(a.initial_rate_pps * a.rtt_s, 1.0)}

    def equilibrium(self, net, P):
        """Single link with constant cross traffic ``c``: ``x_i = (C - c)/N``, ``Q = N alpha/(C - c)``.

        Every flow keeps ``x_i Q = alpha`` packets queued (Jin, Wei & Low 2004,
        Section 4); the queue is ``C Q`` packets (``N alpha`` without cross
        traffic) and the window ``x_i (tau_i + Q)``.

        Parameters
        ----------
        net : ecocc.network.Network
            The network (capacity and cross traffic in packets/s, RTTs in s).
        P : FASTParams
            ``alpha_pkts``.

        Returns
        -------
        dict or None
            ``rate_pps`` (per flow, packets/s), ``queue_pkts`` (shape (1,), packets), ``window_pkts``
            (per flow, packets) and ``source``; None for more than one link, time-varying cross traffic
            or ``c >= C``.
        """
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
