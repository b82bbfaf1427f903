"""TCP Reno baseline: the standard fluid model of Misra, Gong & Towsley.

Misra, Gong & Towsley, "Fluid-based analysis of a network of AQM routers
supporting TCP flows", SIGCOMM 2000, eq. (1)::

    W_i'(t) = 1/R_i(t) - W_i(t) W_i(t - tau_i) p_i(t - d_b) / (2 R_i(t))
    R_i(t)  = tau_i + sum_{l in i} q_l(t)/C_l,    x_i = W_i / R_i

with ``p_i = sum_{l in i} p_l`` (small-loss approximation of
``1 - prod(1 - p_l)``).  Simplifications, stated: the delay of the loss
signal is the propagation RTT (constant), and ``R(t - R)`` in the
original is replaced by ``R(t)``.  Loss ``p_l``: see :mod:`ecocc.models.loss`
(RED drops are taken out of the queue's input and counted as lost; MGT's
queue equation ignores them, which differs by the factor ``1 - p``).
Decreases are capped at one per round trip (``min(W(t - tau) p, 1)``, see
:func:`ecocc.models.loss.loss_events_per_rtt`; inactive at RED equilibria).
Timeouts and slow start are not modelled.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import NetworkModel
from .loss import LossBasedLink, WindowFlow, LossParams, loss_events_per_rtt, red_equilibrium, red_probability  # noqa: F401 (re-export)


@dataclass(frozen=True)
class RenoParams(LossParams):
    """Reno fluid-model parameters (queue management only, see :class:`LossParams`)."""


class Reno(WindowFlow, LossBasedLink, NetworkModel):
    name = "reno"
    Params = RenoParams
    description = "TCP Reno fluid model (Misra-Gong-Towsley), baseline"

    def flow_law(self, ops, s, fb, own, qdelay, P, st):
        W = s["W"]
        R = st["rtt"] + qdelay
        return {"W": 1.0 / R - W * loss_events_per_rtt(ops, own, fb) / (2.0 * R)}

    def initial_flow_state(self, net, P):
        a = net.arrays
        return {"W": np.maximum(a.initial_rate_pps * a.rtt_s, 1.0)}

    def equilibrium(self, net, P):
        """Single RED link, N flows of one RTT: W*^2 p(q*) = 2, N W* (1 - p)/R* = C."""
        return red_equilibrium(net, P, lambda W, p: 2.0 - W * W * p,
                               "Reno fluid model equilibrium (W^2 p = 2, N W (1-p)/R = C), RED")
