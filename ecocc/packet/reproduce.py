"""``ecocc reproduce NAME|all --level packet|both``: the papers' experiments run in ns-3 as well.

Every task of :func:`ecocc.reproduce.plan` (a scenario, a protocol, a sweep value) whose protocol exists
at packet level runs in ns-3 (:func:`ecocc.packet.run_packet`, one child process per run) on the same
network, parameters and duration as the fluid task (:func:`ecocc.reproduce.variant`), through the same
local-process or Dask execution as the fluid runs and sweeps (:func:`ecocc.sweeps.execute_tasks`).  The
packet results have the fluid results' shape, so the paper's numbers are measured on them with the same
code (:func:`ecocc.reproduce.compare`): one row per number the paper reports, paper | fluid | packet.

Tasks that cannot run at packet level are not dropped: their result has ``status = "skipped"`` and the
reason, which the table shows in the packet column's reason.  Reasons:

- the protocol has no packet-level implementation (XCP, FAST TCP: ns-3 has neither, ecocc's packet back
  end implements AECP/CLTCP, PE-TCP, TCP Symbiosis and uses ns-3's NewReno, HighSpeed and Scalable);
- ``mixed`` runs (flows of several protocols in one network) are not built at packet level;
- the scenario has no packet-level form (population units, 125000-byte "packets": iguchi, symbiosis-fig1);
- the run is larger than ``max_packets``: its estimated number of data packets (duration x the sum of the
  link capacities, packets) exceeds the budget.  ns-3 costs about 7e-5 s of CPU per forwarded packet on
  this machine (100 Mbps for 60 s: about 50 s) plus 15-40 s to import ns-3 and compile the protocols, so
  the budget bounds each run's time; the reason gives the estimate.

Each finished packet run is stored at once in ``OUT/runs/<key>.json`` (``key``: a hash of the task, the
scenario's contents, the run settings, the packet back end's code and the fluid code,
:func:`ecocc.store.run_key`), so an interrupted ``reproduce`` resumes where it stopped.

Rates at packet level are sending rates (data packets put on the access link, retransmissions included),
queues the time-mean of the forward drop-tail buffer, utilization departures / capacity and loss dropped /
offered at the link, from the cumulative counters (see :mod:`ecocc.packet.runner`).
"""
from __future__ import annotations

import dataclasses
import math
import time
from pathlib import Path

import numpy as np

from ..errors import InputError

#: fluid protocol (registry model) -> packet-level protocol (:data:`ecocc.packet.spec.PROTOCOLS`)
PACKET_PROTOCOL = {"aecp": "aecp", "cltcp": "aecp", "petcp": "petcp", "symbiosis": "symbiosis", "reno": "reno",
                   "hstcp": "highspeed", "stcp": "scalable"}

#: default budget of one packet run (data packets: duration x sum of link capacities); about 2.5 min of CPU
DEFAULT_MAX_PACKETS = 2_000_000

#: measured CPU cost of ns-3 per forwarded data packet (s) and per run (import + compile, s): for estimates only
COST_S_PER_PKT = 7e-5
COST_S_PER_RUN = 25.0


def estimated_packets(net, duration_s: float) -> float:
    """Estimate a packet run's size: duration x the sum of the link capacities.

    Parameters
    ----------
    net : Network
        The run's network (capacities in packets/s).
    duration_s : float
        Simulated time (s).

    Returns
    -------
    float
        Data packets the links can forward in the run (packets): an upper bound of the traffic.
    """
    return float(duration_s) * float(sum(lk.capacity_pps for lk in net.links))


def estimated_wall_s(n_pkts: float) -> float:
    """Rough single-core time of a packet run of ``n_pkts`` packets (s), from :data:`COST_S_PER_PKT`.

    Parameters
    ----------
    n_pkts : float
        Estimated data packets (:func:`estimated_packets`).

    Returns
    -------
    float
        Seconds (an estimate measured on this project's 2-core machine; load changes it).
    """
    return COST_S_PER_RUN + COST_S_PER_PKT * float(n_pkts)


