"""Reproduce the papers' experiments: run scenarios, compare with the papers.

A scenario file named ``<paper>-fig<N>`` or ``<paper>-table<N>`` carries a
``[reproduce]`` table that says what the paper ran and what it reports::

    [reproduce]
    protocols = ["cltcp", "xcp"]        # one run per protocol on the same topology (a comparison
                                        # overlays separate runs); ["mixed"]: one run of the flows
                                        # with their own protocols on one network (ecocc.mixed)
    plot = ["rate", "queue"]            # time series figures (default), or the sweep's metrics
    [reproduce.params.xcp]              # parameters per protocol (the scenario's own model
    alpha = 0.4                         # takes [params])
    [reproduce.sweep]                   # optional: the paper's x axis
    axis = "capacity_mbps"              # capacity_mbps | rtt_ms | n_flows | buffer_bdp | epsilon_per_s
                                        # (any parameter; "mixed": member__field, e.g. symbiosis__gamma)
    values = [10, 100, 1000]
    link = "bottleneck"                 # which link the axis and the metrics refer to
    duration_s = 60                     # per point (default: the scenario's)
    metrics = ["utilization", "queue_pkts"]
    cross_fraction = 0.2                # couplings the paper states: cross traffic = 0.2 x capacity,
    physical_bw = "capacity"            # K_i = capacity (or "min_access": min(access bandwidth, capacity)),
    buffer_bdp = 1.0                    # buffer = 1.0 x capacity x RTT,
    rtt_ms_per_unit = 2.0               # rtt_ms axis: RTT = 2 x value + rtt_offset_ms
    rtt_offset_ms = 10.0
    fast_alpha_pkts_per_mbps = 1.0      # FAST's alpha scaled with the capacity (002 Section IV-A)
    [[reproduce.paper]]                 # one number the paper reports
    quantity = "rate_mbps"              # rate_mbps | utilization | queue_pkts | loss_ratio |
                                        # convergence_time_s | jain | rate_ratio
    over = "f2"                         # rate_ratio only: rate of flow over rate of this flow
    protocol = "cltcp"
    flow = "f1"                         # rate_mbps only
    window_s = [360, 400]               # time window of the mean (default: the summary window)
    at = 100                            # sweep value it refers to (sweeps only)
    value = 30
    tolerance_rel = 0.05                # or tolerance_abs; with tolerance_why
    tolerance_why = "the paper reads rates off a plot to ~1 Mbps"
    section = "001 Section VI.C"
    quote = "the throughput of flow 1 and flow 3 both achieve 30Mbps"
    why = "..."                         # known reason if the fluid model differs

Measurements come from the runs only: means over windows of the cumulative
counters (exact between output samples), convergence time = first time the
link's load (flows plus cross traffic) reaches 99 % of its capacity after the
first flow starts (002 Section IV-C's definition, for the link).
"""
from __future__ import annotations

import dataclasses
import math
import time
from pathlib import Path

import numpy as np

from .errors import InputError, check
from .units import mbps_to_pps, pps_to_mbps

PAPERS = {
    "petcp": "000 Huang et al., PE-TCP",
    "cltcp": "001 Huang et al., CLTCP",
    "symbiosis": "002 Hasegawa & Murata, TCP Symbiosis",
    "iguchi": "003 Iguchi, Hasegawa & Murata",
    "aecp": "004 Huang et al., AECP (JPDC 2010)",
}
QUANTITIES = ("rate_mbps", "utilization", "queue_pkts", "loss_ratio", "convergence_time_s", "jain", "rate_ratio")
UNITS = {"rate_mbps": "Mbps", "utilization": "", "queue_pkts": "packets", "loss_ratio": "",
         "convergence_time_s": "s", "jain": "", "rate_ratio": ""}
MIXED = "mixed"  # [reproduce].protocols entry: the flows with their own protocols in one run (ecocc.mixed)
LABELS = {"rate_mbps": "throughput (Mbps)", "utilization": "link utilization (fraction of capacity)",
          "queue_pkts": "mean queue length (packets)", "loss_ratio": "packet loss ratio (lost / arrived)",
          "convergence_time_s": "convergence time to 99 % of capacity (s)", "jain": "Jain fairness index",
          "rate_ratio": "throughput ratio (flow / other flow)"}
AXIS_LABELS = {"capacity_mbps": "bottleneck bandwidth (Mbps)", "rtt_ms": "one-way bottleneck delay (ms)",
               "buffer_bdp": "buffer (multiples of the bandwidth-delay product)",
               "n_flows": "number of flows", "epsilon_per_s": "intrinsic growth rate epsilon (1/s)"}
