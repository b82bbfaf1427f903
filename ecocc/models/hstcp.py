"""HighSpeed TCP (Floyd, RFC 3649, 2003) as a fluid model.

RFC 3649 Section 5 gives the window response function
``w = (p / Low_P)^S Low_Window`` with ``S = (ln High_Window - ln
Low_Window) / (ln High_P - ln Low_P)`` and ``Low_P = 1.5 / Low_Window^2``
(about ``w = 0.12 / p^0.835``), the decrease
``b(w) = (High_Decrease - 0.5) (ln w - ln Low_Window) / (ln High_Window - ln
Low_Window) + 0.5`` and the increase per RTT
``a(w) = w^2 p(w) 2 b(w) / (2 - b(w))`` (``p(w)`` the inverse of the response
function); below ``Low_Window`` HSTCP is Reno (``a = 1``, ``b = 0.5``).

The fluid form follows Misra, Gong & Towsley's Reno model with Reno's
``1`` and ``1/2`` replaced by ``a(W)`` and ``b(W)`` (as in e.g. Barman,
Smaragdakis & Matta, Globecom 2004, the HSTCP reference of 000)::

    W'(t) = a(W)/R - b(W) W(t) min(W(t - tau) p(t - d_b), 1) / R

so its equilibrium is ``b(W) W^2 p = a(W)``, i.e. ``p = 2 p_RFC(W) / (2 -
b(W))``: the fluid average differs from RFC 3649's saw-tooth response function
by the factor ``2 / (2 - b)`` in ``p`` (``4/3`` for Reno's ``b = 1/2``,
``1.05`` at ``b = 0.1``).  Links: see :mod:`ecocc.models.loss`.  Slow start,
timeouts and Limited Slow-Start are not modelled.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .base import NetworkModel
from .loss import LossBasedLink, WindowFlow, LossParams, loss_events_per_rtt, red_equilibrium


@dataclass(frozen=True)
class HSTCPParams(LossParams):
    """HighSpeed TCP parameters, RFC 3649 Section 5 defaults.

    The RED profile fields come from :class:`LossParams`.

    Parameters
    ----------
    low_window_pkts : Low_Window = 38 packets (Reno below it)
    high_window_pkts : High_Window = 83000 packets
    high_p : High_P = 1e-7 (loss rate at High_Window)
    high_decrease : High_Decrease = 0.1 (b at High_Window)

    Raises
    ------
    InputError
        If a value is not finite and positive or breaks one of the orderings above (or the
        :class:`LossParams` checks).
    """

    low_window_pkts: float = 38.0
    high_window_pkts: float = 83000.0
    high_p: float = 1e-7
    high_decrease: float = 0.1
    _positive = LossParams._positive + ("low_window_pkts", "high_window_pkts", "high_p", "high_decrease")
    _nonneg = LossParams._nonneg

    def _check(self):
        super()._check()
        from ..errors import check
        check(self.high_window_pkts > self.low_window_pkts, "HSTCPParams.high_window_pkts", self.high_window_pkts,
              f"a window above low_window_pkts = {self.low_window_pkts}")
        check(self.high_decrease < 0.5, "HSTCPParams.high_decrease", self.high_decrease, "a value in (0, 0.5)")
        check(self.high_p < 1.5 / self.low_window_pkts ** 2, "HSTCPParams.high_p", self.high_p,
              f"below Low_P = 1.5/low_window^2 = {1.5 / self.low_window_pkts ** 2:.3g}")


def hstcp_functions(ops, W, P):
    """``(a(W), b(W))`` of RFC 3649 Section 5: increase per RTT and decrease fraction at window ``W``.

    ``b(W) = (High_Decrease - 0.5) (ln W - ln Low_Window)/(ln High_Window - ln Low_Window) + 0.5`` and
    ``a(W) = W^2 p(W) 2 b(W)/(2 - b(W))`` with ``p(W)`` the inverse of the response function
    ``W = (p/Low_P)^S Low_Window``.  ``W`` is clamped at ``Low_Window`` from below, where this gives
    Reno's ``a = 1``, ``b = 0.5``.  The logarithms of the parameters go through ``ops`` too: the generated
    kernels evaluate the laws with the numeric parameters as symbols (:mod:`ecocc.dde.codegen`), which
    ``math.log`` cannot take.

    Parameters
    ----------
    ops : SimpleNamespace
        :data:`ecocc.models.base.NUMPY_OPS` or a SymPy namespace (``log``, ``exp``, ``maximum``).
    W : array_like
        Congestion window (packets).
    P : HSTCPParams
        Low_Window, High_Window, High_P, High_Decrease.

    Returns
    -------
    a : array_like
        Window increase per RTT (packets).
    b : array_like
        Multiplicative decrease per loss event (fraction, 0.5 down to ``high_decrease``).
    """
    lw, hw = ops.log(P.low_window_pkts), ops.log(P.high_window_pkts)
    low_p = 1.5 / P.low_window_pkts ** 2
    S = (hw - lw) / (ops.log(P.high_p) - ops.log(low_p))
    lW = ops.log(ops.maximum(W, P.low_window_pkts))
    b = (P.high_decrease - 0.5) * (lW - lw) / (hw - lw) + 0.5
    p_rfc = ops.exp(ops.log(low_p) + (lW - lw) / S)  # inverse of w = (p/Low_P)^S Low_Window
    a = ops.exp(2 * lW) * p_rfc * 2 * b / (2 - b)
    return a, b


def hstcp_response_window(p, P=None):
    """RFC 3649's response function ``w(p) = (p/Low_P)^S Low_Window`` (Section 5), for w >= Low_Window.

    ``S = (ln High_Window - ln Low_Window)/(ln High_P - ln Low_P)`` (negative) and
    ``Low_P = 1.5/Low_Window^2``; about ``w = 0.12/p^0.835`` at the defaults.

    Parameters
    ----------
    p : array_like
        Packet loss rate (dimensionless, > 0).
    P : HSTCPParams, optional
        The constants (default: RFC 3649's).

    Returns
    -------
    ndarray
        Average window (packets) of RFC 3649's saw-tooth at loss rate ``p``; only meaningful where it
        is >= Low_Window (Reno below).
    """
    P = P or HSTCPParams()
    lw, hw = math.log(P.low_window_pkts), math.log(P.high_window_pkts)
    low_p = 1.5 / P.low_window_pkts ** 2
    S = (hw - lw) / (math.log(P.high_p) - math.log(low_p))
    return P.low_window_pkts * (np.asarray(p, dtype=float) / low_p) ** S


class HSTCP(WindowFlow, LossBasedLink, NetworkModel):
    """HighSpeed TCP (RFC 3649) in the Misra-Gong-Towsley fluid form (baseline); see the module docstring."""

    name = "hstcp"
    Params = HSTCPParams
    description = "HighSpeed TCP (RFC 3649) in the Misra-Gong-Towsley fluid form, baseline"

    def flow_law(self, ops, s, fb, own, qdelay, P, st):
        """``W' = a(W)/R - b(W) W min(W(t - tau) p, 1)/R``, ``R = tau + Q`` (MGT form with RFC 3649's a, b).

        Parameters
        ----------
        ops : SimpleNamespace
            As in :meth:`ecocc.models.base.NetworkModel.flow_law`.
        s : dict
            ``s["W"]``: congestion window (packets).
        fb : array_like
            Path loss probability ``p``, one backward delay old (dimensionless).
        own : array_like
            ``W(t - tau)``, the window one propagation RTT ago (packets).
        qdelay : array_like
            Current queueing delay ``Q`` of the path (s).
        P : HSTCPParams
            Constants of :func:`hstcp_functions`.
        st : dict
            ``st["rtt"]``: propagation RTT ``tau`` (s).

        Returns
        -------
        dict
            ``{"W": W'}`` (packets/s).
        """
        W = s["W"]
        R = st["rtt"] + qdelay
        a, b = hstcp_functions(ops, W, P)
        return {"W": a / R - b * W * loss_events_per_rtt(ops, own, fb) / R}

    def initial_flow_state(self, net, P):
        """A flow starts with the window of its initial rate: ``W = max(x0 tau, 1)``.

        Parameters
        ----------
        net : ecocc.network.Network
            The network (``initial_rate_pps`` x0 in packets/s, ``rtt_s`` tau in s).
        P : HSTCPParams
            The parameters (not used).

        Returns
        -------
        dict
            ``{"W": array over the flows}`` (packets, at least 1).
        """
        a = net.arrays
        return {"W": np.maximum(a.initial_rate_pps * a.rtt_s, 1.0)}

    def equilibrium(self, net, P):
        """Single RED link, equal RTTs: ``b(W) W^2 p = a(W)``, ``N W (1-p)/R = C``.

        Solved by :func:`ecocc.models.loss.red_equilibrium`.

        Parameters
        ----------
        net : ecocc.network.Network
            One link, equal propagation RTTs (s), no cross traffic.
        P : HSTCPParams
            RFC 3649 constants and the RED profile (``aqm="red"``).

        Returns
        -------
        dict or None
            ``rate_pps``, ``queue_pkts``, ``window_pkts``, ``loss_probability`` and ``source``
            (see :func:`ecocc.models.loss.red_equilibrium`); None for other networks or tail drop.
        """
        import types
        ops = types.SimpleNamespace(log=np.log, exp=np.exp, maximum=np.maximum)

        def gap(W, p):
            a, b = hstcp_functions(ops, W, P)
            return float(a - b * W * W * p) / W  # divided by W: same sign, better scaled

        return red_equilibrium(net, P, gap, "HSTCP fluid equilibrium b(W) W^2 p = a(W) (RFC 3649 a, b), RED")
