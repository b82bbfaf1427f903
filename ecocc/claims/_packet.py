"""Packet-level evidence (ns-3, :mod:`ecocc.packet`) for ledger records a fluid model cannot settle.

A check calls :func:`packet_evidence` with a scenario (as the dict :func:`ecocc.scenarios.from_dict`
reads) and gets the numbers of one ns-3 run, cached on disk like the other expensive evidence
(:func:`ecocc.claims.base.cached`; the key adds :func:`ecocc.packet.runner.code_digest`, which covers the
C++ protocol code that :func:`~ecocc.claims.base.code_digest` does not, and the interpreter that ran ns-3).

The run happens only when the ``ns3`` wheel is importable by the child interpreter
(:func:`ecocc.packet.available`) and ``$ECOCC_CLAIMS_PACKET`` is not ``off``.  Otherwise, or if the
run fails, :func:`packet_evidence` returns ``None`` and the reason, and the check writes a reading
with verdict ``not-checkable`` that says the packet check was not run and why
(:func:`not_run_reading`): never a verdict without a run.
"""
from __future__ import annotations

import os

import numpy as np

from .base import Reading, cached

#: environment variable: ``off`` (or 0/no/false) skips the ns-3 runs of the ledger
ENV = "ECOCC_CLAIMS_PACKET"


def packet_enabled() -> tuple[bool, str]:
    """Whether the ledger may run ns-3 now, and why not.

    Returns
    -------
    (bool, str)
        ``(True, "ok")``, or ``(False, reason)`` when ``$ECOCC_CLAIMS_PACKET`` is off or the ``ns3``
        wheel is not importable by the child interpreter (:func:`ecocc.packet.available`).
    """
    v = os.environ.get(ENV, "").strip().lower()
    if v in ("off", "0", "no", "false"):
        return False, f"packet-level checks are switched off ({ENV}={os.environ[ENV]})"
    from ..packet import available
    return available()


def summarize(tr, window_s: tuple[float, float], extra_windows=()) -> dict:
    """The numbers a packet-level reading judges, from one packet run.

    Parameters
    ----------
    tr : Trajectory
        A packet-level run (:func:`ecocc.packet.run_packet`).
    window_s : (float, float)
        Averaging window ``[start, end]`` in seconds.
    extra_windows : sequence of (float, float)
        More windows (s) for which the per-flow goodput is given too (``goodput_pps_extra``).

    Returns
    -------
    dict
        ``status``, ``message``, the window, per flow the sending rate (data packets put on the access
        link, retransmissions included) and the goodput (data packets delivered to the receiver) over
        the window in packets/s, per link the time-mean queue (packets), utilization (departures / C)
        and the lost packets over the window, over the whole run and over each extra window, the loss ratios (lost / offered),
        and ``wall_s``.
    """
    t = tr.t_s
    t0, t1 = float(window_s[0]), float(window_s[1])

    def delta(series):
        return np.array([np.interp(t1, t, series[:, j]) - np.interp(t0, t, series[:, j])
                         for j in range(series.shape[1])])
    dt = t1 - t0
    sent = delta(tr.sent_pkts) / dt
    recv = delta(tr.flow_vars["received"]) / dt
    q = delta(tr.queue_area_pkt_s) / dt
    dep = delta(tr.departed_pkts) / dt
    lost_w = delta(tr.lost_pkts)
    off_w = delta(tr.arrived_pkts)
    lost_all = tr.lost_pkts[-1]
    off_all = tr.arrived_pkts[-1]
    return {
        "status": tr.status.value, "message": tr.message, "window_s": [t0, t1], "t_end_s": float(t[-1]),
        "flows": tr.flow_names, "links": tr.link_names,
        "send_rate_pps": sent.tolist(), "goodput_pps": recv.tolist(),
        "mean_queue_pkts": q.tolist(), "utilization": (dep / tr.capacity_pps).tolist(),
        "lost_pkts_window": lost_w.tolist(), "lost_pkts_run": lost_all.tolist(), "offered_pkts_run": off_all.tolist(),
        "loss_ratio_window": np.where(off_w > 0, lost_w / np.maximum(off_w, 1e-300), 0.0).tolist(),
        "loss_ratio_run": np.where(off_all > 0, lost_all / np.maximum(off_all, 1e-300), 0.0).tolist(),
        "max_bin_queue_pkts": np.max(tr.queue_pkts, axis=0).tolist(),
        "buffers_pkts": tr.solver["buffers_pkts"], "driver_protocol": tr.solver["driver_protocol"],
        "wall_s": tr.solver["wall_s"],
        "extra_windows_s": [list(w) for w in extra_windows],
        "lost_pkts_extra": [[float(np.interp(b, t, tr.lost_pkts[:, k]) - np.interp(a, t, tr.lost_pkts[:, k]))
                             for k in range(len(tr.link_names))] for a, b in extra_windows],
        "goodput_pps_extra": [[float(np.interp(b, t, tr.flow_vars["received"][:, j])
                                     - np.interp(a, t, tr.flow_vars["received"][:, j])) / (b - a)
                               for j in range(len(tr.flow_names))] for a, b in extra_windows],
    }