MAX_SAMPLES = 3000


def reproducible() -> list[str]:
    """List the shipped scenarios named after a paper figure or table.

    Returns
    -------
    list of str
        Names ``<paper>-fig<N>...`` or ``<paper>-table<N>...`` whose paper prefix is a key of :data:`PAPERS`.
    """
    from . import scenarios
    return [n for n in scenarios.shipped() if n.split("-")[0] in PAPERS and ("-fig" in n or "-table" in n)]


# ----------------------------------------------------------------------------- planning
@dataclasses.dataclass(frozen=True)
class Task:
    """One simulation: a scenario, a protocol, and (for sweeps) an axis value.

    Parameters
    ----------
    scenario : str
        Scenario name.
    protocol : str
        Registry model name.
    at : float or None, optional
        Sweep axis value (unit of the axis); None for a scenario without a sweep.
    """

    scenario: str
    protocol: str
    at: float | None = None

    @property
    def label(self):
        return f"{self.scenario}/{self.protocol}" + ("" if self.at is None else f"@{self.at:g}")


def _spec(sc):
    rep = dict(sc.reproduce or {})
    protos = rep.get("protocols", [sc.model])
    check(isinstance(protos, list) and protos, f"{sc.name} [reproduce].protocols", protos, "a non-empty list")
    from .models import REGISTRY
    for p in protos:
        if p == MIXED:
            check(len({f.protocol for f in sc.network.flows}) > 1, f"{sc.name} [reproduce].protocols", p,
                  "'mixed' only in a scenario whose flows name several protocols")
            continue
        check(p in REGISTRY, f"{sc.name} [reproduce].protocols", p, f"one of {sorted(REGISTRY)} or 'mixed'")
    for rec in rep.get("paper", []):
        check(rec.get("quantity") in QUANTITIES, f"{sc.name} [[reproduce.paper]].quantity", rec.get("quantity"),
              f"one of {QUANTITIES}")
        check("value" in rec or "claim" in rec, f"{sc.name} [[reproduce.paper]].value", None,
              "a number, or a claim (the paper's words when it gives no number)")
        if rec.get("quantity") == "rate_ratio":
            check(isinstance(rec.get("flow"), str) and isinstance(rec.get("over"), str),
                  f"{sc.name} [[reproduce.paper]].over", rec.get("over"), "rate_ratio: flow and over, two flow names")
    return rep, protos


def plan(name: str) -> list[Task]:
    """List the simulations ``reproduce NAME`` needs.

    Parameters
    ----------
    name : str
        A shipped scenario name or a ``.toml`` path with a ``[reproduce]`` table (or none: the scenario's
        own model, one run).

    Returns
    -------
    list of Task
        One task per protocol, times one per sweep value when the scenario has ``[reproduce.sweep]``.

    Raises
    ------
    InputError
        For a scenario that cannot be loaded, ``[reproduce].protocols`` not a non-empty list of registry
        models, or a ``[[reproduce.paper]]`` entry with an unknown quantity or neither value nor claim.
    """
    from . import scenarios
    sc = scenarios.load(name)
    rep, protos = _spec(sc)
    sw = rep.get("sweep")
    if sw:
        return [Task(name, p, float(v)) for p in protos for v in sw["values"]]
    return [Task(name, p) for p in protos]


# ----------------------------------------------------------------------------- variants
def _params_for(sc, protocol, rep):
    from .models import get_model
    if protocol == MIXED:  # prefixed overrides member__field (ecocc.mixed); the members' tables come from the file
        return dict((rep.get("params", {}) or {}).get(MIXED, {}))
    params = dict(sc.params) if protocol == sc.model else {}
    params.update((rep.get("params", {}) or {}).get(protocol, {}))
    m = get_model(protocol)
    names = set(m.Params.field_names())
    return {k: v for k, v in params.items() if k in names}


