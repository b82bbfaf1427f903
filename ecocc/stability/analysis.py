"""One-call analysis of a model's synchronous loop, and simulated decay."""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from ..errors import check_finite
from .margins import MarginResult, margins
from .roots import CharacteristicRoots, characteristic_roots


@functools.lru_cache(maxsize=32)
def _loop(model, n_flows):
    """The symbolic loop (parameters left symbolic), cached per model and N."""
    from ..symbolic import synchronous_loop
    return synchronous_loop(model, params=None, n_flows=n_flows)


@dataclass(frozen=True)
class LoopAnalysis:
    """Margins and characteristic roots of ``model`` at one point.

    Attributes
    ----------
    model : str
    params : dict
        Parameter values used (model fields).
    n_flows : int
    rtt_s, capacity_pps : float
    loop : str
        ``L(s)`` (symbolic, delay apart) as a string.
    margins : MarginResult
    roots : CharacteristicRoots
    rational : RationalLoop
        The numeric loop ``L(s)``, its delay and the DDE matrices.
    consistent : bool
        Whether the frequency-domain verdict equals the root verdict (a
        stable root verdict needs the certified root count).
    status : str
        ``"ok"``, ``"inconsistent"`` or ``"uncertain"`` (roots not certified).
    messages : tuple of str
    """

    model: str
    params: dict
    n_flows: int
    rtt_s: float
    capacity_pps: float
    loop: str
    margins: MarginResult
    roots: CharacteristicRoots
    consistent: bool
    status: str
    messages: tuple = ()
    rational: object = None

    def to_control(self, pade_order=None):
        """Return the loop as python-control objects; see :func:`ecocc.stability.to_control`.

        Parameters
        ----------
        pade_order : int or None, optional
            Also give ``L(s)`` times the order-``pade_order`` Padé approximant of the delay (1 to 20).

        Returns
        -------
        ControlLoop
            The exact rational part, the delay in seconds, and the Padé product if asked for.

        Raises
        ------
        InputError
            For a ``pade_order`` that is not an integer from 1 to 20.
        """
        from .control_io import to_control
        return to_control(self.rational, pade_order=pade_order)

    def as_dict(self) -> dict:
        """Return the analysis as JSON-able data.

        Returns
        -------
        dict
            Model, parameters, N, ``rtt_s`` (s), ``capacity_pps`` (packets/s), ``loop``, the margins
            (``phase_margin_deg``, ``phase_margin_unwrapped_deg`` in degrees, ``gain_margin``,
            ``gain_margin_lower`` (factors), ``crossover_rad_s``, ``phase_crossover_rad_s`` (rad/s),
            ``delay_margin_s``, ``critical_delay_s`` (s), ``stable``), the rightmost root
            ``[real, imag]`` (1/s and rad/s), its residual, the root status and certified line (1/s),
            ``consistent``, ``status`` and ``messages``.
        """
        m = self.margins
        rm = self.roots.rightmost_per_s
        return {"model": self.model, "params": self.params, "n_flows": self.n_flows, "rtt_s": self.rtt_s,
                "capacity_pps": self.capacity_pps, "loop": self.loop,
                "phase_margin_deg": m.phase_margin_deg, "phase_margin_unwrapped_deg": m.phase_margin_unwrapped_deg,
                "gain_margin": m.gain_margin,
                "gain_margin_lower": m.gain_margin_lower, "crossover_rad_s": m.crossover_rad_s,
                "phase_crossover_rad_s": m.phase_crossover_rad_s, "delay_margin_s": m.delay_margin_s,
                "critical_delay_s": m.critical_delay_s, "stable": m.stable,
                "rightmost_root_per_s": [rm.real, rm.imag], "root_residual": float(self.roots.residuals[0])
                if self.roots.residuals.size else math.nan, "root_status": self.roots.status,
                "roots_certified_right_of_per_s": self.roots.certified_right_of_per_s,
                "consistent": self.consistent, "status": self.status, "messages": list(self.messages)}


#: models whose synchronous loop the symbolic layer cannot build yet (their equilibrium solve fails or hangs)
NOT_LINEARIZED = ("hstcp", "stcp")