def packet_evidence(name: str, scenario: dict, window_s: tuple[float, float], *, protocol: str | None = None,
                    seed: int = 1, heavy_min: float = 0.0, extra_windows=(),
                    reverse_flows=None) -> tuple[dict | None, str]:
    """One ns-3 run of ``scenario`` summarised (:func:`summarize`), cached; or ``None`` and why not.

    Parameters
    ----------
    name : str
        Cache name (e.g. ``"petcp.fig3.packet"``).
    scenario : dict
        The scenario as :func:`ecocc.scenarios.from_dict` reads it (part of the cache key).
    window_s : (float, float)
        Averaging window in seconds.
    protocol : str, optional
        Packet-level protocol (:data:`ecocc.packet.PROTOCOLS`); default the scenario model's.
    seed : int
        ns-3 random seed.
    extra_windows : sequence of (float, float)
        More windows (s) for the per-flow goodput (:func:`summarize`).
    reverse_flows : list of dict, optional
        Reverse-path flows (:func:`ecocc.packet.spec.build_spec`), part of the cache key.
    heavy_min : float
        Expected wall time of the run in minutes, when it is long (0: a short run).  A run of 10 minutes or more
        happens only with ``$ECOCC_CLAIMS_PACKET=all`` (or from the cache), so that a default ``ecocc claims``
        stays within minutes; otherwise the reason says how to run it.

    Returns
    -------
    (dict or None, str)
        The summary and ``"ok"``; or ``None`` and the reason the run did not happen or failed
        (ns-3 not importable, switched off, the child process failed, the simulation stopped early).
    """
    ok, why = packet_enabled()
    if not ok:
        return None, why
    if heavy_min >= 10 and os.environ.get(ENV, "").strip().lower() != "all":
        cached_out = cached(name, None, **_key(scenario, window_s, protocol, seed, extra_windows, reverse_flows),
                            lookup_only=True)
        if cached_out is None:
            return None, (f"a long ns-3 run (about {heavy_min:g} min on 2 cores), run only with {ENV}=all")
        return (cached_out, "ok") if cached_out["status"] == "success" else (
            None, f"the ns-3 run did not finish: {cached_out['message']}")
    from .. import scenarios
    from ..errors import EcoccError
    from ..packet import run_packet

    def go():
        tr = run_packet(scenarios.from_dict(scenario), protocol=protocol, seed=seed, reverse_flows=reverse_flows)
        return summarize(tr, window_s, extra_windows)
    try:
        out = cached(name, go, **_key(scenario, window_s, protocol, seed, extra_windows, reverse_flows))
    except EcoccError as exc:
        return None, f"the ns-3 run failed: {str(exc).splitlines()[0]}"
    if out["status"] != "success":
        return None, f"the ns-3 run did not finish: {out['message']}"
    return out, "ok"


def _key(scenario, window_s, protocol, seed, extra_windows=(), reverse_flows=None) -> dict:
    """The cache key of a packet run: the scenario, windows, protocol, seed, packet code and interpreter."""
    from ..packet.runner import code_digest, ns3_python
    extra = {} if reverse_flows is None else {"reverse_flows": reverse_flows}  # keys of older runs unchanged
    return {**extra, "scenario": scenario, "window": list(window_s), "extra_windows": [list(w) for w in extra_windows],
            "protocol": protocol, "seed": seed, "packet_code": code_digest(), "python": ns3_python()}


def not_run_reading(name: str, why: str, what: str) -> Reading:
    """The reading of a packet check that did not run: verdict ``not-checkable``, with the reason.

    Parameters
    ----------
    name : str
        Reading name.
    why : str
        Why the run did not happen (from :func:`packet_evidence`).
    what : str
        The run that would settle it (scenario, protocol), in words.

    Returns
    -------
    Reading
    """
    return Reading(name, "not-checkable", f"packet check not run: {why}. It would run {what}.",
                   {"packet_run": None, "why_not_run": why})


def combine(verdicts) -> str:
    """The verdict of a statement that is the conjunction of parts with these verdicts.

    ``fails`` if any part fails; otherwise ``not-checkable`` if any part is; otherwise ``approximate``
    if any part is; otherwise ``holds``.

    Parameters
    ----------
    verdicts : iterable of str

    Returns
    -------
    str
    """
    v = list(verdicts)
    for k in ("fails", "not-checkable", "approximate"):
        if k in v:
            return k
    return "holds"