def variant(sc, protocol: str, at=None):
    """Build the network, parameters and duration of one task (the sweep couplings applied).

    Parameters
    ----------
    sc : Scenario
        The loaded scenario.
    protocol : str
        Registry model name of the run.
    at : float or None, optional
        The sweep axis value (Mbps for ``capacity_mbps``, ms for ``rtt_ms``, a count for ``n_flows``,
        else the parameter's own unit); None: the scenario as written.

    Returns
    -------
    network : Network
        The network of the run (capacities packets/s, delays seconds).
    params : dict
        Parameter overrides of ``protocol`` (the scenario's ``[params]`` for its own model, then
        ``[reproduce.params.<protocol>]``, then the swept parameter), restricted to the model's fields.
    duration_s : float
        Simulated time, seconds.

    Raises
    ------
    InputError
        For an ``n_flows`` sweep value below 1, or a varied network the :class:`Network` checks refuse.
    """
    rep = sc.reproduce or {}
    net = sc.network
    params = _params_for(sc, protocol, rep)
    duration = float(sc.duration_s)
    sw = rep.get("sweep")
    if sw and at is not None:
        duration = float(sw.get("duration_s", duration))
        axis = sw["axis"]
        li = net.link_index(sw.get("link", net.links[0].name))
        links, flows, cts = list(net.links), list(net.flows), list(net.cross_traffic)
        if axis == "capacity_mbps":
            links[li] = dataclasses.replace(links[li], capacity_pps=mbps_to_pps(at, net.packet_bytes))
        elif axis == "rtt_ms":
            rtt = (float(sw.get("rtt_ms_per_unit", 1.0)) * at + float(sw.get("rtt_offset_ms", 0.0))) * 1e-3
            flows = [dataclasses.replace(f, rtt_s=rtt, forward_delays_s=None) for f in flows]
        elif axis == "n_flows":
            n = int(round(at))
            check(n >= 1, "sweep n_flows", at, "an integer >= 1")
            f0 = flows[0]
            flows = [dataclasses.replace(f0, name=f"f{k + 1}") for k in range(n)]
        elif axis == "buffer_bdp":
            check(at > 0, "sweep buffer_bdp", at, "a positive multiple of the bandwidth-delay product")
            C_ax = links[li].capacity_pps
            links[li] = dataclasses.replace(links[li], buffer_pkts=max(at * C_ax * max(f.rtt_s for f in flows), 1.0))
        else:  # a model parameter (mixed runs: member__field)
            params = dict(params)
            params[axis] = at
        C = links[li].capacity_pps
        if "cross_fraction" in sw:
            from .network import CrossTraffic
            cts = [c for c in cts if c.link != links[li].name]
            cts.append(CrossTraffic(links[li].name, kind="constant", rate_pps=float(sw["cross_fraction"]) * C))
        pb = sw.get("physical_bw")
        if pb == "capacity":
            flows = [dataclasses.replace(f, physical_bw_pps=C * float(sw.get("physical_bw_factor", 1.0))) for f in flows]
        elif pb == "min_access":
            flows = [dataclasses.replace(f, physical_bw_pps=min(f.physical_bw_pps or math.inf, C)) for f in flows]
        if "buffer_bdp" in sw:
            rtt_ref = max(f.rtt_s for f in flows)
            links[li] = dataclasses.replace(links[li], buffer_pkts=max(float(sw["buffer_bdp"]) * C * rtt_ref, 1.0))
        if protocol == "fast" and "fast_alpha_pkts_per_mbps" in sw and axis == "capacity_mbps":
            params = dict(params)
            params["alpha_pkts"] = float(sw["fast_alpha_pkts_per_mbps"]) * at
        net = dataclasses.replace(net, links=tuple(links), flows=tuple(flows), cross_traffic=tuple(cts))
        net = type(net)(net.links, net.flows, net.cross_traffic, delay_split=net.delay_split,
                        packet_bytes=net.packet_bytes, name=net.name)
    return net, params, duration