def _packet_scenario(task):
    """The loaded scenario of ``task`` rebuilt with the task's network, parameters and duration."""
    from .. import scenarios
    from ..reproduce import variant
    sc = scenarios.load(task.scenario)
    net, params, duration = variant(sc, task.protocol, task.at)
    from .spec import MODEL_PROTOCOL
    # the task's protocol as the scenario model where the packet back end knows that model (its parameters,
    # e.g. Reno's RED, then apply); otherwise the scenario's model with the protocol given explicitly
    model = task.protocol if task.protocol in MODEL_PROTOCOL else sc.model
    out = dataclasses.replace(sc, network=net, params=params if model == task.protocol else {}, model=model,
                              duration_s=duration)
    return sc, out, duration


def why_not_packet(task, max_packets: float | None = DEFAULT_MAX_PACKETS):
    """Tell whether a reproduce task can run at packet level, and why not.

    Parameters
    ----------
    task : ecocc.reproduce.Task
        Scenario, fluid protocol, sweep value.
    max_packets : float or None, optional
        Budget of one run (packets, :func:`estimated_packets`); None or 0: no budget.

    Returns
    -------
    reason : str or None
        None if it can run; otherwise why not, in words.
    est_pkts : float
        The run's estimated size (packets; NaN when the scenario cannot be built).
    """
    from ..reproduce import MIXED
    from .spec import build_spec
    if task.protocol == MIXED:
        return ("mixed-protocol runs (flows of several protocols on one network) are not built at packet level",
                math.nan)
    if task.protocol not in PACKET_PROTOCOL:
        return (f"no packet-level {task.protocol}: ns-3 has no {task.protocol.upper()} and ecocc's packet back end "
                "implements aecp/cltcp, petcp, symbiosis and uses ns-3's NewReno, HighSpeed, Scalable", math.nan)
    try:
        sc, psc, duration = _packet_scenario(task)
        build_spec(psc, protocol=PACKET_PROTOCOL[task.protocol])
    except InputError as exc:
        return f"no packet-level form: {exc}", math.nan
    n = estimated_packets(psc.network, duration)
    if max_packets and n > max_packets:
        w = estimated_wall_s(n)
        return (f"larger than --max-packets {max_packets:.3g}: about {n:.3g} data packets, "
                + (f"~{w:.0f} s" if w < 120 else f"~{w / 60:.0f} min") + " of ns-3 CPU", n)
    return None, n


