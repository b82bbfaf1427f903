"""Protocols side by side: the same network, one separate run per model (fluid models only;
``ecocc compare`` is the packet-vs-fluid command of :mod:`ecocc.packet`, a different thing).

:func:`compare_protocols` loops over :data:`ecocc.models.REGISTRY` (or a
list of names), so a model added to the registry appears in the comparison
without any change here.  A model that cannot run the scenario gets a row
with ``status = "error"`` and the message; nothing is dropped silently.
"""
from __future__ import annotations

import time

import numpy as np

from .errors import EcoccError, InputError, check_finite


def compare_protocols(network, models=None, *, t_end_s: float, window_s: float | None = None,
                      output_dt_s: float | None = None, **simulate_kw) -> list[dict]:
    """Simulate every model on ``network`` (separate runs) and summarise each.

    Parameters
    ----------
    network : Network
        The network every model runs on.
    models : sequence of str, optional
        Registry names (default: every model in :data:`ecocc.models.REGISTRY`, sorted).
    t_end_s : float
        Simulated time of each run (s).
    window_s : float, optional
        Final window the means are taken over (s; default 20 % of the run).
    output_dt_s : float, optional
        Sampling interval (s) of the trajectories.
    **simulate_kw
        Passed to :func:`ecocc.simulate` (e.g. ``rtol``).

    Returns
    -------
    list of dict
        One row per model: ``model``, ``status`` (the solver status or
        ``"error"``), ``message``, ``engine``, ``wall_s`` (s), ``utilization``
        (bottleneck, the most loaded link), ``mean_queue_pkts``,
        ``loss_ratio``, ``jain_index`` (active flows), ``rates_mbps`` (mean
        per flow, at the network's ``packet_bytes``), ``trajectory`` (the :class:`Trajectory`, or ``None``).

    Raises
    ------
    InputError
        For a bad ``t_end_s`` or ``window_s`` or an unknown model name (a run that fails on its own
        input is a row with ``status = "error"``, not an exception).
    """
    from .dde.engine import SUPPORTED_MODELS, check_engine
    from .models import REGISTRY
    from .simulate import simulate
    t_end = check_finite("t_end_s", t_end_s, positive=True)
    w = 0.2 * t_end if window_s is None else check_finite("window_s", window_s, positive=True)
    names = sorted(REGISTRY) if models is None else list(models)
    rows = []
    for name in names:
        if name not in REGISTRY:
            raise InputError("model", name, f"one of {sorted(REGISTRY)}")
        engine = "numpy"
        if name in SUPPORTED_MODELS:  # the compiled kernel where it covers the model and the network
            try:
                check_engine("numba", REGISTRY[name](), network, kernel="adaptive")
                engine = "numba"
            except InputError:
                engine = "numpy"
        t0 = time.perf_counter()
        try:
            tr = simulate(network, name, t_end_s=t_end, output_dt_s=output_dt_s, summary_window_s=w,
                          engine=engine, **simulate_kw)
        except EcoccError as exc:
            rows.append(dict(model=name, status="error", message=str(exc), engine=engine,
                             wall_s=time.perf_counter() - t0, utilization=np.nan, mean_queue_pkts=np.nan,
                             loss_ratio=np.nan, jain_index=np.nan, rates_mbps=[], trajectory=None))
            continue
        s = tr.summary(w)
        k = int(np.argmax([lk["utilization"] for lk in s["links"]]))
        lk = s["links"][k]
        rows.append(dict(model=name, status=s["status"], message=s["message"], engine=engine,
                         wall_s=time.perf_counter() - t0, utilization=lk["utilization"],
                         mean_queue_pkts=lk["mean_queue_pkts"], loss_ratio=lk["loss_ratio"],
                         jain_index=s["jain_index"] if s["jain_index"] is not None else np.nan,
                         rates_mbps=[f["mean_rate_mbps"] for f in s["flows"]], trajectory=tr))
    return rows


def format_table(rows) -> str:
    """Format the rows of :func:`compare_protocols` as a fixed-width text table.

    Parameters
    ----------
    rows : list of dict
        Rows of :func:`compare_protocols`.

    Returns
    -------
    str
        A header, a rule and one line per model (utilization, mean queue in packets, loss ratio, Jain index,
        mean rates in Mbit/s at the network's packet size, ``-`` for a flow not active in the summary window),
        plus a ``!`` line with the message of a run
        that did not succeed.
    """
    head = f"{'model':<10} {'status':<9} {'engine':<6} {'util':>7} {'queue (pkts)':>12} {'loss':>9} {'Jain':>7}  rates (Mbps)"
    out = [head, "-" * len(head)]
    for r in rows:
        # a flow not active in the summary window has no mean rate (None): shown as "-"
        rates = " ".join("-" if v is None else f"{v:.2f}" for v in r["rates_mbps"])
        out.append(f"{r['model']:<10} {r['status']:<9} {r['engine']:<6} {r['utilization']:7.4f} "
                   f"{r['mean_queue_pkts']:12.2f} {r['loss_ratio']:9.2e} {r['jain_index']:7.4f}  {rates}")
        if r["status"] != "success":
            out.append(f"    ! {r['message']}")
    return "\n".join(out)


__all__ = ["compare_protocols", "format_table"]
