"""Scalable TCP (Kelly, "Scalable TCP: improving performance in highspeed
wide area networks", CCR 33(2), 2003; PFLDnet 2003) as a fluid model.

Kelly Section 2: per acknowledgement ``cwnd <- cwnd + a`` (a = 0.01), per
loss event ``cwnd <- cwnd - b cwnd`` (b = 0.125).  Acknowledgements arrive at
the rate of the packets sent one round trip ago that were not lost,
``W(t - tau)(1 - p)/R``, and losses at ``W(t - tau) p / R``::

    W'(t) = a W(t - tau) (1 - p(t - d_b)) / R - b W(t) W(t - tau) p(t - d_b) / R

Equilibrium: ``a (1 - p) = b W p``, i.e. ``W = a (1 - p) / (b p)``; for small
``p`` this is Kelly's response ``W = a / (b p) = 0.08 / p``, independent of the
RTT (the MIMD property).  Decreases are capped at one per round trip
(:func:`ecocc.models.loss.loss_events_per_rtt`, inactive when ``W p < 1``).  Links: see :mod:`ecocc.models.loss`.  Slow start and
Kelly's legacy window ``lwnd = 16`` (Reno below it) are not modelled: start
flows above 16 packets.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import NetworkModel
from .loss import LossBasedLink, WindowFlow, LossParams, loss_events_per_rtt, red_equilibrium


@dataclass(frozen=True)
class ScalableParams(LossParams):
    """Scalable TCP parameters (Kelly 2003, Section 2 defaults).

    The RED profile fields come from :class:`LossParams`.

    Parameters
    ----------
    a_pkts_per_ack : window increase per acknowledgement (packets), 0.01
    b : multiplicative decrease per loss event, 0.125

    Raises
    ------
    InputError
        If a value is not finite and positive, ``b >= 1``, or a :class:`LossParams` check fails.
    """

    a_pkts_per_ack: float = 0.01
    b: float = 0.125
    _positive = LossParams._positive + ("a_pkts_per_ack", "b")
    _nonneg = LossParams._nonneg

    def _check(self):
        super()._check()
        from ..errors import check
        check(self.b < 1, "ScalableParams.b", self.b, "a fraction in (0, 1)")


class Scalable(WindowFlow, LossBasedLink, NetworkModel):
    """Scalable TCP (Kelly 2003) as a MIMD fluid model (baseline); see the module docstring."""

    name = "stcp"
    Params = ScalableParams
    description = "Scalable TCP (Kelly 2003) fluid model, MIMD, baseline"

    def flow_law(self, ops, s, fb, own, qdelay, P, st):
        """``W' = a W(t - tau)(1 - p)/R - b W min(W(t - tau) p, 1)/R``, ``R = tau + Q`` (Kelly 2003, Sec. 2).

        Parameters
        ----------
        ops : SimpleNamespace
            As in :meth:`ecocc.models.base.NetworkModel.flow_law`.
        s : dict
            ``s["W"]``: congestion window (packets).
        fb : array_like
            Path loss probability ``p``, one backward delay old (dimensionless).
        own : array_like
            ``W(t - tau)``, the window one propagation RTT ago (packets): the ACK clock.
        qdelay : array_like
            Current queueing delay ``Q`` of the path (s).
        P : ScalableParams
            ``a_pkts_per_ack`` (packets per ACK) and ``b``.
        st : dict
            ``st["rtt"]``: propagation RTT ``tau`` (s).

        Returns
        -------
        dict
            ``{"W": W'}`` (packets/s).
        """
        W = s["W"]
        R = st["rtt"] + qdelay
        return {"W": P.a_pkts_per_ack * own * (1 - fb) / R - P.b * W * loss_events_per_rtt(ops, own, fb) / R}

    def initial_flow_state(self, net, P):
        """A flow starts with the window of its initial rate: ``W = max(x0 tau, 1)``.

        Parameters
        ----------
        net : ecocc.network.Network
            The network (``initial_rate_pps`` x0 in packets/s, ``rtt_s`` tau in s).
        P : ScalableParams
            The parameters (not used).

        Returns
        -------
        dict
            ``{"W": array over the flows}`` (packets, at least 1).
        """
        a = net.arrays
        return {"W": np.maximum(a.initial_rate_pps * a.rtt_s, 1.0)}

    def equilibrium(self, net, P):
        """Single RED link, equal RTTs: ``a (1 - p) = b W p``, ``N W (1-p)/R = C``.

        Solved by :func:`ecocc.models.loss.red_equilibrium`.

        Parameters
        ----------
        net : ecocc.network.Network
            One link, equal propagation RTTs (s), no cross traffic.
        P : ScalableParams
            ``a_pkts_per_ack``, ``b`` and the RED profile (``aqm="red"``).

        Returns
        -------
        dict or None
            ``rate_pps``, ``queue_pkts``, ``window_pkts``, ``loss_probability`` and ``source``
            (see :func:`ecocc.models.loss.red_equilibrium`); None for other networks or tail drop.
        """
        return red_equilibrium(net, P, lambda W, p: P.a_pkts_per_ack * (1 - p) - P.b * W * p,
                               "Scalable TCP fluid equilibrium a(1-p) = b W p (Kelly 2003), RED")