def run_packet_task(task) -> dict:
    """Run one reproduce task in ns-3; the result has the shape of :func:`ecocc.reproduce.run_task`'s.

    A run that raises is reported, not raised (``status = "error"``, the exception in ``message``).

    Parameters
    ----------
    task : ecocc.reproduce.Task
        Scenario, fluid protocol (mapped by :data:`PACKET_PROTOCOL`), sweep value.

    Returns
    -------
    dict
        JSON-able: ``task``, ``status``, ``message``, ``wall_s`` (s), ``packet_protocol``, ``solver`` (the packet
        run's record) and the series of :func:`ecocc.reproduce.run_task` (``t_s`` in seconds, rates packets/s,
        queues packets, cumulative counters packets).
    """
    from ..reproduce import MAX_SAMPLES
    from .runner import run_packet
    t0 = time.perf_counter()
    try:
        sc, psc, duration = _packet_scenario(task)
        bin_s = max(0.1, duration / MAX_SAMPLES)
        tr = run_packet(psc, protocol=PACKET_PROTOCOL[task.protocol], t_end_s=duration, bin_s=bin_s)
    except Exception as exc:  # a run that cannot be made is reported with the reason, not hidden
        return {"task": dataclasses.asdict(task), "status": "error", "message": f"{type(exc).__name__}: {exc}",
                "wall_s": time.perf_counter() - t0}
    try:
        from ..models import get_model
        from ..system import NetworkSystem
        m = get_model(sc.model)
        cross = NetworkSystem(m, psc.network, m.make_params(**sc.params), duration).cross(tr.t_s)
    except Exception:  # the cross-traffic series is informative only (Run does not measure it)
        cross = np.zeros((tr.t_s.size, len(tr.link_names)))
    return {
        "task": dataclasses.asdict(task), "status": tr.status.value, "message": tr.message,
        "wall_s": time.perf_counter() - t0, "cpu_s": tr.solver.get("simulate_s"),
        "packet_protocol": PACKET_PROTOCOL[task.protocol], "solver": tr.solver,
        "t_s": tr.t_s.tolist(), "rate_pps": tr.rate_pps.tolist(), "queue_pkts": tr.queue_pkts.tolist(),
        "sent_pkts": tr.sent_pkts.tolist(), "departed_pkts": tr.departed_pkts.tolist(),
        "arrived_pkts": tr.arrived_pkts.tolist(), "lost_pkts": tr.lost_pkts.tolist(),
        "queue_area": tr.queue_area_pkt_s.tolist(), "cross_pps": np.asarray(cross).tolist(),
        "active": tr.active.astype(int).tolist(), "capacity_pps": tr.capacity_pps.tolist(),
        "flow_names": tr.flow_names, "link_names": tr.link_names, "packet_bytes": tr.packet_bytes,
        "start_s": [f.start_s for f in psc.network.flows], "summary_window_s": tr.summary_window_s,
        "equilibrium": None,
    }


def task_key(task) -> tuple[str, dict]:
    """Key of a stored packet run (:func:`ecocc.store.run_key`).

    Parameters
    ----------
    task : ecocc.reproduce.Task

    Returns
    -------
    key : str
        File name stem in ``OUT/runs``.
    record : dict
        What was hashed: the task, the scenario's digest, the packet code digest and the ns-3 interpreter.
    """
    from .. import scenarios
    from ..store import run_key
    from .runner import code_digest, ns3_python
    sc = scenarios.load(task.scenario)
    return run_key(kind="reproduce-packet", task=dataclasses.asdict(task), scenario_digest=sc.digest,
                   packet_code=code_digest(), python=ns3_python(), packet_protocol=PACKET_PROTOCOL.get(task.protocol))