def run_task(task: Task) -> dict:
    """Simulate one task and return its series downsampled to at most :data:`MAX_SAMPLES` samples.

    A run that raises is reported, not raised: the result then has ``status = "error"`` and the
    exception in ``message``.

    Parameters
    ----------
    task : Task
        Scenario, protocol and sweep value.

    Returns
    -------
    dict
        JSON-able: ``task``, ``status``, ``message``, ``wall_s``, ``cpu_s``, ``params`` and the series
        ``t_s`` (seconds), ``rate_pps``, ``queue_pkts``, the cumulative ``sent_pkts``, ``departed_pkts``,
        ``arrived_pkts``, ``lost_pkts`` (packets), ``queue_area`` (packet-seconds), ``cross_pps``,
        ``active``, plus ``capacity_pps``, names, ``packet_bytes``, ``start_s``, ``summary_window_s`` and
        the model's ``equilibrium`` (or None).
    """
    from . import scenarios
    from .simulate import simulate
    sc = scenarios.load(task.scenario)
    net, params, duration = variant(sc, task.protocol, task.at)
    t0 = time.perf_counter()
    c0 = time.process_time()
    dt = sc.output_dt_s or duration / 2000
    dt = max(dt, duration / MAX_SAMPLES)
    mixed = task.protocol == MIXED
    try:
        tr = simulate(net, sc.model if mixed else task.protocol, t_end_s=duration, output_dt_s=dt,
                      summary_window_s=min(sc.summary_window_s or 0.1 * duration, duration),
                      protocols=(sc.protocols or None) if mixed else None, load_rtt=sc.load_rtt, past=sc.past,
                      rtt_includes_queueing=sc.rtt_includes_queueing, **params)
    except Exception as exc:  # a run that cannot be made is reported with the reason, not hidden
        return {"task": dataclasses.asdict(task), "status": "error", "message": f"{type(exc).__name__}: {exc}",
                "wall_s": time.perf_counter() - t0}
    if tr.cross_pps is not None:
        cross_series = np.asarray(tr.cross_pps)
    else:
        from .system import NetworkSystem
        from .models import get_model
        m = get_model(task.protocol)
        sysm = NetworkSystem(m, net, m.make_params(**params), duration)
        cross_series = sysm.cross(tr.t_s)  # packets/s per link at the samples
    return {
        "task": dataclasses.asdict(task), "status": tr.status.value, "message": tr.message,
        "wall_s": time.perf_counter() - t0, "cpu_s": time.process_time() - c0,
        "params": {k: v for k, v in params.items()},
        "t_s": tr.t_s.tolist(), "rate_pps": tr.rate_pps.tolist(), "queue_pkts": tr.queue_pkts.tolist(),
        "sent_pkts": tr.sent_pkts.tolist(), "departed_pkts": tr.departed_pkts.tolist(),
        "arrived_pkts": tr.arrived_pkts.tolist(), "lost_pkts": tr.lost_pkts.tolist(),
        "queue_area": tr.queue_area_pkt_s.tolist(), "cross_pps": cross_series.tolist(),
        "active": tr.active.astype(int).tolist(), "capacity_pps": tr.capacity_pps.tolist(),
        "flow_names": tr.flow_names, "link_names": tr.link_names, "packet_bytes": tr.packet_bytes,
        "start_s": [f.start_s for f in net.flows],
        "summary_window_s": tr.summary_window_s, "equilibrium": _eq_json(tr.equilibrium),
    }


def _eq_json(eq):
    if not eq or "rate_pps" not in eq:
        return None
    return {"rate_pps": np.asarray(eq["rate_pps"]).tolist(), "queue_pkts": np.asarray(eq["queue_pkts"]).tolist(),
            "source": eq.get("source", "")}


