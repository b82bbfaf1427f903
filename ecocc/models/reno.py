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
    """TCP Reno in the Misra-Gong-Towsley fluid form (baseline); see the module docstring."""

    name = "reno"
    Params = RenoParams
    description = "TCP Reno fluid model (Misra-Gong-Towsley), baseline"

    def flow_law(self, ops, s, fb, own, qdelay, P, st):
        """MGT eq. (1) (SIGCOMM 2000): ``W' = 1/R - W min(W(t - tau) p, 1) / (2 R)``, ``R = tau + Q``.

        Parameters
        ----------
        ops, P
            As in :meth:`ecocc.models.base.NetworkModel.flow_law` (``ops`` for the cap).
        s : dict
            ``s["W"]``: congestion window (packets).
        fb : array_like
            Path loss probability ``p = sum_l p_l``, one backward delay old (dimensionless).
        own : array_like
            ``W(t - tau)``, the window one propagation RTT ago (packets).
        qdelay : array_like
            Current queueing delay ``Q`` of the path (s).
        st : dict
            ``st["rtt"]``: propagation RTT ``tau`` (s).

        Returns
        -------
        dict
            ``{"W": W'}`` (packets/s).
        """
        W = s["W"]
        R = st["rtt"] + qdelay
        return {"W": 1.0 / R - W * loss_events_per_rtt(ops, own, fb) / (2.0 * R)}

    def initial_flow_state(self, net, P):
        """A flow starts with the window of its initial rate: ``W = max(x0 tau, 1)``.

        Parameters
        ----------
        net : ecocc.network.Network
            The network (``initial_rate_pps`` x0 in packets/s, ``rtt_s`` tau in s).
        P : RenoParams
            The parameters (not used).

        Returns
        -------
        dict
            ``{"W": array over the flows}`` (packets, at least 1).
        """
        a = net.arrays
        return {"W": np.maximum(a.initial_rate_pps * a.rtt_s, 1.0)}

    def equilibrium(self, net, P):
        """Single RED link, N flows of one RTT: W*^2 p(q*) = 2, N W* (1 - p)/R* = C.

        The zero of the flow law with ``W(t - tau) = W`` and ``W p < 1`` (cap inactive), solved by
        :func:`ecocc.models.loss.red_equilibrium`.

        Parameters
        ----------
        net : ecocc.network.Network
            One link, equal propagation RTTs (s), no cross traffic.
        P : RenoParams
            The RED profile (``aqm="red"``).

        Returns
        -------
        dict or None
            ``rate_pps``, ``queue_pkts``, ``window_pkts``, ``loss_probability`` and ``source``
            (see :func:`ecocc.models.loss.red_equilibrium`); None for other networks or tail drop.
        """
        return red_equilibrium(net, P, lambda W, p: 2.0 - W * W * p,
                               "Reno fluid model equilibrium (W^2 p = 2, N W (1-p)/R = C), RED")