def analyze(model="aecp", *, n_flows=4, rtt_s=0.1, capacity_pps=1000.0, n_nodes=None, **params) -> LoopAnalysis:
    """Linearize ``model`` (N synchronous flows, one link) and analyse it.

    Margins (delay exact) and certified characteristic roots of the same loop, with a verdict on
    whether they agree.

    Parameters
    ----------
    model : str
        Registry name (not ``hstcp``/``stcp``: :data:`NOT_LINEARIZED`).
    n_flows : int
        Number of synchronous flows N.
    rtt_s : float
        Round-trip (= feedback) delay (s, > 0).
    capacity_pps : float
        Bottleneck capacity (packets/s, > 0).
    n_nodes : int or None, optional
        Chebyshev degree of the root collocation (:func:`ecocc.stability.characteristic_roots`); None: automatic.
    **params
        Model parameter overrides, e.g. ``alpha_per_s=1``.

    Returns
    -------
    LoopAnalysis
        ``status`` ``"ok"`` (frequency and root verdicts agree), ``"inconsistent"`` (they disagree, said in
        ``messages``) or ``"uncertain"`` (roots not certified).

    Raises
    ------
    InputError
        For a model without a linearization, unknown or out-of-range parameters, or a bad RTT or capacity.
    """
    from ..models import get_model
    m = get_model(model)
    if m.name in NOT_LINEARIZED:
        # SymPy's solve of their equilibrium does not finish (stcp: minutes) or fails (hstcp): refuse, don't hang
        from ..errors import InputError
        linear = sorted(set(__import__("ecocc.models", fromlist=["REGISTRY"]).REGISTRY) - set(NOT_LINEARIZED))
        raise InputError("model", m.name, f"a model the linear tools support: one of {linear} (the loss-based "
                         f"{', '.join(NOT_LINEARIZED)} have no linearization yet; simulate them instead)")
    P = m.make_params(None, **params)   # validates names and values
    rtt = check_finite("rtt_s", rtt_s, positive=True)
    C = check_finite("capacity_pps", capacity_pps, positive=True)
    if m.name == "reno":
        from .reno_loop import reno_loop
        rl = reno_loop(int(n_flows), C, rtt, P)
        loop_text, loop_msgs = rl.label, ("reno: the model as simulated (RED drops never queued); margins of its "
                                          "transfer function under Hollot et al. 2001's dW(t - tau) ~ dW(t), roots "
                                          "of the full linearization; the classic model (drops queued) is "
                                          "reno_loop(..., reading='hmtg')",)
    else:
        lp = _loop(m.name, int(n_flows))
        numeric = {k: getattr(P, k) for k, v in lp.param_symbols.items() if hasattr(v, "is_Symbol") and v.is_Symbol}
        rl = lp.rational(rtt_s=rtt, capacity_pps=C, **numeric)
        loop_text, loop_msgs = str(lp.L), lp.messages
    mr = margins(rl)
    roots = characteristic_roots(rl.A0, [rl.A1], [rtt], n_nodes=n_nodes)
    msgs = list(loop_msgs) + list(mr.messages) + list(roots.messages)
    if roots.certified:
        consistent = roots.stable == mr.stable
        status = "ok" if consistent else "inconsistent"
    elif roots.status == "uncertain" and roots.rightmost_per_s.real > 0:
        consistent = not mr.stable   # a converged right-half-plane root: unstable without a count
        status = "ok" if consistent else "inconsistent"
    else:
        consistent, status = False, "uncertain"
        msgs.append(f"characteristic roots {roots.status}: the root verdict is not certified")
    if status == "inconsistent":
        msgs.append(f"frequency verdict stable={mr.stable} but rightmost root {roots.rightmost_per_s:.4g}")
    return LoopAnalysis(m.name, P.as_dict(), int(n_flows), rtt, C, loop_text, mr, roots, consistent,
                        status, tuple(msgs), rl)


@dataclass(frozen=True)
class SimDecay:
    """Decay of a nonlinear simulation towards the equilibrium.

    Attributes
    ----------
    growth_per_s : float
        Slope of ``log(peak |x - x*|)`` over the second half of the run (1/s);
        negative = decaying.
    decays : bool
        Deviation in the last quarter is below ``decay_ratio`` of the one in
        the first quarter after the transient.
    amplitude_first, amplitude_last : float
        Largest ``|x - x*|`` (packets/s, flow 1) in the second and last quarter.
    status : str
    regime : str
        ``"settled"`` (``amplitude_last`` below ``settle_fraction`` of the
        initial perturbation ``perturbation C/N``), ``"decaying_not_settled"``
        (``decays`` but not settled), ``"growing_or_limit_cycle"`` (neither),
        or ``"failed"`` when the run did not succeed.
    """

    growth_per_s: float
    decays: bool
    amplitude_first: float
    amplitude_last: float
    status: str
    regime: str = "not_classified"