# ----------------------------------------------------------------------------- measuring
class Run:
    """Window measurements on one task's series.

    Parameters
    ----------
    res : dict
        A result of :func:`run_task` (one with ``status = "error"`` has no series: every measure is NaN).
    """

    def __init__(self, res: dict):
        self.res = res
        self.ok = res["status"] == "success"
        if "t_s" not in res:
            return
        self.t = np.asarray(res["t_s"])
        for k in ("rate_pps", "queue_pkts", "sent_pkts", "departed_pkts", "arrived_pkts", "lost_pkts", "queue_area",
                  "cross_pps", "active"):
            setattr(self, k, np.asarray(res[k], dtype=float))
        self.C = np.asarray(res["capacity_pps"])
        self.pb = res["packet_bytes"]

    def _delta(self, series, j, w):
        t0, t1 = w
        return np.interp(t1, self.t, series[:, j]) - np.interp(t0, self.t, series[:, j])

    def window(self, w=None):
        """Return a measurement window clipped to the run.

        Parameters
        ----------
        w : tuple of float or None, optional
            ``(t0, t1)`` in seconds; None: the last ``summary_window_s`` of the run.

        Returns
        -------
        tuple of float
            ``(t0, t1)`` in seconds, ``t1`` no later than the last sample.
        """
        if w is None:
            t1 = float(self.t[-1])
            return (max(float(self.t[0]), t1 - float(self.res["summary_window_s"])), t1)
        return (float(w[0]), min(float(w[1]), float(self.t[-1])))

    def measure(self, quantity, link=0, flow=None, w=None, over=None):
        """One quantity of :data:`QUANTITIES` measured on the run.

        Parameters
        ----------
        quantity : str
            One of :data:`QUANTITIES`: ``rate_mbps`` (a flow's mean sending rate, Mbit/s at the run's
            ``packet_bytes``), ``utilization`` (departures / capacity), ``queue_pkts`` (mean queue, packets),
            ``loss_ratio`` (lost / arrived, 0 without arrivals), ``jain`` (Jain index of the flows active at the
            window's end), ``convergence_time_s`` (seconds, :meth:`convergence_time`, window ignored), ``rate_ratio``
            (one flow's mean rate over another's, ``over``).
        link : int, optional
            Link index for the link quantities.
        flow : str or int or None, optional
            Flow name or index for ``rate_mbps`` (None: the first flow); ``rate_ratio``: the numerator.
        w : tuple of float or None, optional
            ``(t0, t1)`` window in seconds; None: the summary window (:meth:`window`).
        over : str, optional
            ``rate_ratio`` only: the flow in the denominator.

        Returns
        -------
        float
            The measure; NaN for a run without series (and for ``jain`` with no active flow).

        Raises
        ------
        InputError
            For an unknown ``quantity``.
        """
        if "t_s" not in self.res:
            return math.nan
        w = self.window(w)
        dt = max(w[1] - w[0], 1e-300)
        if quantity == "rate_mbps":
            j = self.res["flow_names"].index(flow) if isinstance(flow, str) else int(flow or 0)
            return float(pps_to_mbps(self._delta(self.sent_pkts, j, w) / dt, self.pb))
        if quantity == "rate_ratio":
            names = self.res["flow_names"]
            den = self._delta(self.sent_pkts, names.index(over), w)
            return float(self._delta(self.sent_pkts, names.index(flow), w) / den) if den > 0 else math.nan
        if quantity == "utilization":
            return float(self._delta(self.departed_pkts, link, w) / (self.C[link] * dt))
        if quantity == "queue_pkts":
            return float(self._delta(self.queue_area, link, w) / dt)
        if quantity == "loss_ratio":
            arr = self._delta(self.arrived_pkts, link, w)
            return float(self._delta(self.lost_pkts, link, w) / arr) if arr > 0 else 0.0
        if quantity == "jain":
            from .results import jain_index
            rates = np.array([self._delta(self.sent_pkts, j, w) / dt for j in range(self.sent_pkts.shape[1])])
            act = self.active[np.searchsorted(self.t, w[1]) - 1] > 0
            return float(jain_index(rates[act])) if act.any() else math.nan
        if quantity == "convergence_time_s":
            return self.convergence_time(link)
        raise InputError("quantity", quantity, f"one of {QUANTITIES}")

    def convergence_time(self, link=0):
        """Return the first time the link's load reaches 99 % of its capacity, from the first flow start.

        The load is the arrival rate at the link (flows on it plus cross traffic), the numerical derivative of
        the cumulative arrivals at the output samples (002 Section IV-C's definition, for the link).

        Parameters
        ----------
        link : int, optional
            Link index.

        Returns
        -------
        float
            Seconds after the first flow's start; NaN if never within the run.
        """
        arr = np.gradient(self.arrived_pkts[:, link], self.t)
        reach = np.flatnonzero(arr >= 0.99 * self.C[link])
        t_start = min(self.res["start_s"])
        reach = reach[self.t[reach] >= t_start]
        return float(self.t[reach[0]] - t_start) if reach.size else math.nan


# ----------------------------------------------------------------------------- comparing
@dataclasses.dataclass
class Record:
    """One comparison of a number the paper reports with ecocc's measure of it.

    Attributes
    ----------
    scenario, quantity, protocol : str
        What was compared.
    paper, ecocc : float
        The paper's value and ecocc's (NaN: no number, or not measured), in ``unit``.
    agrees : bool or None
        Within ``tolerance``; None where there is nothing to compare (a claim without a number, a run
        that did not happen).
    unit, where, section, quote, tolerance, why : str
        Unit, the sweep value / flow / window, the paper's section and words, the tolerance as text and
        the known reason of a disagreement (or the run's failure message).
    """
    scenario: str
    quantity: str
    protocol: str
    paper: float
    ecocc: float
    agrees: bool | None
    unit: str = ""
    where: str = ""
    section: str = ""
    quote: str = ""
    tolerance: str = ""
    why: str = ""

    def as_dict(self):
        """Return the record as JSON-able data.

        Returns
        -------
        dict
            The fields, with a non-finite ``paper`` or ``ecocc`` as None.
        """
        d = dataclasses.asdict(self)
        for k in ("paper", "ecocc"):
            v = d[k]
            d[k] = None if v is None or (isinstance(v, float) and not math.isfinite(v)) else v
        return d


