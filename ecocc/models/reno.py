"""TCP Reno baseline: the standard fluid model of Misra, Gong & Towsley.

    W_i'(t) = 1/R_i(t) - W_i(t) W_i(t - tau_i) p_i(t - d_b) / (2 R_i(t))
    R_i(t)  = tau_i + sum_{l in i} q_l(t)/C_l,    x_i = W_i / R_i

with ``p_i = sum_{l in i} p_l`` (small-loss approximation of
``1 - prod(1 - p_l)``).  Simplifications, stated: the delay of the loss
signal is the propagation RTT (constant), and ``R(t - R)`` in the
original is replaced by ``R(t)``.  Loss ``p_l``: ``aqm="red"`` -- RED on the
instantaneous queue (0 below ``min_th``, linear to ``p_max`` at ``max_th``,
1 above); ``aqm="droptail"`` -- the fraction ``max(0, 1 - C/y)`` of the
arrival dropped while the buffer is full.  Timeouts and slow start are not
modelled.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import ModelParams, NetworkModel


@dataclass(frozen=True)
class RenoParams(ModelParams):
    """Reno fluid-model parameters.

    aqm : "droptail" or "red"
    red_min_th_pkts, red_max_th_pkts, red_p_max : RED profile
    """

    aqm: str = "red"
    red_min_th_pkts: float = 50.0
    red_max_th_pkts: float = 550.0
    red_p_max: float = 0.1
    _positive = ("red_max_th_pkts", "red_p_max")
    _nonneg = ("red_min_th_pkts",)
    CHOICES = {"aqm": ("droptail", "red")}

    def _check(self):
        from ..errors import check
        check(self.red_max_th_pkts > self.red_min_th_pkts, "RenoParams.red_max_th_pkts", self.red_max_th_pkts,
              f"a value above red_min_th_pkts = {self.red_min_th_pkts}")
        check(self.red_p_max <= 1, "RenoParams.red_p_max", self.red_p_max, "a probability in (0, 1]")


def red_probability(ops, q, P):
    lo, hi = P.red_min_th_pkts, P.red_max_th_pkts
    ramp = P.red_p_max * (q - lo) / (hi - lo)
    return ops.where(q < lo, 0.0 * q, ops.where(q < hi, ramp, 1.0 + 0.0 * q))


class Reno(NetworkModel):
    name = "reno"
    Params = RenoParams
    flow_states = ("W",)
    flow_log = (True,)
    path_aggregate = "sum"
    needs_own_delayed = True
    signal_uses_arrival = True
    description = "TCP Reno fluid model (Misra-Gong-Towsley), baseline"

    def flow_rate(self, ops, s, qdelay, P, st):
        return s["W"] / (st["rtt"] + qdelay)

    def own_load(self, ops, s, P, st):
        return s["W"]

    def link_signal(self, ops, ls, q, y, C, P, lst):
        if P.aqm == "red":
            return red_probability(ops, q, P)
        full = q >= lst["buffer"] * (1 - 1e-9)
        return ops.where(full, ops.maximum(0.0 * y, 1 - C / ops.maximum(y, 1e-300)), 0.0 * y)

    def link_static(self, net, P):
        return {"buffer": net.arrays.buffer_pkts}

    def flow_law(self, ops, s, fb, own, qdelay, P, st):
        W = s["W"]
        R = st["rtt"] + qdelay
        return {"W": 1.0 / R - W * own * fb / (2.0 * R)}

    def initial_flow_state(self, net, P):
        a = net.arrays
        return {"W": np.maximum(a.initial_rate_pps * a.rtt_s, 1.0)}

    def equilibrium(self, net, P):
        """Single RED link, N flows of one RTT: W*^2 p(q*) = 2, N W*/R* = C."""
        a = net.arrays
        if net.n_links != 1 or P.aqm != "red" or np.ptp(a.rtt_s) > 0 or net.cross_traffic:
            return None
        from scipy.optimize import brentq
        import types
        C, N, tau = a.capacity_pps[0], net.n_flows, a.rtt_s[0]
        ops = types.SimpleNamespace(where=np.where)

        def g(q):
            R = tau + q / C
            W = C * R / N
            return W * W * float(red_probability(ops, np.array(q), P)) - 2.0

        lo, hi = P.red_min_th_pkts + 1e-9, P.red_max_th_pkts - 1e-9
        if g(hi) < 0:
            return None
        q = brentq(g, lo, hi, xtol=1e-12)
        R = tau + q / C
        return {"rate_pps": np.full(N, C / N), "queue_pkts": np.array([q]), "window_pkts": np.full(N, C * R / N),
                "source": "Reno fluid model equilibrium (W^2 p = 2), RED"}
