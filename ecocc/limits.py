"""Upper bounds on the size of a run, checked before it starts.

A value that is valid in itself can make a run that never ends or exhausts
memory: an RTT of a nanosecond, a gain of 10^6 /s, an output step of a
microsecond over hours.  :func:`check_run_size` estimates the work and the
memory of a simulation from its inputs and refuses, with an
:class:`~ecocc.errors.InputError` naming the field, those beyond the bounds
below.  Each bound is stated with its reason; they are far above every
scenario of the papers (the largest: 4.4e4 solver steps, 2e4 output samples).
"""
from __future__ import annotations

import math

from .errors import InputError

#: at most this many solver steps, estimated from below.  The adaptive solver never steps past the smallest
#: delay (so at least ``t_end / min_delay`` steps) and an explicit Runge-Kutta step is stable only up to about
#: ``3.3 / gain`` (so at least ``gain t_end / 3.3`` steps for every gain in 1/s).  A NumPy step costs 0.1-5 ms
#: (measured on the shipped scenarios), so 10^7 steps are 15 minutes to 14 hours: beyond that a run looks
#: like a hang.  The compiled engine is ~100x faster per step but the same bound is kept for simplicity.
MAX_STEPS = 10_000_000

#: at most this many stored output values (output samples x (flows + links) x ~4 series): 5e8 floats would
#: be 4 GB; a Trajectory keeps several arrays of this size, so 10^8 values (0.8 GB each) is the ceiling.
MAX_OUTPUT_VALUES = 100_000_000

#: at most this many points in a stability map (roots or simulation): 10^6 points are about 20 minutes with the
#: compiled map kernel (~1 ms a point) and days with the NumPy engine; the result arrays grow with points x links
MAX_MAP_POINTS = 1_000_000

#: at most this many flows + links in one network: the routing matrix, the per-step arrays and the history grow
#: with it.  Issue #14's scale case (10^5 flows on 10^3 links) is inside it.  Measured there (compiled engine,
#: AECP, 3 s simulated): 314 MiB peak; the compiled history keeps only the components read through a delay
#: (10^3 link columns for AECP, N + L = 1.01e5 for models whose own or load term reads the flows' past: 2.4 MB
#: a node, nodes over 1.5 x the largest delay), the NumPy solver keeps every component (2.06e5 here).
MAX_ELEMENTS = 200_000


def estimated_steps(network, params: dict, t_end_s: float, rtt_scale_min: float = 1.0) -> tuple[float, str]:
    """Lower estimate of the adaptive solver's steps.

    Parameters
    ----------
    network : Network
        The network (its smallest delay caps the step).
    params : dict
        Model parameters (all of them: names ending in ``_per_s`` are read as gains in 1/s).
    t_end_s : float
        Simulated time in seconds.
    rtt_scale_min : float
        Smallest factor applied to the delays (a sweep over ``rtt_scale``).

    Returns
    -------
    steps : float
        ``max(t_end / smallest delay, gain t_end / 3.3)``.
    field : str
        The input that forces it (``"rtt_s"`` or a gain's name).
    """
    from .network import Network
    assert isinstance(network, Network)
    delays = [f.rtt_s for f in network.flows]
    delays += [d for f in network.flows if f.forward_delays_s for d in f.forward_delays_s if d > 0]
    min_delay = min(delays) * rtt_scale_min if delays else math.inf
    best = (t_end_s / min_delay if min_delay > 0 else math.inf, "rtt_s")
    for k, v in params.items():
        if k.endswith("_per_s") and isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0:
            n = v * t_end_s / 3.3
            if n > best[0]:
                best = (n, k)
    return best


def check_run_size(network, model, params: dict, t_end_s: float, output_dt_s=None, *, axes=None, step_s=None,
                   max_step_s=math.inf) -> None:
    """Refuse a run (or every point of a sweep over ``axes``) beyond :data:`MAX_STEPS`,
    :data:`MAX_OUTPUT_VALUES` or :data:`MAX_ELEMENTS`.

    Parameters
    ----------
    network : Network
        The network (delays, flows and links).
    model : str or NetworkModel
        Its default parameters are used where ``params`` has none.
    params : dict
        Model parameter overrides.
    t_end_s : float
        Simulated time in seconds.
    output_dt_s : float, optional
        Output sampling step in seconds (default ``t_end_s / 2000``).
    axes : dict, optional
        Sweep axes ``name -> values``: the worst value of each is checked.
    step_s : float, optional
        Fixed step (s) of the fixed-step solver: ``t_end_s / step_s`` steps.
    max_step_s : float
        Largest step of the adaptive solver (s): at least ``t_end_s / max_step_s`` steps.

    Raises
    ------
    InputError
        Naming the input that makes the run too large.
    """
    from .models import get_model
    m = get_model(model)
    full = params.as_dict() if isinstance(params, m.Params) else m.make_params(None, **params).as_dict()
    scale_min = 1.0
    if axes:
        for name, vals in axes.items():
            if name == "rtt_scale":
                scale_min = min(float(v) for v in vals)
            elif name.endswith("_per_s"):
                full[name] = max(float(v) for v in vals)
    n_el = network.n_flows + network.n_links
    if n_el > MAX_ELEMENTS:
        raise InputError("network", f"{network.n_flows} flows + {network.n_links} links",
                         f"at most {MAX_ELEMENTS} flows + links (ecocc.limits.MAX_ELEMENTS)")
    steps, field = estimated_steps(network, full, t_end_s, scale_min)
    for name, h in (("step_s", step_s), ("max_step_s", max_step_s)):
        if h is not None and h > 0 and t_end_s / h > MAX_STEPS:
            raise InputError(name, h, f"a step giving at most {MAX_STEPS:.0e} steps over t_end_s = {t_end_s:g} s "
                             f"(here {t_end_s / h:.2g})")
    if steps > MAX_STEPS:
        why = ("the solver steps at most the smallest delay" if field == "rtt_s"
               else f"an explicit step is stable up to ~3.3/{field}")
        raise InputError(field if field != "rtt_s" else "rtt_s (smallest delay)",
                         _short(min(f.rtt_s for f in network.flows) * scale_min) if field == "rtt_s" else full[field],
                         f"a value for which t_end_s = {t_end_s:g} s needs at most {MAX_STEPS:.0e} solver steps "
                         f"({why}: about {steps:.2g} steps here); shorten t_end_s or change the value")
    dt = t_end_s / 2000 if output_dt_s is None else float(output_dt_s)
    n_out = t_end_s / dt + 1
    values = n_out * 4 * n_el
    if values > MAX_OUTPUT_VALUES:
        raise InputError("output_dt_s", dt, f"a step giving at most {MAX_OUTPUT_VALUES:.0e} stored values "
                         f"(here {n_out:.3g} samples x 4 series x {n_el} flows+links = {values:.2g}; ~8 bytes each)")


def _short(v):
    return float(f"{v:.6g}")


__all__ = ["MAX_MAP_POINTS", "MAX_ELEMENTS", "MAX_OUTPUT_VALUES", "MAX_STEPS", "check_run_size", "estimated_steps"]