def _link_index(res, link):
    if link is None:
        return 0
    return res["link_names"].index(link)


def compare(name: str, results: dict) -> list[Record]:
    """Compare every ``[[reproduce.paper]]`` entry of scenario ``name`` with the runs.

    Parameters
    ----------
    name : str
        Scenario name.
    results : dict
        ``{Task.label: run_task result}`` (:func:`execute`).

    Returns
    -------
    list of Record
        One per entry: ``agrees`` is None for a claim without a number or a missing run; a convergence
        time never reached within a run counts as a disagreement.

    Raises
    ------
    InputError
        For a scenario that cannot be loaded or whose ``[reproduce]`` table is malformed.
    """
    from . import scenarios
    sc = scenarios.load(name)
    rep, protos = _spec(sc)
    sw = rep.get("sweep")
    out = []
    for rec in rep.get("paper", []):
        proto = rec.get("protocol", sc.model)
        at = rec.get("at")
        key = Task(name, proto, None if at is None or not sw else float(at)).label
        res = results.get(key)
        q = rec["quantity"]
        where = []
        if at is not None:
            where.append(f"{sw['axis'] if sw else 'at'}={at:g}")
        if rec.get("flow"):
            where.append(str(rec["flow"]) + (f"/{rec['over']}" if rec.get("over") else ""))
        if rec.get("window_s"):
            where.append("t=[{:g},{:g}] s".format(*rec["window_s"]))
        if res is None or res.get("status") == "error" or "t_s" not in res:
            val = math.nan
            msg = "not run" if res is None else res.get("message", "")
        else:
            run = Run(res)
            val = run.measure(q, link=_link_index(res, rec.get("link")), flow=rec.get("flow"), w=rec.get("window_s"),
                              over=rec.get("over"))
            msg = "" if run.ok else f"run status {res['status']}: {res['message']}"
        if "value" not in rec:  # a claim without a number: ecocc's measure beside the paper's words
            out.append(Record(name, q, proto, math.nan, val, None, UNITS[q], ", ".join(where), rec.get("section", ""),
                              rec.get("quote", ""), "", "paper: " + rec["claim"] + (f"; {rec['why']}" if rec.get("why") else "")))
            continue
        paper = float(rec["value"])
        if "tolerance_abs" in rec:
            tol = float(rec["tolerance_abs"])
            tol_s = f"±{tol:g}"
        else:
            tol = float(rec.get("tolerance_rel", 0.05)) * abs(paper)
            tol_s = f"±{100 * float(rec.get('tolerance_rel', 0.05)):g}%"
        if not math.isfinite(val):
            agrees = False if (q == "convergence_time_s" and res is not None and "t_s" in res) else None
            if agrees is False:
                msg = msg or "did not converge within the run"
        else:
            agrees = abs(val - paper) <= tol + 1e-12
        why = "" if agrees else (rec.get("why") or msg)
        out.append(Record(name, q, proto, paper, val, agrees, UNITS[q], ", ".join(where), rec.get("section", ""),
                          rec.get("quote", ""), tol_s, why))
    return out


# ----------------------------------------------------------------------------- executing
def execute(tasks, *, workers: int = 1, scheduler=None, progress=False):
    """Run tasks locally or on a Dask cluster, as :func:`ecocc.sweeps.run_sweep` does.

    Parameters
    ----------
    tasks : iterable of Task
        The simulations.
    workers : int, optional
        Local processes (1: in this process).
    scheduler : str or None, optional
        Dask scheduler address; None runs locally.
    progress : bool, optional
        Show a progress bar.

    Returns
    -------
    dict
        ``{Task.label: run_task result}``.
    """
    from .sweeps import execute_tasks
    out = {}
    for t, res in execute_tasks(run_task, list(tasks), workers=workers, scheduler=scheduler, progress=progress,
                                desc="reproduce"):
        out[t.label] = res
    return out


