"""What a loss-based fluid model sees of a link: drop-tail or RED.

Shared by the loss-based baselines (Reno, HighSpeed TCP, Scalable TCP).

* ``aqm="red"``: RED on the instantaneous queue (Floyd & Jacobson 1993, the
  averaging filter left out): drop probability 0 below ``min_th``, linear to
  ``p_max`` at ``max_th``, 1 above.  The link drops that fraction of its
  arrival *before* it is queued (:meth:`link_drop_fraction`); the system counts
  those drops in ``lost``.  Since everything above ``max_th`` is dropped, the
  queue never exceeds ``max_th``: where arrivals ``y (1 - p_max)`` exceed the
  capacity there, it stays at ``max_th`` (a sliding mode of the jump to 1, whose
  Filippov solution is a full buffer: the excess ``y (1 - p_max) - C`` is lost
  too).  So the queue's bound is ``min(buffer, max_th)``
  (:meth:`LossBasedLink.queue_bound_pkts`), held there as a full buffer is, and
  the flows see the fraction lost at the bound, ``max(p_max, 1 - C/y)``, as
  tail drop's ``1 - C/y`` (not at a buffer below ``max_th``: RED's ramp value
  alone there, the earlier model).  (Before, the solvers crossed ``max_th`` at every
  step and a run pinned there crawled to ``max_steps``: docs/notes/redlevels.md.)
  Not in a batch whose members differ in ``max_th`` (one bound per link), nor on
  a mixed network (RED is a loss signal only there): the queue may then pass
  ``max_th`` as before.
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

from ..dde.history import HOLD_BAND_REL
from .base import ModelParams


@dataclass(frozen=True)
class LossParams(ModelParams):
    """Queue management of a loss-based model.

    Parameters
    ----------
    aqm : "droptail" or "red"
    red_min_th_pkts, red_max_th_pkts : RED thresholds (packets)
    red_p_max : RED drop probability at ``red_max_th_pkts``

    Raises
    ------
    InputError
        If ``aqm`` is not one of the choices, a threshold is not finite (min >= 0, max > 0),
        ``red_max_th_pkts <= red_min_th_pkts`` or ``red_p_max`` is not in (0, 1].
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
    """Window decreases per round trip: ``min(W(t - tau) p, 1)`` (see the module docstring).

    Parameters
    ----------
    ops : SimpleNamespace
        :data:`ecocc.models.base.NUMPY_OPS` or ``SYMPY_OPS``.
    own_window : array_like
        The flow's window one propagation RTT ago, ``W(t - tau)`` (packets).
    p : array_like
        Loss probability on the path, one backward delay old (dimensionless, summed over the links).

    Returns
    -------
    array_like
        Loss events per round trip (dimensionless), capped at 1.
    """
    return ops.minimum(own_window * p, 1.0 + 0.0 * p)


def red_probability(ops, q, P, bound=None):
    """RED drop probability at queue ``q`` for profile ``P`` (Floyd & Jacobson 1993, no averaging).

    ``0`` below ``red_min_th_pkts``, ``red_p_max (q - min_th)/(max_th - min_th)`` up to
    ``red_max_th_pkts``, ``1`` above.  The symbolic layer's ``SYMPY_OPS`` (linearization) gets the ramp
    only (the linearization point lies on it); exact symbolic ops (``exact=True``: generated kernels,
    log-space laws) and NumPy get the whole profile.

    Parameters
    ----------
    ops : SimpleNamespace
        :data:`ecocc.models.base.NUMPY_OPS`, ``SYMPY_OPS`` or exact SymPy ops.
    q : array_like or expression
        Instantaneous queue (packets).
    P : LossParams
        The RED profile (``red_min_th_pkts``, ``red_max_th_pkts``, ``red_p_max``).
    bound : array_like, optional
        The queue's bound (packets, :meth:`LossBasedLink.queue_bound_pkts`).  Where it is ``max_th`` or less, the
        probability above ``max_th`` is ``p_max``, not 1: a bounded queue is there only inside a Runge-Kutta
        step's stages, and the jump to 1 is the bound's hold (dropping everything there made the stages turn the
        queue back below the bound unlocated: a sliding mode again).  None: 1 above ``max_th``.

    Returns
    -------
    array_like
        Drop probability, in [0, 1] (NumPy).
    """
    lo, hi = P.red_min_th_pkts, P.red_max_th_pkts
    ramp = P.red_p_max * (q - lo) / (hi - lo)
    if _linearizing(ops):
        # linearization: the equilibrium lies on the ramp (red_equilibrium only finds it there); with
        # exact symbolic ops (generated kernels, log-space laws) the whole profile below
        return ramp
    # p_max at max_th itself (the left limit): a queue held at its bound max_th (queue_bound_pkts) is pushed
    # outward by y (1 - p_max) - C, so it stays held there while that is positive
    above = 1.0 + 0.0 * q
    if bound is not None:
        above = ops.where(hi >= bound, P.red_p_max + 0.0 * q, above)
    return ops.where(q < lo, 0.0 * q, ops.where(q <= hi, ramp, above))


