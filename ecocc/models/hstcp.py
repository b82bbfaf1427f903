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

    low_window_pkts : Low_Window = 38 packets (Reno below it)
    high_window_pkts : High_Window = 83000 packets
    high_p : High_P = 1e-7 (loss rate at High_Window)
    high_decrease : High_Decrease = 0.1 (b at High_Window)
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
    """``(a(W), b(W))`` of RFC 3649 (packets per RTT, fraction).

    The logarithms of the parameters go through ``ops`` too: the generated kernels evaluate the laws with the
    numeric parameters as symbols (:mod:`ecocc.dde.codegen`), which ``math.log`` cannot take.

    Parameters
    ----------
    ops : namespace
        :data:`ecocc.models.base.NUMPY_OPS` or a SymPy namespace (anything with ``log``, ``exp``, ``maximum``).
    W : array or expression
        Congestion window (packets).
    P : HSTCPParams

    Returns
    -------
    a : increase per round trip (packets)
    b : decrease factor per loss event (fraction)
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
    """RFC 3649's response function ``w(p) = (p/Low_P)^S Low_Window`` (packets), for w >= Low_Window."""
    P = P or HSTCPParams()
    lw, hw = math.log(P.low_window_pkts), math.log(P.high_window_pkts)
    low_p = 1.5 / P.low_window_pkts ** 2
    S = (hw - lw) / (math.log(P.high_p) - math.log(low_p))
    return P.low_window_pkts * (np.asarray(p, dtype=float) / low_p) ** S


class HSTCP(WindowFlow, LossBasedLink, NetworkModel):
    name = "hstcp"
    Params = HSTCPParams
    description = "HighSpeed TCP (RFC 3649) in the Misra-Gong-Towsley fluid form, baseline"

    def flow_law(self, ops, s, fb, own, qdelay, P, st):
        W = s["W"]
        R = st["rtt"] + qdelay
        a, b = hstcp_functions(ops, W, P)
        return {"W": a / R - b * W * loss_events_per_rtt(ops, own, fb) / R}

    def initial_flow_state(self, net, P):
        a = net.arrays
        return {"W": np.maximum(a.initial_rate_pps * a.rtt_s, 1.0)}

    def equilibrium(self, net, P):
        """Single RED link, equal RTTs: ``b(W) W^2 p = a(W)``, ``N W (1-p)/R = C``."""
        import types
        ops = types.SimpleNamespace(log=np.log, exp=np.exp, maximum=np.maximum)

        def gap(W, p):
            a, b = hstcp_functions(ops, W, P)
            return float(a - b * W * W * p) / W  # divided by W: same sign, better scaled

        return red_equilibrium(net, P, gap, "HSTCP fluid equilibrium b(W) W^2 p = a(W) (RFC 3649 a, b), RED")
