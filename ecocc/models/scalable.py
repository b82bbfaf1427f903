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

    a_pkts_per_ack : window increase per acknowledgement (packets), 0.01
    b : multiplicative decrease per loss event, 0.125
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
    name = "stcp"
    Params = ScalableParams
    description = "Scalable TCP (Kelly 2003) fluid model, MIMD, baseline"

    def flow_law(self, ops, s, fb, own, qdelay, P, st):
        W = s["W"]
        R = st["rtt"] + qdelay
        return {"W": P.a_pkts_per_ack * own * (1 - fb) / R - P.b * W * loss_events_per_rtt(ops, own, fb) / R}

    def initial_flow_state(self, net, P):
        a = net.arrays
        return {"W": np.maximum(a.initial_rate_pps * a.rtt_s, 1.0)}

    def equilibrium(self, net, P):
        """Single RED link, equal RTTs: ``a (1 - p) = b W p``, ``N W (1-p)/R = C``."""
        return red_equilibrium(net, P, lambda W, p: P.a_pkts_per_ack * (1 - p) - P.b * W * p,
                               "Scalable TCP fluid equilibrium a(1-p) = b W p (Kelly 2003), RED")