def reproduce_packet(names, out_dir="figures/packet", *, workers: int = 1, scheduler=None, progress=False,
                     figures=True, max_packets: float | None = DEFAULT_MAX_PACKETS):
    """Run the packet-level tasks of scenarios ``names`` (or ``"all"``), resumably; list the others with the reason.

    Parameters
    ----------
    names : str or list of str
        Reproducible scenario names (:func:`ecocc.reproduce.reproducible`) or ``"all"``.
    out_dir : path
        Directory of the stored runs (``runs/``) and the figures (PNG and PDF per scenario); locked while running.
    workers : int
        Local worker processes (each starts one ns-3 child per run: about 770 MB each).
    scheduler : str, optional
        dask.distributed scheduler address.
    progress : bool
        Show a progress bar (runs).
    figures : bool
        Write figures.
    max_packets : float or None
        Budget of one run in data packets (:func:`why_not_packet`); None or 0: none.

    Returns
    -------
    tuple
        ``records`` (list of :class:`ecocc.reproduce.Record` measured on the packet runs), ``results`` (task
        label -> result; skipped tasks have ``status = "skipped"`` and the reason in ``message``) and ``timing``
        (``wall_s``, ``n_runs`` run now, ``n_reused`` from ``runs/``, ``n_skipped``, ``figures``, ``run_wall_s``:
        seconds per run).

    Raises
    ------
    InputError
        For an unknown scenario name, or an output directory another process holds.
    """
    from ..errors import check
    from ..reproduce import compare, plan, plot_scenario, reproducible
    from ..results import json_dumps
    from ..store import OutputLock, atomic_write_text, read_json
    from .runner import available
    if names == "all" or names == ["all"]:
        names = reproducible()
    elif isinstance(names, str):
        names = [names]
    avail = reproducible()
    for n in names:
        check(n in avail, "scenario", n, f"'all' or one of {avail}")
    if max_packets is not None:
        check(max_packets >= 0, "--max-packets", max_packets, "a number of packets >= 0 (0: no budget)")
    t0 = time.perf_counter()
    tasks = [t for n in names for t in plan(n)]
    ok, why_ns3 = available()
    results, todo, n_reused = {}, [], 0
    written = []
    with OutputLock(out_dir) as lock:
        runs = lock.out / "runs"
        runs.mkdir(exist_ok=True)
        keys = {}
        for t in tasks:
            reason, est = why_not_packet(t, max_packets)
            if reason is None and not ok:
                reason = f"ns-3 not available: {why_ns3}"
            if reason is not None:
                results[t.label] = {"task": dataclasses.asdict(t), "status": "skipped", "message": reason,
                                    "estimated_packets": est}
                continue
            keys[t.label] = task_key(t)
            old = read_json(runs / f"{keys[t.label][0]}.json")
            if old is not None and old.get("status") == "success":
                results[t.label] = old
                n_reused += 1
            else:
                todo.append(t)
        from ..sweeps import execute_tasks
        for t, res in execute_tasks(run_packet_task, todo, workers=workers, scheduler=scheduler, progress=progress,
                                    desc="reproduce (ns-3)"):
            res = dict(res, key=keys[t.label][0], key_inputs=keys[t.label][1])
            atomic_write_text(runs / f"{keys[t.label][0]}.json", json_dumps(res))  # at once: a rerun resumes
            results[t.label] = res
        records = [r for n in names for r in _with_run_reasons(n, compare(n, results), results)]
        if figures:
            for n in names:
                written += plot_scenario(n, results, lock.out, level="packet")
    return records, results, {
        "wall_s": time.perf_counter() - t0, "n_runs": len(todo), "n_reused": n_reused,
        "n_skipped": sum(v["status"] == "skipped" for v in results.values()), "figures": written,
        "run_wall_s": {k: v.get("wall_s") for k, v in results.items() if v["status"] != "skipped"}}


def _with_run_reasons(name, records, results):
    """Records of scenario ``name`` whose packet run was not made carry that run's reason as ``why``.

    :func:`ecocc.reproduce.compare` prefers the scenario's ``why`` (which explains the fluid model) to the run's
    message; at packet level a skipped or failed run's own reason is the one that applies.
    """
    from .. import scenarios
    from ..reproduce import Task, _spec
    sc = scenarios.load(name)
    rep, _ = _spec(sc)
    sw = rep.get("sweep")
    out = []
    for entry, r in zip(rep.get("paper", []), records):
        at = entry.get("at")
        res = results.get(Task(name, entry.get("protocol", sc.model), None if at is None or not sw else float(at)).label)
        if res is None:
            r = dataclasses.replace(r, why="packet run not made")
        elif res.get("status") != "success" or "t_s" not in res:
            r = dataclasses.replace(r, why=f"packet run {res.get('status')}: {res.get('message', '')}")
        out.append(r)
    return out


@dataclasses.dataclass
class SideBySide:
    """One number the paper reports beside the fluid and the packet measure of it.

    Attributes
    ----------
    scenario, quantity, protocol, unit, where, tolerance : str
        As :class:`ecocc.reproduce.Record`.
    paper, fluid, packet : float
        The paper's value, ecocc's fluid and packet-level measures (NaN: none), in ``unit``.
    fluid_agrees, packet_agrees : bool or None
        Within ``tolerance`` of the paper's value; None where there is nothing to compare.
    why_fluid, why_packet : str
        Known reason of a disagreement, or why there is no number (a skipped or failed packet run says why).
    """
    scenario: str
    quantity: str
    protocol: str
    unit: str
    where: str
    paper: float
    fluid: float
    packet: float
    tolerance: str
    fluid_agrees: bool | None
    packet_agrees: bool | None
    why_fluid: str = ""
    why_packet: str = ""

    def as_dict(self):
        """Return the row as JSON-able data (non-finite numbers as None).

        Returns
        -------
        dict
        """
        d = dataclasses.asdict(self)
        for k in ("paper", "fluid", "packet"):
            v = d[k]
            d[k] = None if v is None or (isinstance(v, float) and not math.isfinite(v)) else v
        return d