def _linearizing(ops):
    """Whether ``ops`` are the symbolic layer's linearization ops (``SYMPY_OPS``, not exact): RED's ramp only."""
    return getattr(ops, "lib", "") == "sympy" and not getattr(ops, "exact", False)


#: relative band around a queue's bound within which it counts as at the bound (a held queue read back through
#: its Hermite history may be an ulp off the bound); the same band as tail drop's full buffer.  The solvers end
#: steps where a queue leaving it reaches the flows (ecocc.dde.history.HOLD_BAND_REL, the one definition)
AT_BOUND_REL = HOLD_BAND_REL


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
        """Sending rate ``x = W / (tau + Q)`` (self-clocking, MGT's ``W/R``).

        Parameters
        ----------
        ops, P
            As in :meth:`ecocc.models.base.NetworkModel.flow_rate` (not used).
        s : dict
            ``s["W"]``: congestion window (packets).
        qdelay : array_like
            Current queueing delay ``Q`` of the flow's path (s).
        st : dict
            ``st["rtt"]``: propagation RTT ``tau`` (s).

        Returns
        -------
        array_like
            Sending rate (packets/s).
        """
        return s["W"] / (st["rtt"] + qdelay)

    def own_load(self, ops, s, P, st):
        """The window itself; the system passes it one propagation RTT late as ``W(t - tau)``.

        Parameters
        ----------
        ops, P, st
            As in :meth:`ecocc.models.base.NetworkModel.own_load` (not used).
        s : dict
            ``s["W"]``: congestion window (packets), one RTT old.

        Returns
        -------
        array_like
            ``W(t - tau)`` (packets), the ``own`` argument of the flow law.
        """
        return s["W"]


