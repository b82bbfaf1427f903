"""The Reno/RED loop: the classic linearization of the TCP/AQM fluid model.

Hollot, Misra, Towsley & Gong, "A control theoretic analysis of RED"
(IEEE Infocom 2001) linearize the Misra-Gong-Towsley fluid model of N
Reno flows on one link of capacity C about its equilibrium
``W0^2 p0 = 2``, ``R0 = tau + q0 / C``, ``W0 = R0 C / N``:

    dW' = -N/(R0^2 C) (dW + dW(t - R)) - R0 C^2/(2 N^2) dp(t - R)
    dq' = N/R0 dW - 1/R0 dq

(their ``dq - dq(t - R)`` term vanishes here: ecocc's model replaces
``R(t - R)`` by ``R(t)``, which makes it exactly zero at the equilibrium).

Readings, stated:

* **AQM: RED on the instantaneous queue**, as :mod:`ecocc.models.reno`
  simulates it: ``dp = L_red dq`` with ``L_red = p_max / (max_th - min_th)``
  (packets^-1) -- Hollot et al.'s RED has an EWMA low-pass ``K/(s + K)``
  that ecocc's model does not have (``K = infinity``).  **Drop-tail has no
  linearization** (the loss is a step in the queue at the buffer) and is
  refused.
* **Delay**: the loop delay is the propagation RTT ``tau`` that ecocc's
  model uses for the loss signal and the own-window term; Hollot et al. use
  ``R0 = tau + q0/C``.  ``R0`` is reported beside it.
* **Transfer function**: Hollot et al.'s ``dW(t - R) ~ dW(t)`` gives the
  rational loop

      L(s) e^{-s tau} = L_red (C^2 / (2N)) e^{-s tau} / ((s + 2N/(R0^2 C)) (s + 1/R0)),

  which :func:`margins` analyses with the delay exact.  The characteristic
  roots use the full linearization (``A0``, ``A1`` with ``dW(t - tau)``
  kept), so the two verdicts are two readings and are compared.

Units: packets, packets/s, seconds; ``s`` in rad/s.
"""
from __future__ import annotations

import numpy as np

from ..errors import InputError, check_finite


def reno_loop(n_flows=4, capacity_pps=1000.0, rtt_s=0.1, params=None, **overrides):
    """The Reno/RED synchronous loop as a :class:`ecocc.symbolic.loop.RationalLoop`.

    Parameters
    ----------
    n_flows : int
        Number of flows N.
    capacity_pps : float
        Link capacity C (packets/s).
    rtt_s : float
        Propagation round-trip time tau (s), the loop delay.
    params : RenoParams or dict, optional
        ``aqm`` must be ``"red"``; RED profile ``red_min_th_pkts``,
        ``red_max_th_pkts``, ``red_p_max``.
    **overrides
        Parameter overrides.

    Returns
    -------
    RationalLoop
        ``num``/``den`` of the classic transfer function, ``delay_s = tau``,
        ``A0``/``A1`` of the full linearization (states ``dW`` in packets,
        ``dq`` in packets), and ``equilibrium`` details in ``label``.

    Raises
    ------
    InputError
        For ``n_flows`` not an integer >= 1, a bad capacity or RTT, ``aqm`` other than ``"red"``, or a
        setting whose equilibrium queue is off the RED ramp.
    """
    from ..models import get_model
    from ..network import dumbbell
    from ..symbolic.loop import RationalLoop
    m = get_model("reno")
    P = m.make_params(params, **overrides)
    N = int(n_flows)
    if N != n_flows or N < 1:
        raise InputError("n_flows", n_flows, "an integer >= 1")
    C = check_finite("capacity_pps", capacity_pps, positive=True)
    tau = check_finite("rtt_s", rtt_s, positive=True)
    if P.aqm != "red":
        raise InputError("aqm", P.aqm, "red: with drop-tail the loss is a step in the queue at the buffer, which has "
                                       "no linearization (Hollot et al. 2001 analyse RED)")
    eq = m.equilibrium(dumbbell(C, [tau] * N), P)
    if eq is None:
        raise InputError("reno equilibrium", f"N = {N}, C = {C:g} packets/s, RTT = {tau:g} s",
                         f"a setting whose equilibrium queue (W*^2 p(q*) = 2) lies on the RED ramp between "
                         f"red_min_th_pkts = {P.red_min_th_pkts:g} and red_max_th_pkts = {P.red_max_th_pkts:g}")
    q0 = float(eq["queue_pkts"][0])
    R0 = tau + q0 / C
    W0 = C * R0 / N
    L_red = P.red_p_max / (P.red_max_th_pkts - P.red_min_th_pkts)
    a = N / (R0 ** 2 * C)
    b = R0 * C ** 2 / (2.0 * N ** 2)
    A0 = np.array([[-a, 0.0], [N / R0, -1.0 / R0]])
    A1 = np.array([[-a, -b * L_red], [0.0, 0.0]])
    num = np.array([L_red * C ** 2 / (2.0 * N)])
    den = np.polymul([1.0, 2.0 * a], [1.0, 1.0 / R0])
    label = (f"reno (RED, instantaneous queue): L(s) = L_red C^2/(2N) / ((s + 2N/(R0^2 C)) (s + 1/R0)), "
             f"L_red = {L_red:.6g} 1/packet, q0 = {q0:.6g} packets, W0 = {W0:.6g} packets, R0 = {R0:.6g} s "
             f"(Hollot et al.'s delay; the loop delay here is the propagation RTT {tau:g} s)")
    return RationalLoop(num=num, den=den, delay_s=tau, hidden_poles=np.array([], complex), A0=A0, A1=A1,
                        label=label)


def reno_equilibrium(n_flows, capacity_pps, rtt_s, params=None, **overrides) -> dict:
    """Return the operating point of the Reno/RED synchronous loop.

    Parameters
    ----------
    n_flows : int
        Number of flows N.
    capacity_pps : float
        Link capacity C, packets/s.
    rtt_s : float
        Propagation round-trip time, seconds.
    params : RenoParams or dict or None, optional
        Reno parameters (RED profile ``red_min_th_pkts``, ``red_max_th_pkts``, ``red_p_max``).
    **overrides
        Parameter overrides.

    Returns
    -------
    dict
        ``q0_pkts`` (packets), ``W0_pkts`` (packets), ``p0`` (drop probability), ``R0_s`` (s) and
        ``L_red_per_pkt`` (1/packet); empty when the model has no equilibrium there (queue off the RED ramp).

    Raises
    ------
    InputError
        For unknown or out-of-range parameters.  N, C and the RTT are not validated here (see
        :func:`reno_loop`).
    """
    from ..models import get_model
    from ..network import dumbbell
    m = get_model("reno")
    P = m.make_params(params, **overrides)
    eq = m.equilibrium(dumbbell(float(capacity_pps), [float(rtt_s)] * int(n_flows)), P)
    if eq is None:
        return {}
    q0 = float(eq["queue_pkts"][0])
    R0 = float(rtt_s) + q0 / float(capacity_pps)
    W0 = float(capacity_pps) * R0 / int(n_flows)
    return {"q0_pkts": q0, "W0_pkts": W0, "p0": 2.0 / W0 ** 2, "R0_s": R0,
            "L_red_per_pkt": P.red_p_max / (P.red_max_th_pkts - P.red_min_th_pkts)}