def simulate_decay(model="aecp", *, n_flows=2, rtt_s=0.1, capacity_pps=1000.0, t_end_s=60.0,
                   perturbation=0.05, decay_ratio=0.5, target_queue_pkts=None, settle_fraction=0.01,
                   past="silent", load_rtt="current", **params) -> SimDecay:
    """Simulate ``model`` on a perturbed dumbbell and judge the decay from the trajectory.

    The network is ``dumbbell(capacity_pps, [rtt_s]*n_flows)`` and the flows start at rates
    ``(1 + perturbation) C/N``.  Three regimes: settled (the last quarter's deviation is below
    ``settle_fraction`` of the initial perturbation), decaying but not settled (``decays``: the last
    quarter's deviation is below ``decay_ratio`` times the second quarter's), growing or limit cycle.

    Parameters
    ----------
    model : str
        Registry name.
    n_flows : int
        Number of flows N.
    rtt_s : float
        RTT of every flow, seconds.
    capacity_pps : float
        Bottleneck capacity C, packets/s.
    t_end_s : float
        Simulated time, seconds (output every ``min(0.01, rtt_s/5)`` s).
    perturbation : float
        Relative rate offset at the start (0.05: 5 % above the fair share).
    decay_ratio : float
        ``decays`` when the last quarter's largest deviation is below this times the second quarter's.
    target_queue_pkts : float or None
        Target queue of the bottleneck, packets (None: the model's parameter).
    settle_fraction : float
        Settled when the last quarter's largest deviation is below this fraction of
        ``perturbation C/N``.
    past : {"silent", "steady"}
        The past before ``t = 0`` (:func:`ecocc.simulate`'s ``past``): ``"silent"`` (default) no traffic
        before the flows start, ``"steady"`` the flows were sending at their initial rates before it.
    load_rtt : {"current", "sent"}
        How a delayed Reno-type rate ``W/(tau + Q)`` is read (:func:`ecocc.simulate`'s ``load_rtt``):
        ``"current"`` (default) with the current queueing delay, ``"sent"`` with the one at the sending time.
    **params
        Model parameter overrides.

    Returns
    -------
    SimDecay
        Envelope growth rate (1/s), the amplitudes (packets/s) of flow 1's deviation from the model's
        equilibrium rate (C/N if it has none), ``decays``, the run status and the regime (``"failed"``
        when the run did not succeed).

    Raises
    ------
    InputError
        For a bad network or parameter (from :func:`ecocc.dumbbell` and :func:`ecocc.simulate`).
    """
    from ..network import dumbbell
    from ..simulate import simulate
    net = dumbbell(capacity_pps, [rtt_s] * n_flows, initial_rate_pps=(1 + perturbation) * capacity_pps / n_flows,
                   target_queue_pkts=target_queue_pkts)
    tr = simulate(net, model, t_end_s=t_end_s, output_dt_s=min(0.01, rtt_s / 5), past=past, load_rtt=load_rtt,
                  **params)
    eq = tr.equilibrium or {}
    xs = float(np.asarray(eq.get("rate_pps", [capacity_pps / n_flows]))[0])
    dev = np.abs(tr.rate_pps[:, 0] - xs)
    t = tr.t_s
    n = t.size
    a1 = float(dev[n // 4: n // 2].max()); a2 = float(dev[3 * n // 4:].max())
    # local maxima of the deviation in the second half -> envelope slope
    h = dev[n // 2:]; th = t[n // 2:]
    pk = np.nonzero((h[1:-1] >= h[:-2]) & (h[1:-1] >= h[2:]) & (h[1:-1] > 0))[0] + 1
    if pk.size >= 3:
        g = float(np.polyfit(th[pk], np.log(h[pk]), 1)[0])
    else:
        g = float(np.polyfit(th, np.log(np.maximum(h, 1e-300)), 1)[0])
    decays = bool(a2 < decay_ratio * a1)
    if str(getattr(tr.status, "value", tr.status)) != "success":
        regime = "failed"
    elif a2 < settle_fraction * perturbation * capacity_pps / n_flows:
        regime = "settled"
    else:
        regime = "decaying_not_settled" if decays else "growing_or_limit_cycle"
    return SimDecay(g, decays, a1, a2, str(getattr(tr.status, "value", tr.status)), regime)
