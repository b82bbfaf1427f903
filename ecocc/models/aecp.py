"""CLTCP / AECP: coupled logistic source and link laws.

Eq. (6) of 001_ceee9933a8b24a34.txt (CLTCP) and of 004_3a45f1aa9a94cd50.txt
(AECP, same model)::

    x_p'(t) = alpha x_p(t) (ln r_p(t - tau_p) - ln x_p(t))
    r_l'(t) = beta r_l(t) (1 - (sum_{p in l} x_p(t) + (q_l(t) - q0)/T) / C_l)
    q_l'(t) = sum_{p in l} x_p(t) - C_l          (q_l kept >= 0)
    r_p(t)  = min_{l in p} r_l(t)

Defaults are the papers' choice alpha = 2 /s, beta = 1 /s, T = 2 s (eq. 43:
beta = alpha/2, T = 4/alpha) and q0 = 100 packets (Section V / 5).

Units: x, r, C in packets/s; q, q0 in packets; T in seconds, so
(q - q0)/T is a rate in packets/s beside C (the reading notes of
``seeds/README.md``).  Eq. (45)-(47) print ``(q(k) - q0)/C`` in one place:
that is a typesetting slip; eq. (47) itself divides by T = 2.

Rates and rate factors are integrated as logarithms (eq. (7) of the papers
does the same change of variables), so they stay positive.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import ModelParams, NetworkModel


@dataclass(frozen=True)
class AECPParams(ModelParams):
    """CLTCP/AECP parameters (eq. 2, 3, 43 of 001/004).

    Parameters
    ----------
    alpha_per_s : source gain alpha (1/s), default 2
    beta_per_s : link gain beta (1/s), default 1
    T_s : queue time constant T (s), default 2
    q0_pkts : target queue q0 (packets), default 100 (a link's
        ``target_queue_pkts`` overrides it)
    r0_pps : rate factor of every link at t = 0 (packets/s); ``None`` means
        the link capacity divided by the number of flows crossing it
        (the papers do not say; see ``initial_link_state``)

    Raises
    ------
    InputError
        If ``alpha_per_s``, ``beta_per_s``, ``T_s`` or a given ``r0_pps`` is not finite and positive, or
        ``q0_pkts`` is not finite and >= 0.
    """

    alpha_per_s: float = 2.0
    beta_per_s: float = 1.0
    T_s: float = 2.0
    q0_pkts: float = 100.0
    r0_pps: float | None = None
    _positive = ("alpha_per_s", "beta_per_s", "T_s")
    _nonneg = ("q0_pkts",)

    def _check(self):
        if self.r0_pps is not None:
            from ..errors import check_finite
            object.__setattr__(self, "r0_pps", check_finite("AECPParams.r0_pps", self.r0_pps, positive=True))


class AECP(NetworkModel):
    """CLTCP/AECP: logistic source rate ``x`` following the path's smallest link rate factor ``r``.

    Eq. (6) of 001 (Sec. III) and 004 (Sec. 3); see the module docstring for the equations and units.
    """

    name = "aecp"
    Params = AECPParams
    flow_states = ("x",)
    flow_log = (True,)
    link_states = ("r",)
    link_log = (True,)
    path_aggregate = "min"
    description = "CLTCP/AECP coupled logistic model, eq. (6) of 001/004"

    def flow_rate(self, ops, s, qdelay, P, st):
        """Sending rate: the source state ``x_p`` itself (eq. 6 of 001/004).

        Parameters
        ----------
        ops, s, qdelay, P, st
            As in :meth:`ecocc.models.base.NetworkModel.flow_rate`; ``s["x"]`` is the rate (packets/s);
            ``qdelay`` is not used (a rate-based sender).

        Returns
        -------
        array_like
            ``x_p`` (packets/s).
        """
        return s["x"]

    def link_signal(self, ops, ls, q, y, C, P, lst):
        """The link's pre-assignment rate factor ``r_l`` (eq. 2 of 001); flows take the min over the path (eq. 4).

        Parameters
        ----------
        ops, ls, q, y, C, P, lst
            As in :meth:`ecocc.models.base.NetworkModel.link_signal`; ``ls["r"]`` is the rate factor
            (packets/s); ``q``, ``y``, ``C`` are not used.

        Returns
        -------
        array_like
            ``r_l`` (packets/s), one backward delay old when it reaches the flow.
        """
        return ls["r"]

    def flow_law(self, ops, s, fb, own, qdelay, P, st):
        """Source law of eq. (6) of 001/004 (eq. 3 of 001): ``x_p' = alpha x_p (ln r_p(t - tau_p) - ln x_p)``.

        Parameters
        ----------
        ops, s, own, qdelay, P, st
            As in :meth:`ecocc.models.base.NetworkModel.flow_law`; ``s["x"]`` is the rate (packets/s);
            ``own`` and ``qdelay`` are not used.
        fb : array_like
            ``r_p(t - tau_p) = min_{l in p} r_l``, each link's factor one backward delay old (packets/s).

        Returns
        -------
        dict
            ``{"x": x_p'}`` (packets/s per second).
        """
        x = s["x"]
        return {"x": P.alpha_per_s * x * (ops.log(fb) - ops.log(x))}

    def link_law(self, ops, ls, q, y, C, P, lst):
        """Link law of eq. (6) of 001/004 (eq. 2 of 001): ``r_l' = beta r_l (1 - (y_l + (q_l - q0)/T)/C_l)``.

        Parameters
        ----------
        ops, ls, P
            As in :meth:`ecocc.models.base.NetworkModel.link_law`; ``ls["r"]`` is the rate factor
            (packets/s).
        q : array_like
            Queue (packets).
        y : array_like
            Current arrival rate ``sum_{p in l} x_p`` plus cross traffic (packets/s).
        C : array_like
            Capacity (packets/s).
        lst : dict
            ``lst["q0"]``: target queue of each link (packets), from :meth:`link_static`.

        Returns
        -------
        dict
            ``{"r": r_l'}`` (packets/s per second).
        """
        r = ls["r"]
        return {"r": P.beta_per_s * r * (1 - (y + (q - lst["q0"]) / P.T_s) / C)}

    def link_static(self, net, P):
        """Target queue ``q0`` of each link: the link's ``target_queue_pkts``, else ``P.q0_pkts``.

        Parameters
        ----------
        net : ecocc.network.Network
            The network.
        P : AECPParams
            The parameters.

        Returns
        -------
        dict
            ``{"q0": array over the links}`` (packets).
        """
        tq = net.arrays.target_queue_pkts
        return {"q0": np.where(np.isnan(tq), P.q0_pkts, tq)}

    def initial_flow_state(self, net, P):
        """A flow starts at its initial rate: ``x = initial_rate_pps``.

        Parameters
        ----------
        net : ecocc.network.Network
            The network (``net.arrays.initial_rate_pps``, packets/s).
        P : AECPParams
            The parameters (not used).

        Returns
        -------
        dict
            ``{"x": array over the flows}`` (packets/s).
        """
        return {"x": net.arrays.initial_rate_pps}

    def initial_link_state(self, net, P):
        """Rate factor at t = 0: ``P.r0_pps``, or ``C_l`` divided by the number of flows routed through the link.

        The papers do not give ``r_l(0)``; the default is the equal share of all flows routed through the
        link (counting flows that start later), at least one.

        Parameters
        ----------
        net : ecocc.network.Network
            The network (capacities in packets/s).
        P : AECPParams
            The parameters (``r0_pps``).

        Returns
        -------
        dict
            ``{"r": array over the links}`` (packets/s).
        """
        a = net.arrays
        if P.r0_pps is not None:
            return {"r": np.full(net.n_links, P.r0_pps)}
        nflows = np.bincount(a.pair_link, minlength=net.n_links)
        return {"r": a.capacity_pps / np.maximum(nflows, 1)}

    def equilibrium(self, net, P):
        """Eq. (16) of 001/004: x* = r* = C/N, q* = q0 on a single bottleneck.

        On a general network the equilibrium is the max-min fair allocation
        (the papers' parking-lot claim); computed by progressive filling,
        with q* = q0 on saturated links and 0 elsewhere.  Constant cross
        traffic is subtracted from the capacity it crosses; a link with
        time-varying cross traffic gives NaN rates to the flows crossing it.

        Parameters
        ----------
        net : ecocc.network.Network
            The network (capacities and cross traffic in packets/s).
        P : AECPParams
            The parameters (``q0_pkts``, unless a link sets ``target_queue_pkts``).

        Returns
        -------
        dict
            ``rate_pps`` (per flow, packets/s), ``queue_pkts`` (per link, packets), ``saturated`` (bool
            per link) and ``source``.
        """
        from .fairness import max_min_fair_pairs
        a = net.arrays
        rates, saturated = max_min_fair_pairs(a.pair_link, a.pair_flow, net.n_links, net.n_flows,
                                              a.capacity_pps - _mean_cross(net))
        q0 = self.link_static(net, P)["q0"]
        return {"rate_pps": rates, "queue_pkts": np.where(saturated, q0, 0.0),
                "saturated": saturated,
                "source": "eq. (16) of 001/004 (x* = r* = C/N, q* = q0); max-min fair on networks"}


def _mean_cross(net):
    out = np.zeros(net.n_links)
    for c in net.cross_traffic:
        times, rates = c.piecewise(1.0)
        if times.size == 1:
            out[net.link_index(c.link)] += rates[0]
        else:
            out[net.link_index(c.link)] = np.nan  # time-varying: no single equilibrium
    return out
