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

    Parameters
    ----------
    a_pps2 : additive increase a (packets/s per second); 125 = 1 Mbps/s at
        1000-byte packets
    b_per_s : multiplicative gain b (1/s)
    T_s : queue time constant T (s)
    delayed_feedback : whether the sender sees X and q one backward delay late

    Raises
    ------
    InputError
        If ``a_pps2``, ``b_per_s`` or ``T_s`` is not finite and positive, or ``delayed_feedback`` is not
        a bool.
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
    """PE-TCP: logistic rate growth with an additive term, eq. (4)-(5) of 000 (Sec. 3.1).

    See the module docstring for the equations, units and the delay and multi-link choices.
    """

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
        """Sending rate: the source state ``x_i`` itself (eq. 4 of 000).

        Parameters
        ----------
        ops, s, qdelay, P, st
            As in :meth:`ecocc.models.base.NetworkModel.flow_rate`; ``s["x"]`` is the rate (packets/s);
            ``qdelay`` is not used.

        Returns
        -------
        array_like
            ``x_i`` (packets/s).
        """
        return s["x"]

    def link_signal(self, ops, ls, q, y, C, P, lst):
        """Normalised load ``rho_l = (y_l + q_l/T)/C_l``, the bracket of eq. (4) of 000 (``(X + q/T)/B``).

        Parameters
        ----------
        ops, ls, lst
            As in :meth:`ecocc.models.base.NetworkModel.link_signal` (not used).
        q : array_like
            Queue (packets), one backward delay old when ``delayed_feedback``.
        y : array_like
            Arrival rate X including cross traffic (packets/s), same delay.
        C : array_like
            Capacity B (packets/s).
        P : PETCPParams
            ``T_s`` (s).

        Returns
        -------
        array_like
            ``rho_l`` (dimensionless); flows take the max over their path.
        """
        return (y + q / P.T_s) / C

    def flow_law(self, ops, s, fb, own, qdelay, P, st):
        """Eq. (4) of 000 (Sec. 3.1): ``x_i' = a + b x_i (1 - rho)`` with ``rho = (X + q/T)/B``.

        Parameters
        ----------
        ops, s, own, qdelay, P, st
            As in :meth:`ecocc.models.base.NetworkModel.flow_law`; ``s["x"]`` is the rate (packets/s);
            ``own`` and ``qdelay`` are not used.
        fb : array_like
            ``rho``: the largest normalised load on the path (dimensionless), see :meth:`link_signal`.

        Returns
        -------
        dict
            ``{"x": x_i'}`` (packets/s per second).
        """
        x = s["x"]
        return {"x": P.a_pps2 + P.b_per_s * x * (1 - fb)}

    def initial_flow_state(self, net, P):
        """A flow starts at its initial rate: ``x = initial_rate_pps``.

        Parameters
        ----------
        net : ecocc.network.Network
            The network (``net.arrays.initial_rate_pps``, packets/s).
        P : PETCPParams
            The parameters (not used).

        Returns
        -------
        dict
            ``{"x": array over the flows}`` (packets/s).
        """
        return {"x": net.arrays.initial_rate_pps}

    def equilibrium(self, net, P):
        """Theorem 1 of 000 (Sec. 4.1), single link: x* = (C - c)/N, q* = a T C N / (b (C - c)).

        With no cross traffic (c = 0) this is the paper's x* = B/N,
        q* = a T N / b.  With constant cross traffic c the bracket of eq. (4)
        is ``-q/(T C)`` at full utilization, so ``a = b x* q*/(T C)``.

        Parameters
        ----------
        net : ecocc.network.Network
            The network (capacity and cross traffic in packets/s).
        P : PETCPParams
            ``a_pps2``, ``b_per_s``, ``T_s``.

        Returns
        -------
        dict or None
            ``rate_pps`` (per flow, packets/s), ``queue_pkts`` (shape (1,), packets) and ``source``;
            None for more than one link, time-varying cross traffic or ``c >= C``.
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
