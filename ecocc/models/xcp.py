"""XCP (Katabi, Handley & Rohrs, "Congestion control for high
bandwidth-delay product networks", SIGCOMM 2002) as a fluid model.

Router, once per control interval ``d`` (the flows' mean RTT), Section 3.5:
aggregate feedback ``phi = alpha d S - beta Q`` (``S = C - y`` spare
bandwidth, ``Q`` the persistent queue; alpha = 0.4, beta = 0.226), shuffled
traffic ``h = max(0, gamma_s y d - |phi|)`` (gamma_s = 0.1); the positive part
``h + max(phi, 0)`` is shared so that every flow gets the same throughput
increase, the negative part ``h + max(-phi, 0)`` in proportion to the flows'
rates (Section 3.5, fairness controller).  In rates, per control interval
``d``, following the fluid models of the XCP paper (Section 4 and its
Appendix: ``y' = -(alpha/d)(y - C) - (beta/d^2) q``) and of Low, Andrew &
Wydrowski ("Understanding XCP: equilibrium and fairness", INFOCOM 2005)::

    x_i'(t) = min_{l in i} [ (h_l + phi_l^+) / N_l - (h_l + phi_l^-) x_i / y_l ] / d_l^2

whose sum over the flows of a link is ``phi_l / d_l^2``: the efficiency
controller.  The sender never lets its window fall below one packet, ``cwnd =
max(cwnd + H_feedback, s)`` (Section 3.3): in rates, a flow at or below one
packet per round trip, ``x_i (rtt_i + qdelay_i) <= 1``, takes no further
decrease (``x_i' = max(feedback, 0)`` there).  Without this floor the law
has no positive lower bound: on a link whose persistent queue keeps ``phi < 0``
(``q > alpha d C / beta``) while its arrival ``y`` falls, the decrease rate of
``ln x_i``, ``(h + phi^-)/(y d^2)``, grows without bound and ``ln x_i`` leaves
the floating-point range within a few round trips (docs/notes/xcpfail.md).

Feedback reaches a flow only through its own packets (Section 3.3: the
router writes the feedback into the congestion header of each packet of the
flow, and the receiver returns it in the ACK).  So flow ``i`` gets no feedback
from link ``l`` until its own traffic has reached ``l`` at the time the
feedback was computed -- the pair extra ``self_seen``: flow ``i`` active at
``t - d_b(l, i) - d_f(l, i)`` -- and by then the router's count ``N_l`` includes
it.  Before, a flow keeps its initial rate (its first feedback arrives one
round trip after its start).  Without this rule every flow would get the
whole ``(h + phi^+)/N_l`` from the moment it starts, while ``N_l`` counts only
the flows whose traffic the link has seen: at a common start with spread RTTs
the link has seen one flow and all ``N`` get its share, ``N`` times the
aggregate increase ``phi/d^2`` of the efficiency controller (measured: 100
flows on 15,000 packets/s reached 477,000 packets/s in 0.3 s;
docs/notes/xcpstart.md).

Equilibrium on one link: ``y = C`` and ``q = 0`` (``phi = 0`` needs both,
since ``q' = y - C``), each flow ``C/N`` (shuffling).  A packet
carries the smallest feedback of the links it crosses (Section 3.3): the
``min`` over the path.

Choices, stated: the link sees ``y``, ``q`` and the number of active flows
``N_l`` one backward delay late (what reaches the sender) and the flow's own
rate now; ``d_l`` is the mean propagation RTT of the flows routed through
the link (constant; XCP measures the mean RTT including queueing, which is
zero at equilibrium); the persistent queue ``Q`` is the fluid queue; the
router computes continuously instead of once per ``d``; the window floor
uses the propagation RTT plus the current queueing delay of the path, and it
only stops decreases (a flow whose initial rate is below it starts there).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import ModelParams, NetworkModel


@dataclass(frozen=True)
class XCPParams(ModelParams):
    """XCP parameters (Katabi et al. 2002, Section 3.5 and Theorem 1).

    Parameters
    ----------
    alpha : efficiency-controller gain on spare bandwidth, 0.4
    beta : gain on the persistent queue, 0.226 (= sqrt(2) alpha^2)
    shuffle : fraction gamma_s of the traffic reallocated per interval, 0.1

    Raises
    ------
    InputError
        If ``alpha`` or ``beta`` is not finite and positive, or ``shuffle`` is not finite and >= 0.
    """

    alpha: float = 0.4
    beta: float = 0.226
    shuffle: float = 0.1
    _positive = ("alpha", "beta")
    _nonneg = ("shuffle",)


class XCP(NetworkModel):
    """XCP (Katabi, Handley & Rohrs 2002) as a rate fluid model with explicit feedback (baseline).

    See the module docstring for the law and the modelling choices.
    """

    name = "xcp"
    Params = XCPParams
    flow_states = ("x",)
    # the rate itself, not its logarithm: a flow's start-up ramp (10 to thousands of packets/s, additive) is a
    # straight line in x but a logarithm in ln x, which the solvers followed with ~100 steps per flow; the window
    # floor keeps x above one packet per round trip (docs/notes/natstate.md)
    flow_log = (False,)
    path_aggregate = "min"
    signal_uses_arrival = True
    pair_extras = ("n_active", "rate", "self_seen")
    description = "XCP (Katabi, Handley, Rohrs 2002) fluid model, explicit feedback, baseline"

    def flow_rate(self, ops, s, qdelay, P, st):
        """Sending rate: the flow state ``x_i`` itself.

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

    def link_static(self, net, P):
        """Control interval ``d_l`` of each link: the mean propagation RTT of the flows routed through it.

        A link no flow crosses gets 0.1 s (never used).

        Parameters
        ----------
        net : ecocc.network.Network
            The network (RTTs in s); the symbolic layer's one-link stand-in gives every flow's RTT.
        P : XCPParams
            The parameters (not used).

        Returns
        -------
        dict
            ``{"d": array over the links}`` (s).
        """
        a = net.arrays
        if not hasattr(a, "routing"):  # the symbolic layer's one-link stand-in: every flow has RTT tau
            return {"d": a.rtt_s}
        R = a.routing.tocsr()
        d = np.array([a.rtt_s[R.indices[R.indptr[l]:R.indptr[l + 1]]].mean() if R.indptr[l + 1] > R.indptr[l]
                      else 0.1 for l in range(net.n_links)])
        return {"d": d}

    def link_signal(self, ops, ls, q, y, C, P, lst):
        """Per-flow rate feedback of the link: ``s_i [(h + phi^+)/N_l - (h + phi^-) x_i/y_l] / d_l^2``.

        Katabi et al. 2002, Section 3.5: aggregate feedback ``phi = alpha d (C - y) - beta q``
        (efficiency controller), shuffled traffic ``h = max(0, gamma_s y d - |phi|)``; the positive part
        is shared equally, the negative part in proportion to the rates (fairness controller).  Summed
        over the flows of a link this is ``phi/d^2``, the Section 4 fluid model
        ``y' = -(alpha/d)(y - C) - (beta/d^2) q``.  ``s_i`` (``self_seen``) is 1 once the flow's own
        traffic is in the load the link computed the feedback from, 0 before: the feedback travels in the
        congestion header of the flow's own packets and returns in its ACKs (Section 3.3), so a flow whose
        packets had not reached the link gets none -- and a flow that gets feedback is among the ``N_l``
        it is shared by.

        Parameters
        ----------
        ops, ls
            As in :meth:`ecocc.models.base.NetworkModel.link_signal` (``ls`` not used).
        q : array_like
            Persistent queue ``Q`` (packets), one backward delay old.
        y : array_like
            Arrival rate including cross traffic (packets/s), same delay.
        C : array_like
            Capacity (packets/s).
        P : XCPParams
            ``alpha``, ``beta``, ``shuffle``.
        lst : dict
            ``d``: control interval (s); ``n_active``: active flows on the link, same delay as ``y``;
            ``rate``: the flow's current rate ``x_i`` (packets/s); ``self_seen``: 1.0 if the flow itself is
            among those ``n_active`` (active at ``t - d_b - d_f`` of the pair), else 0.0.  Per (link, flow)
            pair.

        Returns
        -------
        array_like
            Rate change the link asks of the flow (packets/s per second); flows take the min over the
            path (Section 3.3).
        """
        d, n, x, seen = lst["d"], lst["n_active"], lst["rate"], lst["self_seen"]
        phi = P.alpha * d * (C - y) - P.beta * q
        h = ops.maximum(0.0 * phi, P.shuffle * y * d - ops.maximum(phi, -phi))
        pos = h + ops.maximum(phi, 0.0 * phi)
        neg = h + ops.maximum(-phi, 0.0 * phi)
        return seen * (pos / ops.maximum(n, 1.0) - neg * x / ops.maximum(y, 1e-9)) / (d * d)

    def flow_law(self, ops, s, fb, own, qdelay, P, st):
        """``x_i' = min_{l in i} feedback_l``: the flow applies the smallest feedback on its path.

        Down to one packet per round trip only (the sender's ``cwnd = max(cwnd + H_feedback, s)``,
        Katabi et al. 2002, Section 3.3): where ``x_i (rtt_i + qdelay_i) <= 1`` the flow takes
        ``max(feedback, 0)``.  The symbolic layer's linearization keeps the branch above the floor (the
        equilibrium ``C/N`` lies there).

        Parameters
        ----------
        ops, own, P
            As in :meth:`ecocc.models.base.NetworkModel.flow_law` (not used).
        s : dict
            ``s["x"]``: the rate (packets/s).
        fb : array_like
            Smallest per-flow feedback of :meth:`link_signal` on the path (packets/s per second).
        qdelay : array_like
            Current queueing delay of the flow's path (s).
        st : dict
            ``rtt``: propagation round-trip time of each flow (s).

        Returns
        -------
        dict
            ``{"x": fb}`` above the floor, ``{"x": max(fb, 0)}`` at or below it (packets/s per second).
        """
        x = s["x"]
        if getattr(ops, "lib", "") == "sympy" and not getattr(ops, "exact", False):
            # linearization: the equilibrium (C/N per flow) lies above the one-packet floor
            return {"x": fb}
        # the sender's window floor, cwnd = max(cwnd + H_feedback, s) (Katabi et al. 2002, Section 3.3): a
        # rate at or below one packet per round trip takes no further decrease
        return {"x": ops.where(x * (st["rtt"] + qdelay) > 1.0, fb, ops.maximum(fb, 0.0 * fb))}

    def initial_flow_state(self, net, P):
        """A flow starts at its initial rate: ``x = initial_rate_pps``.

        Parameters
        ----------
        net : ecocc.network.Network
            The network (``net.arrays.initial_rate_pps``, packets/s).
        P : XCPParams
            The parameters (not used).

        Returns
        -------
        dict
            ``{"x": array over the flows}`` (packets/s).
        """
        return {"x": net.arrays.initial_rate_pps}

    def equilibrium(self, net, P):
        """Single link, constant cross traffic ``c``: ``x_i = (C - c)/N``, ``q = 0``.

        ``phi = 0`` needs ``y = C`` and ``q = 0`` (since ``q' = y - C``); shuffling equalizes the shares.

        Parameters
        ----------
        net : ecocc.network.Network
            The network (capacity and cross traffic in packets/s).
        P : XCPParams
            The parameters (the equilibrium does not depend on them).

        Returns
        -------
        dict or None
            ``rate_pps`` (per flow, packets/s), ``queue_pkts`` (``[0.0]``, packets) and ``source``; None for
            more than one link, time-varying cross traffic or ``c >= C``.
        """
        if net.n_links != 1:
            return None
        from .aecp import _mean_cross
        C, c = net.arrays.capacity_pps[0], _mean_cross(net)[0]
        if not np.isfinite(c) or c >= C:
            return None
        N = net.n_flows
        return {"rate_pps": np.full(N, (C - c) / N), "queue_pkts": np.array([0.0]),
                "source": "XCP equilibrium: full utilization, zero queue, equal shares (Katabi et al. 2002)"}
