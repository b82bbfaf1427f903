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

    Parameters
    ----------
    epsilon_per_s : intrinsic growth rate eps (1/s)
    gamma : competition coefficient (0 < gamma < 1 for coexistence, eq. 4)
    available : "paper" (eq. 17) or "measured"
    rate : "window" or "propagation"

    Raises
    ------
    InputError
        If ``epsilon_per_s`` is not finite and positive, ``gamma`` not finite and >= 0, or a choice is not
        one of those listed.
    """

    epsilon_per_s: float = 1.95
    gamma: float = 0.9
    available: str = "paper"
    rate: str = "window"
    _positive = ("epsilon_per_s",)
    _nonneg = ("gamma",)
    CHOICES = {"available": ("paper", "measured"), "rate": ("window", "propagation")}


class Symbiosis(NetworkModel):
    """TCP Symbiosis: Lotka-Volterra window law driven by available bandwidth, eq. (8)-(9) of 002.

    See the module docstring for the equations and the choices the paper leaves open.
    """

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
        """Sending rate: ``w/(tau + Q)`` (``rate="window"``) or ``w/tau`` (``rate="propagation"``, eq. 18).

        Parameters
        ----------
        ops : SimpleNamespace
            As in :meth:`ecocc.models.base.NetworkModel.flow_rate` (not used).
        s : dict
            ``s["w"]``: congestion window (packets).
        qdelay : array_like
            Current queueing delay ``Q`` of the path (s).
        P : SymbiosisParams
            ``rate`` selects the form.
        st : dict
            ``st["rtt"]``: propagation RTT ``tau`` (s).

        Returns
        -------
        array_like
            Sending rate (packets/s).
        """
        if P.rate == "window":
            return s["w"] / (st["rtt"] + qdelay)
        return s["w"] / st["rtt"]

    def flow_load(self, ops, s, qdelay, P, st):
        """Load a link signals on: ``w_k/tau_k`` (eq. 17, ``available="paper"``) or the sending rate.

        Parameters
        ----------
        ops, s, qdelay, P, st
            As in :meth:`flow_rate`; ``P.available`` selects the form.

        Returns
        -------
        array_like
            The flow's share of the link load (packets/s).
        """
        if P.available == "paper":
            return s["w"] / st["rtt"]
        return self.flow_rate(ops, s, qdelay, P, st)

    def own_load(self, ops, s, P, st):
        """The flow's own ``w_i/tau_i``, added back to the link's spare capacity (eq. 17 excludes k = i).

        Parameters
        ----------
        ops, P
            As in :meth:`ecocc.models.base.NetworkModel.own_load` (not used).
        s : dict
            ``s["w"]``: window (packets), one propagation RTT old when the system passes it.
        st : dict
            ``st["rtt"]``: propagation RTT ``tau`` (s).

        Returns
        -------
        array_like
            ``w_i/tau_i`` (packets/s).
        """
        return s["w"] / st["rtt"]

    def link_signal(self, ops, ls, q, y, C, P, lst):
        """Spare capacity ``C_l - y_l``, with ``y_l = c_l + sum_k w_k/tau_k`` (or the arrival rate if measured).

        Parameters
        ----------
        ops, ls, q, P, lst
            As in :meth:`ecocc.models.base.NetworkModel.link_signal` (not used).
        y : array_like
            Load of the link including cross traffic (packets/s), one backward delay old.
        C : array_like
            Capacity (packets/s).

        Returns
        -------
        array_like
            Spare capacity (packets/s; negative when oversubscribed); flows take the min over the path.
        """
        return C - y  # spare capacity left by the load

    def flow_law(self, ops, s, fb, own, qdelay, P, st):
        """Eq. (9) of 002 (Sec. II-B): ``w_i' = eps (1 - (w_i + gamma (K_i - A_i) tau_i)/(K_i tau_i)) w_i``.

        The available bandwidth is ``A_i = min(K_i, fb + own)``: the path's smallest spare capacity
        plus the flow's own ``w_i/tau_i`` (eq. 17: ``K - A_i = sum_{k != i} w_k/tau_k``), capped at ``K_i``.

        Parameters
        ----------
        ops : SimpleNamespace
            As in :meth:`ecocc.models.base.NetworkModel.flow_law`.
        s : dict
            ``s["w"]``: congestion window (packets).
        fb : array_like
            Smallest spare capacity on the path, one backward delay old (packets/s).
        own : array_like
            ``w_i/tau_i`` one propagation RTT ago (packets/s), see :meth:`own_load`.
        qdelay : array_like
            Not used.
        P : SymbiosisParams
            ``epsilon_per_s`` (1/s) and ``gamma``.
        st : dict
            ``st["K"]``: physical bandwidth ``K_i`` (packets/s); ``st["rtt"]``: ``tau_i`` (s).

        Returns
        -------
        dict
            ``{"w": w_i'}`` (packets/s).
        """
        w, K, tau = s["w"], st["K"], st["rtt"]
        A = ops.minimum(K, fb + own)
        return {"w": P.epsilon_per_s * (1 - (w + P.gamma * (K - A) * tau) / (K * tau)) * w}

    def initial_flow_state(self, net, P):
        """A flow starts with the window of its initial rate over its propagation RTT: ``w = x0 tau``.

        Parameters
        ----------
        net : ecocc.network.Network
            The network (``initial_rate_pps`` x0 in packets/s, ``rtt_s`` tau in s).
        P : SymbiosisParams
            The parameters (not used).

        Returns
        -------
        dict
            ``{"w": array over the flows}`` (packets).
        """
        a = net.arrays
        return {"w": a.initial_rate_pps * a.rtt_s}

    def equilibrium(self, net, P):
        """Equilibrium of the flow law on one link, for any physical bandwidths K_i.

        Derived in ``proofs/symbiosis_equilibrium.py`` from the law itself
        (eq. 9 with A_i = min(K_i, C - c - sum_k u_k + u_i), u_k = w_k/tau_k):

        * a surviving flow has u_i = (1 - gamma) K_i + gamma A_i (eq. 11);
        * link not oversubscribed (sum K_i + c <= C): every A_i is capped at
          K_i and u_i = K_i, no queue;
        * otherwise no A_i is capped: u_i = K_i - gamma D with
          D = (sum_I K - (C - c)) / (1 - gamma + m gamma) over the m
          survivors I; a flow with K_j <= gamma D dies out (w_j -> 0: it
          cannot invade), so I is the set of the m largest K with positive u;
        * equal K = C and c = 0 give eq. (19)-(20).

        ``available="measured"`` (A from the actual arrival rates): u_i = K_i
        for every flow; when sum K_i + c > C the queue alone balances the load.
        The queue solves sum_i w_i/(tau_i + q/C) = C - c (``rate="window"``);
        with ``rate="propagation"`` an oversubscribed link has an unbounded
        queue (``inf``).  ``gamma >= 1`` (no coexistence, eq. 4) or
        time-varying cross traffic: ``None``.

        Parameters
        ----------
        net : ecocc.network.Network
            One link; capacity ``C``, constant cross traffic ``c`` and physical bandwidths ``K_i``
            in packets/s, RTTs ``tau_i`` in s.
        P : SymbiosisParams
            ``gamma``, ``available`` and ``rate``.

        Returns
        -------
        dict or None
            ``rate_pps`` (packets/s actually sent), ``window_pkts`` (packets), ``queue_pkts`` (shape (1,),
            packets), ``survives`` (bool per flow), ``capped`` (A_i = K_i at equilibrium) and ``source``;
            None for more than one link, ``gamma >= 1`` or time-varying cross traffic.
        """
        if net.n_links != 1 or not (P.gamma < 1):
            return None
        from scipy.optimize import brentq
        from .aecp import _mean_cross
        a = net.arrays
        C, c = float(a.capacity_pps[0]), float(_mean_cross(net)[0])
        if not np.isfinite(c):
            return None
        K = np.asarray(a.physical_bw_pps, dtype=float)
        tau = np.asarray(a.rtt_s, dtype=float)
        n, g = net.n_flows, P.gamma
        oversubscribed = K.sum() + c > C
        survives = np.ones(n, dtype=bool)
        if not oversubscribed or P.available == "measured":
            u = K.copy()
            capped = np.full(n, not oversubscribed)
        else:
            order = np.argsort(-K, kind="stable")
            survives = np.zeros(n, dtype=bool)
            D = 0.0
            for m in range(n, 0, -1):
                top = order[:m]
                D = (K[top].sum() - (C - c)) / (1 - g + m * g)
                if K[top].min() - g * D > 0:
                    survives[top] = True
                    break
            # no survivor (cross traffic c >= C leaves nothing): every window dies out
            u = np.where(survives, K - g * D, 0.0)
            capped = np.zeros(n, dtype=bool)
        w = u * tau
        if not oversubscribed:
            q, rates = 0.0, u
        elif P.rate == "window":
            excess = lambda q: np.sum(w / (tau + q / C)) + c - C  # noqa: E731
            # sum w/(tau + q/C) < C sum w / q: the root lies below C sum(w)/(C - c)
            q = (np.inf if c >= C else brentq(excess, 0.0, C * np.sum(w) / (C - c), xtol=1e-12, rtol=1e-14)
                 if excess(0.0) > 0 else 0.0)
            rates = w / (tau + q / C)
        else:
            q, rates = np.inf, u
        return {"rate_pps": rates, "queue_pkts": np.array([q]), "window_pkts": w, "survives": survives,
                "capped": capped,
                "source": "flow law of eq. (9), (17) of 002 solved for unequal K_i "
                          "(proofs/symbiosis_equilibrium.py); equal K: eq. (11), (19)-(20)"}
