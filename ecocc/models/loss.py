"""What a loss-based fluid model sees of a link: drop-tail or RED.

Shared by the loss-based baselines (Reno, HighSpeed TCP, Scalable TCP).

* ``aqm="red"``: RED on the instantaneous queue (Floyd & Jacobson 1993, the
  averaging filter left out): drop probability 0 below ``min_th``, linear to
  ``p_max`` at ``max_th``, 1 above.  The link drops that fraction of its
  arrival *before* it is queued (:meth:`link_drop_fraction`); the system counts
  those drops in ``lost``.
* ``aqm="droptail"``: nothing is dropped until the buffer is full; then the
  fraction ``max(0, 1 - C/y)`` of the arrival is lost (the queue projection
  counts it).  The loss signal the sources see is that fraction.

Loss events: a flow sending ``W(t - tau)/R`` packets per second into loss
probability ``p`` loses ``W p / R`` packets per second; each loss is a window
decrease in Misra-Gong-Towsley's model.  With tail drop the fraction lost
while the buffer overflows is large (``1 - C/y``) and one decrease per lost
packet collapses the window, which real senders (NewReno/SACK recovery) do not
do: they reduce once per window of losses.  :func:`loss_events_per_rtt` caps
the decreases at one per round trip, ``min(W(t - tau) p, 1)`` per RTT; at the
small RED probabilities of an equilibrium (``W p < 1``) the cap is inactive
and the MGT model is unchanged.

The loss probability reaches the sources one backward delay late (the flow's
feedback path); sources add the probabilities of the links they cross
(``path_aggregate="sum"``, small-loss approximation of ``1 - prod(1 - p_l)``).
"""
from __future__ import annotations

from dataclasses import dataclass

from .base import ModelParams


@dataclass(frozen=True)
class LossParams(ModelParams):
    """Queue management of a loss-based model.

    aqm : "droptail" or "red"
    red_min_th_pkts, red_max_th_pkts : RED thresholds (packets)
    red_p_max : RED drop probability at ``red_max_th_pkts``
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
        name = type(self).__name__
        check(self.red_max_th_pkts > self.red_min_th_pkts, f"{name}.red_max_th_pkts", self.red_max_th_pkts,
              f"a value above red_min_th_pkts = {self.red_min_th_pkts}")
        check(self.red_p_max <= 1, f"{name}.red_p_max", self.red_p_max, "a probability in (0, 1]")


def loss_events_per_rtt(ops, own_window, p):
    """Window decreases per round trip: ``min(W(t - tau) p, 1)`` (see the module docstring)."""
    return ops.minimum(own_window * p, 1.0 + 0.0 * p)


def red_probability(ops, q, P):
    """RED drop probability at queue ``q`` (packets) for profile ``P``.

    Parameters
    ----------
    ops : namespace
        NumPy or SymPy ops.  The symbolic layer's ``SYMPY_OPS`` (linearization) gets the ramp only; exact
        symbolic ops (``exact=True``: generated kernels, log-space laws) and NumPy get the whole profile.
    q : array or expression
        Queue (packets).
    P : LossParams

    Returns
    -------
    array or expression
        Drop probability (fraction of the arrival): 0 below ``red_min_th_pkts``, linear to ``red_p_max`` at
        ``red_max_th_pkts``, 1 above.
    """
    lo, hi = P.red_min_th_pkts, P.red_max_th_pkts
    ramp = P.red_p_max * (q - lo) / (hi - lo)
    if getattr(ops, "lib", "") == "sympy" and not getattr(ops, "exact", False):
        # linearization: the equilibrium lies on the ramp (red_equilibrium only finds it there); with
        # exact symbolic ops (generated kernels, log-space laws) the whole profile below
        return ramp
    return ops.where(q < lo, 0.0 * q, ops.where(q < hi, ramp, 1.0 + 0.0 * q))


class WindowFlow:
    """Mixin: the flow side shared by the window models (Reno, HSTCP, Scalable TCP).

    One state, the congestion window ``W`` (packets, integrated as its logarithm); the sending rate is
    ``W / (tau + queueing delay)`` (packets/s); the flow's own window one round trip ago is the delayed
    quantity its loss events are counted on (:func:`loss_events_per_rtt`).
    """

    flow_states = ("W",)
    flow_log = (True,)
    needs_own_delayed = True

    def flow_rate(self, ops, s, qdelay, P, st):
        return s["W"] / (st["rtt"] + qdelay)

    def own_load(self, ops, s, P, st):
        return s["W"]


class LossBasedLink:
    """Mixin: the link side of a loss-based model (signal = loss probability)."""

    path_aggregate = "sum"
    signal_uses_arrival = True

    def link_signal(self, ops, ls, q, y, C, P, lst):
        if P.aqm == "red":
            return red_probability(ops, q, P)
        full = q >= lst["buffer"] * (1 - 1e-9)
        return ops.where(full, ops.maximum(0.0 * y, 1 - C / ops.maximum(y, 1e-300)), 0.0 * y)

    def link_drop_fraction(self, ops, ls, q, y, C, P, lst):
        if P.aqm == "red":
            return red_probability(ops, q, P)
        return None

    def link_static(self, net, P):
        import math
        # the symbolic layer's one-link stand-in has no buffer: infinite (RED is what it linearizes)
        return {"buffer": getattr(net.arrays, "buffer_pkts", math.inf)}


def red_equilibrium(net, P, window_gap, what):
    """Equilibrium of a window model on one RED link, equal RTTs, no cross traffic.

    ``window_gap(W, p)`` is the model's per-flow balance (zero at equilibrium).
    Solves for the queue ``q`` with ``R = tau + q/C``, ``N W (1 - p(q)) / R = C``
    (the RED drops never reach the queue) and ``window_gap(W, p(q)) = 0``.
    Returns the dict of :meth:`NetworkModel.equilibrium` or None.
    """
    import types

    import numpy as np
    from scipy.optimize import brentq
    a = net.arrays
    if net.n_links != 1 or P.aqm != "red" or np.ptp(a.rtt_s) > 0 or net.cross_traffic:
        return None
    C, N, tau = a.capacity_pps[0], net.n_flows, a.rtt_s[0]
    ops = types.SimpleNamespace(where=np.where)

    def parts(q):
        p = float(red_probability(ops, np.array(q), P))
        R = tau + q / C
        return p, R, C * R / (N * (1 - p))

    def g(q):
        p, R, W = parts(q)
        return window_gap(W, p)

    lo, hi = P.red_min_th_pkts + 1e-9, P.red_max_th_pkts - 1e-9
    if not (g(lo) > 0 > g(hi)):
        return None
    q = brentq(g, lo, hi, xtol=1e-12, rtol=1e-15)
    p, R, W = parts(q)
    return {"rate_pps": np.full(N, W / R), "queue_pkts": np.array([q]), "window_pkts": np.full(N, W),
            "loss_probability": np.array([p]), "source": what}