def reproduce(names, out_dir="figures", *, workers: int = 1, scheduler=None, progress=False, figures=True):
    """Run the scenarios ``names`` (or ``"all"``), write figures, return ``(records, results, timing)``.

    Parameters
    ----------
    names : str or list of str
        Reproducible scenario names (:func:`reproducible`) or ``"all"``.
    out_dir : path
        Directory of the figures.  It is locked (:class:`ecocc.store.OutputLock`) from before the runs
        until the figures are written, and each figure is written to a temporary file and renamed, so a
        killed run never leaves a torn figure; a rerun removes the temporary files a killed one left.
    workers : int
        Local worker processes.
    scheduler : str, optional
        dask.distributed scheduler address.
    progress : bool
        Show a progress bar.
    figures : bool
        Write the figures (PNG and PDF, one pair per scenario); ``False``: no directory is touched.

    Returns
    -------
    tuple
        ``records`` (list of :class:`Record`), ``results`` (dict: task label -> run result) and ``timing``
        (``wall_s``, ``n_runs``, ``figures``: the paths written, ``cpu_s``, ``run_wall_s``, ``run_cpu_s``;
        seconds).
    """
    if names == "all" or names == ["all"]:
        names = reproducible()
    elif isinstance(names, str):
        names = [names]
    avail = reproducible()
    for n in names:
        check(n in avail, "scenario", n, f"'all' or one of {avail}")
    t0 = time.perf_counter()
    tasks = [t for n in names for t in plan(n)]
    import contextlib

    from .store import OutputLock
    written = []
    # one process writes figures into OUT at a time: the lock is taken before the runs, so a second process
    # on the same OUT is refused at once rather than after its runs
    with (OutputLock(out_dir) if figures else contextlib.nullcontext()) as lock:
        results = execute(tasks, workers=workers, scheduler=scheduler, progress=progress)
        records = [r for n in names for r in compare(n, results)]
        if figures:
            for n in names:
                # temporary files of a run killed while writing this scenario's figures (no other process
                # writes here while the lock is held): removed, the figures below replace them
                for ext in ("png", "pdf"):
                    for stale in lock.out.glob(f".{n}.tmp-*.{ext}"):
                        stale.unlink(missing_ok=True)
                written += plot_scenario(n, results, lock.out)
    wall = time.perf_counter() - t0
    return records, results, {"wall_s": wall, "n_runs": len(tasks), "figures": written,
                              "cpu_s": sum(v.get("cpu_s") or 0.0 for v in results.values()),
                              "run_wall_s": {k: v.get("wall_s") for k, v in results.items()},
                              "run_cpu_s": {k: v.get("cpu_s") for k, v in results.items()}}