class LossBasedLink:
    """Mixin: the link side of a loss-based model (signal = loss probability).

    Flows add the probabilities of the links they cross (``path_aggregate = "sum"``).
    """

    path_aggregate = "sum"
    signal_uses_arrival = True

    def link_signal(self, ops, ls, q, y, C, P, lst):
        """Loss probability the link imposes: RED's ``p(q)``, or tail drop's ``max(0, 1 - C/y)`` at a full buffer
        (RED held at ``max_th``: ``max(p_max, 1 - C/y)``, the fraction lost there; :meth:`link_static_at`).

        Parameters
        ----------
        ops, ls, P
            As in :meth:`ecocc.models.base.NetworkModel.link_signal`; ``P.aqm`` selects the rule.
        q : array_like
            Queue (packets), one backward delay old.
        y : array_like
            Arrival rate including cross traffic (packets/s), same delay.
        C : array_like
            Capacity (packets/s).
        lst : dict
            ``lst["buffer"]``: the queue's bound (packets), from :meth:`link_static`.

        Returns
        -------
        array_like
            Loss probability (dimensionless, in [0, 1]); flows add them along their path.
        """
        lost_at_bound = ops.maximum(0.0 * y, 1 - C / ops.maximum(y, 1e-300))
        if P.aqm == "red":
            b = lst["buffer"]
            red = red_probability(ops, q, P, b)
            if _linearizing(ops):
                return red
            # at the queue's bound (queue_bound_pkts: max_th, or a lower full buffer; lst["held_at"]) the fraction
            # lost is RED's there plus what the held queue turns away: max(p(bound), 1 - C/y), the Filippov value
            # of the jump at max_th, the tail drops of a full buffer below it
            h = lst["held_at"]
            band = ops.where(q <= h * (1 + AT_BOUND_REL), ops.maximum(lst["p_bound"], lost_at_bound), red)
            return ops.where(q < h * (1 - AT_BOUND_REL), red, band)
        full = q >= lst["buffer"] * (1 - AT_BOUND_REL)
        return ops.where(full, lost_at_bound, 0.0 * y)

    def link_drop_fraction(self, ops, ls, q, y, C, P, lst):
        """RED drops ``p(q)`` of the arrival before it is queued; tail drop drops nothing early (None).

        Parameters
        ----------
        ops, ls, y, C
            As in :meth:`ecocc.models.base.NetworkModel.link_drop_fraction` (not used).
        q : array_like
            Current queue (packets).
        P : LossParams
            ``aqm`` and the RED profile.
        lst : dict
            ``lst["buffer"]``: the queue's bound (packets), from :meth:`link_static`.

        Returns
        -------
        array_like or None
            :func:`red_probability` of ``q`` (with the queue's bound) with RED, None with tail drop.
        """
        if P.aqm == "red":
            return red_probability(ops, q, P, lst["buffer"])
        return None

    def link_static(self, net, P):
        """The link constants at the model's own queue bound (:meth:`queue_bound_pkts`).

        Parameters
        ----------
        net : ecocc.network.Network
            The network (``net.arrays.buffer_pkts``; the symbolic layer's one-link stand-in has none).
        P : LossParams
            The parameters (``aqm``, the RED profile).

        Returns
        -------
        dict
            :meth:`link_static_at` of that bound.
        """
        return self.link_static_at(net, P, self.queue_bound_pkts(net, P))

    def link_static_at(self, net, P, bound_pkts):
        """The queue's bound on each link, which the signal needs at a full queue, and with RED the drop
        probability there (``p_bound``) and where the signal reads what the held queue turns away (``held_at``:
        the bound, ``inf`` for an unbounded queue): there it is ``max(p_bound, 1 - C/y)``, at ``max_th`` (RED
        drops everything above it) and at a full buffer below ``max_th`` (its tail drops; until 2026-11-29 the
        flows saw RED's ramp value alone there, so a buffer below ``min_th`` gave no loss signal at all and Reno's
        windows grew without bound: docs/notes/redbuffer.md).

        Parameters
        ----------
        net : ecocc.network.Network
            The network (not used).
        P : LossParams
            The parameters (``aqm``, the RED profile).
        bound_pkts : array_like
            The queues' bound (packets; ``inf``: unbounded).

        Returns
        -------
        dict
            ``{"buffer": bound}`` (packets), with RED and numeric parameters also ``{"p_bound": p(bound),
            "held_at": bound or inf}``.
        """
        import numpy as np
        out = {"buffer": bound_pkts}
        if P.aqm == "red" and _numeric(P.red_max_th_pkts) and _numeric(P.red_p_max):
            # red_probability(b) with b = bound: 0 below min_th, the ramp up to max_th, 1 above (a bound above
            # max_th: only where a batch's members run at a larger one, or inf) -- the ramp of b clipped to
            # [min_th, max_th] so that an infinite bound gives 1, not 0 x inf
            b = np.asarray(bound_pkts, dtype=float)
            lo, hi = P.red_min_th_pkts, P.red_max_th_pkts
            ramp = P.red_p_max * (np.clip(b, lo, hi) - lo) / (hi - lo)
            out["p_bound"] = np.where(b < lo, 0.0, np.where(b <= hi, ramp, 1.0))
            out["held_at"] = b  # the bound itself: max_th, or a lower full buffer (inf: unbounded)
        return out

    def queue_bound_pkts(self, net, P):
        """The largest queue each link can hold: its buffer, and with RED at most ``red_max_th_pkts`` (everything
        above it is dropped; the module docstring).

        Parameters
        ----------
        net : ecocc.network.Network
            The network (``net.arrays.buffer_pkts``; the symbolic layer's one-link stand-in has none: infinite).
        P : LossParams
            ``aqm`` and ``red_max_th_pkts`` (a batch whose members differ in it, or a symbol: the buffer only).

        Returns
        -------
        numpy.ndarray or float
            Packets per link (``inf`` for an unbounded buffer under tail drop).
        """
        import math

        import numpy as np
        buf = getattr(net.arrays, "buffer_pkts", math.inf)
        # a number only: not a batch's per-member column, nor the symbolic layer's symbol (it linearizes the ramp)
        if P.aqm == "red" and _numeric(P.red_max_th_pkts):
            return np.minimum(buf, float(P.red_max_th_pkts))
        return buf


def _numeric(v):
    """Whether ``v`` is one real number (not a batch's column of them, not a symbol)."""
    import numbers
    return isinstance(v, numbers.Real) and not isinstance(v, bool)



def red_equilibrium(net, P, window_gap, what):
    """Equilibrium of a window model on one RED link, equal RTTs, no cross traffic.

    ``window_gap(W, p)`` is the model's per-flow balance (zero at equilibrium).
    Solves for the queue ``q`` with ``R = tau + q/C``, ``N W (1 - p(q)) / R = C``
    (the RED drops never reach the queue) and ``window_gap(W, p(q)) = 0``,
    by Brent's method on the RED ramp ``(red_min_th_pkts, red_max_th_pkts)``.

    Parameters
    ----------
    net : ecocc.network.Network
        The network: one link, every flow with the same propagation RTT ``tau`` (s), no cross traffic.
    P : LossParams
        RED profile (``aqm`` must be ``"red"``).
    window_gap : callable
        ``window_gap(W, p) -> float``, window ``W`` in packets, loss probability ``p``; positive below
        the equilibrium queue and negative above it.
    what : str
        The ``source`` entry of the result (the equation solved).

    Returns
    -------
    dict or None
        The dict of :meth:`ecocc.models.base.NetworkModel.equilibrium`: ``rate_pps`` (per flow, packets/s),
        ``queue_pkts`` (shape (1,), packets), ``window_pkts`` (per flow, packets), ``loss_probability``
        (shape (1,)) and ``source``; None when the network or AQM does not fit, or ``window_gap`` does not
        change sign on the ramp (no equilibrium there).
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