def side_by_side(fluid_records, packet_records) -> list[SideBySide]:
    """Join the fluid and packet records of the same ``[[reproduce.paper]]`` entries.

    Parameters
    ----------
    fluid_records, packet_records : list of ecocc.reproduce.Record or None
        From :func:`ecocc.reproduce.reproduce` and :func:`reproduce_packet` over the same scenarios (same
        order); either may be None (that level not run: its column is empty).

    Returns
    -------
    list of SideBySide
    """
    base = fluid_records if fluid_records is not None else packet_records
    out = []
    for i, r in enumerate(base):
        f = fluid_records[i] if fluid_records is not None else None
        p = packet_records[i] if packet_records is not None else None
        out.append(SideBySide(
            r.scenario, r.quantity, r.protocol, r.unit, r.where, r.paper,
            f.ecocc if f else math.nan, p.ecocc if p else math.nan, r.tolerance,
            f.agrees if f else None, p.agrees if p else None,
            (f.why if f else "fluid level not run"), _why_packet(p)))
    return out


def _why_packet(p) -> str:
    """The packet column's reason: why there is no number, or that a disagreement has no known reason.

    The scenario's ``why`` explains the fluid model's disagreement; it is not carried over to a measured
    packet value (that would pass a fluid explanation off as a packet one).
    """
    if p is None:
        return "packet level not run"
    if p.why.startswith("packet run") or not (isinstance(p.ecocc, float) and math.isfinite(p.ecocc)):
        return p.why
    if p.agrees is False:
        return "measured in ns-3; no known reason recorded for the packet level"
    return ""


def format_side_by_side(rows, skipped=()) -> str:
    """Format paper | fluid | packet as a plain-text table, then the tasks that did not run at packet level.

    Parameters
    ----------
    rows : iterable of SideBySide
    skipped : iterable of (str, str)
        ``(task label, reason)`` of the packet runs skipped.

    Returns
    -------
    str
    """
    def fmt(v):
        if v is None or (isinstance(v, float) and not math.isfinite(v)):
            return "—"
        a = abs(v)
        return f"{v:.3g}" if (a == 0 or 1e-2 <= a < 1e4) else f"{v:.2e}"

    def ag(v):
        return "n/a" if v is None else ("yes" if v else "NO")
    head = ("scenario", "quantity", "protocol", "where", "paper", "fluid", "packet", "tol", "fluid ok", "packet ok",
            "why (packet)")
    tab = [head]
    for r in rows:
        tab.append((r.scenario, r.quantity, r.protocol, r.where, fmt(r.paper), fmt(r.fluid), fmt(r.packet),
                    r.tolerance, ag(r.fluid_agrees), ag(r.packet_agrees), (r.why_packet or "")[:80]))
    widths = [max(len(str(row[i])) for row in tab) for i in range(len(head) - 1)]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(row[:-1], widths)) + "  " + row[-1] for row in tab]
    skipped = list(skipped)
    if skipped:
        lines.append(f"\nnot run at packet level ({len(skipped)}):")
        lines += [f"  {lab}: {why}" for lab, why in skipped]
    return "\n".join(lines)


def figure_dir(out_dir) -> Path:
    """Where ``reproduce --level packet|both`` puts the packet runs and figures: ``OUT/packet``.

    Parameters
    ----------
    out_dir : path
        The ``--out`` directory of ``reproduce``.

    Returns
    -------
    Path
    """
    return Path(out_dir) / "packet"