# ----------------------------------------------------------------------------- figures
def plot_scenario(name, results, out_dir, level: str = "fluid") -> list[str]:
    """PNG and PDF figures of one scenario (time series per protocol, or sweep metrics).

    Parameters
    ----------
    name : str
        Scenario name.
    results : dict
        Task label -> run result (from :func:`execute`).
    out_dir : path
        Existing directory; each file is written atomically (:func:`ecocc.store.atomic_path`).
    level : {"fluid", "packet"}, optional
        What produced ``results``, named in the title (fluid model or ns-3 packet level).

    Returns
    -------
    list of str
        The paths written (``<out_dir>/<name>.png`` and ``.pdf``).
    """
    where = {"fluid": "fluid model", "packet": "packet level, ns-3"}[level]
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from . import scenarios
    sc = scenarios.load(name)
    rep, protos = _spec(sc)
    sw = rep.get("sweep")
    paths = []
    if sw:
        metrics = sw.get("metrics", ["utilization", "queue_pkts"])
        fig, axes = plt.subplots(1, len(metrics), figsize=(5 * len(metrics), 3.8), squeeze=False)
        vals = [float(v) for v in sw["values"]]
        li = None
        for ax, metric in zip(axes[0], metrics):
            per_flow = sw.get("flows", [None]) if metric == "rate_mbps" else [None]
            if metric == "rate_ratio":  # [reproduce.sweep] ratio = ["flow", "over"]
                per_flow = [tuple(sw["ratio"])]
            for p in protos:
                for fl in per_flow:
                    ys = []
                    for v in vals:
                        res = results.get(Task(name, p, v).label)
                        if res is None or "t_s" not in res:
                            ys.append(math.nan)
                            continue
                        li = _link_index(res, sw.get("link"))
                        ys.append(Run(res).measure(metric, link=li, flow=fl[0], over=fl[1]) if isinstance(fl, tuple)
                                  else Run(res).measure(metric, link=li, flow=fl))
                    lab = p if fl is None else f"{p} {fl[0]}/{fl[1]}" if isinstance(fl, tuple) else f"{p} {fl}"
                    ax.plot(vals, ys, "o-", label=lab)
            for rec in rep.get("paper", []):
                if rec["quantity"] == metric and rec.get("at") is not None and "value" in rec:
                    ax.plot([rec["at"]], [rec["value"]], "kx", ms=9,
                            label="paper" if not any(l.get_label() == "paper" for l in ax.lines) else None)
            ax.set_xlabel(AXIS_LABELS.get(sw["axis"], sw["axis"]))
            ax.set_ylabel(LABELS[metric])
            if max(vals) / max(min(vals), 1e-300) >= 50:
                ax.set_xscale("log")
            ax.grid(True, alpha=0.3)
            ax.legend(fontsize=8)
        import textwrap
        fig.suptitle(textwrap.fill(f"{name} ({where}): {sc.description}", 60 * len(metrics)), fontsize=9)
    else:
        n = len(protos)
        fig, axes = plt.subplots(2, n, figsize=(4.2 * n, 6), squeeze=False, sharex=True)
        for k, p in enumerate(protos):
            res = results.get(Task(name, p).label)
            ax, axq = axes[0, k], axes[1, k]
            ax.set_title(p, fontsize=9)
            if res is None or "t_s" not in res:
                ax.text(0.5, 0.5, "no run" if res is None else res.get("message", "")[:60], ha="center",
                        transform=ax.transAxes, fontsize=7)
                continue
            t = np.asarray(res["t_s"])
            rate = pps_to_mbps(np.asarray(res["rate_pps"]), res["packet_bytes"])
            act = np.asarray(res["active"]) > 0
            styles = ("-", "--", ":", "-.")  # equal rates overlap: dashes keep every flow visible
            for j, fn in enumerate(res["flow_names"]):
                ax.plot(t, np.where(act[:, j], rate[:, j], np.nan), lw=1.0 + 0.4 * (j % 4 == 2),
                        ls=styles[j % 4], label=fn)
            q = np.asarray(res["queue_pkts"])
            for j, ln in enumerate(res["link_names"]):
                axq.plot(t, q[:, j], lw=0.9, ls=("-", "--", ":", "-.")[j % 4], label=ln)
            ax.set_ylabel("throughput (Mbps)")
            axq.set_ylabel("queue length (packets)")
            axq.set_xlabel("time (s)")
            if len(res["flow_names"]) <= 12:
                ax.legend(fontsize=6, ncol=2)
            else:
                ax.text(0.02, 0.95, f"{len(res['flow_names'])} flows", transform=ax.transAxes, fontsize=7, va="top")
            axq.legend(fontsize=6)
            ax.grid(True, alpha=0.3)
            axq.grid(True, alpha=0.3)
        import textwrap
        how = ("flows of several protocols in one run (ecocc.mixed)" if protos == [MIXED]
               else "one run per protocol on the same topology")
        fig.suptitle(textwrap.fill(f"{name}: {sc.description}"[:160], 50 * n + 20) + f"\n({where}; {how})", fontsize=8)
    fig.tight_layout()
    from .store import atomic_path
    for ext in ("png", "pdf"):
        path = Path(out_dir) / f"{name}.{ext}"
        with atomic_path(path) as tmp:  # a run killed while writing leaves the previous figure whole
            fig.savefig(tmp, dpi=110)
        paths.append(str(path))
    plt.close(fig)
    return paths


def format_table(records) -> str:
    """Format the comparison as a plain-text table.

    Parameters
    ----------
    records : iterable of Record
        The comparisons.

    Returns
    -------
    str
        One header line and one line per record (the reason cut to 90 characters).
    """
    def fmt(v):
        if v is None or (isinstance(v, float) and not math.isfinite(v)):
            return "—"
        a = abs(v)
        return f"{v:.3g}" if (a == 0 or 1e-2 <= a < 1e4) else f"{v:.2e}"
    rows = [("scenario", "quantity", "protocol", "where", "paper", "ecocc", "tol", "agrees", "why")]
    for r in records:
        ag = "n/a" if r.agrees is None else ("yes" if r.agrees else "NO")
        rows.append((r.scenario, r.quantity, r.protocol, r.where, fmt(r.paper), fmt(r.ecocc), r.tolerance, ag,
                     r.why[:90]))
    widths = [max(len(str(row[i])) for row in rows) for i in range(len(rows[0]) - 1)]
    lines = []
    for row in rows:
        lines.append("  ".join(str(c).ljust(w) for c, w in zip(row[:-1], widths)) + "  " + row[-1])
    return "\n".join(lines)
