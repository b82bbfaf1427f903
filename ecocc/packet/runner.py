"""Run a scenario at packet level in ns-3, in a child process, and return a fluid-shaped result.

The result is an :class:`ecocc.results.Trajectory` (the same object a fluid run returns):
``rate_pps`` is the number of data packets each sender put on its access link per bin divided
by the bin width (packets/s, the bin ending at ``t_s``); ``queue_pkts`` is the time-mean queue of
each link's forward drop-tail buffer over the bin ending at ``t_s`` (packets, exact from the
queue's area); ``sent_pkts``, ``arrived_pkts``, ``departed_pkts``, ``lost_pkts`` and
``queue_area_pkt_s`` are the cumulative counters themselves, so :meth:`Trajectory.summary` and
:meth:`Trajectory.utilization` work unchanged.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from ..dde.adaptive import Status
from ..errors import EcoccError, InputError
from ..results import Trajectory
from .spec import build_spec

#: environment variable naming a Python interpreter that has the ``ns3`` wheel (default: this one)
PYTHON_ENV = "ECOCC_NS3_PYTHON"


class PacketBackendError(EcoccError):
    """The ns-3 child process failed (not a user mistake): the message carries its log tail."""


def ns3_python() -> str:
    """Return the interpreter the ns-3 child runs with: ``$ECOCC_NS3_PYTHON`` or this one.

    Returns
    -------
    str
        Path of a Python interpreter.
    """
    return os.environ.get(PYTHON_ENV) or sys.executable


def code_digest() -> str:
    """SHA-256 (16 hex digits) of the packet back end's code: ``ecocc/packet/*.py`` and the C++ protocols.

    :func:`ecocc.store.code_version` covers the fluid code only (``.py`` files of the result sources), so keys of
    stored packet-level results (sweep points with ``engine="ns3"``, the claims ledger's packet readings) add
    this digest: an edit of the C++ senders or routers never reuses a result computed by the old code.

    Returns
    -------
    str
    """
    import hashlib
    root = Path(__file__).resolve().parent
    h = hashlib.sha256()
    for f in sorted([*root.glob("*.py"), *(root / "cpp").glob("*")]):
        if f.is_file():
            h.update(f.name.encode())
            h.update(f.read_bytes())
    return h.hexdigest()[:16]


def available(python: str | None = None) -> tuple[bool, str]:
    """Tell whether the ``ns3`` wheel can be imported by the child interpreter, and why not.

    Parameters
    ----------
    python : str or None, optional
        Interpreter to ask; None: :func:`ns3_python`.

    Returns
    -------
    ok : bool
        The ``ns`` package is importable there.
    reason : str
        ``"ok"``, or why not (the interpreter cannot start, or lacks the package) and what to do.
    """
    py = python or ns3_python()
    code = "import importlib.util, sys; sys.exit(0 if importlib.util.find_spec('ns') else 1)"
    try:
        r = subprocess.run([py, "-c", code], capture_output=True, timeout=60, cwd=tempfile.gettempdir())
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, f"cannot start {py}: {exc}"
    if r.returncode != 0:
        return False, (f"the ns3 package is not installed for {py} (pip install 'ecocc[packet]', "
                       f"or set {PYTHON_ENV} to an interpreter that has it)")
    return True, "ok"


def run_spec(spec: dict, *, progress: bool = False, python: str | None = None, log_path=None,
             timeout_s: float | None = None) -> dict:
    """Run one specification in a child process started from a clean temporary directory.

    Parameters
    ----------
    spec : dict
        A specification of :func:`ecocc.packet.spec.build_spec` (times in seconds, rates in packets/s).
    progress : bool, optional
        A progress bar in simulated seconds on stderr.
    python : str or None, optional
        Interpreter with the ``ns3`` wheel; None: :func:`ns3_python`.
    log_path : str or path-like or None, optional
        Where the child's stderr goes; None: a temporary file removed with the directory.
    timeout_s : float or None, optional
        Wall-clock limit, seconds, counted once the child's output has ended; None: no limit.

    Returns
    -------
    dict
        The raw sampled arrays of the child (cumulative counters per bin: ``t``, ``sent``, ``offered``,
        ``departed``, ``dropped``, ``area``, ...) as NumPy arrays, plus ``wall_s`` (seconds).

    Raises
    ------
    InputError
        When the child refuses the scenario (it reports why).
    PacketBackendError
        When the child fails otherwise (the message carries the tail of its log).
    subprocess.TimeoutExpired
        When ``timeout_s`` passes (the child is killed).
    """
    py = python or ns3_python()
    env = dict(os.environ)
    # the child imports ecocc from where this process found it
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    t_end = float(spec["t_end_s"])
    bar = None
    if progress:
        from tqdm.auto import tqdm
        bar = tqdm(total=round(t_end, 6), unit="s(sim)", desc=f"{spec['scenario']} ({spec['protocol']}, ns-3)",
                   leave=False)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="ecocc-ns3-") as tmp:
        spec_path = Path(tmp) / "spec.json"
        spec_path.write_text(json.dumps(spec))
        out_path = Path(tmp) / "out.npz"
        err_path = Path(tmp) / "child.log" if log_path is None else Path(log_path)
        with open(err_path, "w") as err:
            proc = subprocess.Popen([py, "-m", "ecocc.packet._child", str(spec_path), str(out_path)], cwd=tmp,
                                    env=env, stdout=subprocess.PIPE, stderr=err, text=True, bufsize=1)
            last, error = [], None
            try:
                for line in proc.stdout:
                    if line.startswith("ECOCC_PROGRESS"):
                        if bar is not None:
                            bar.n = round(min(float(line.split()[1]), t_end), 6)
                            bar.refresh()
                    elif line.startswith("ECOCC_ERROR"):
                        error = line[len("ECOCC_ERROR"):].strip()
                    else:
                        last.append(line.rstrip())
                        last = last[-20:]
                rc = proc.wait(timeout=timeout_s)
            except BaseException:
                proc.kill()
                proc.wait()
                raise
            finally:
                if bar is not None:
                    bar.close()
        if error is not None:
            raise InputError(f"scenario {spec['scenario']}", "at packet level", error)
        if rc != 0 or not out_path.exists():
            tail = "\n".join(Path(err_path).read_text().splitlines()[-25:] + last)
            raise PacketBackendError(f"ns-3 child process failed (exit status {rc}):\n{tail}")
        data = dict(np.load(out_path))
    data["wall_s"] = time.perf_counter() - t0
    return data


def to_trajectory(spec: dict, data: dict, net) -> Trajectory:
    """Assemble a :class:`Trajectory` from the child's cumulative counters (see module docstring).

    Parameters
    ----------
    spec : dict
        The specification that was run.
    data : dict
        The arrays :func:`run_spec` returned.
    net : Network
        The scenario's network (flow start and stop times, for ``active``).

    Returns
    -------
    Trajectory
        Rates (packets/s) and queues (packets) as bin means ending at ``t_s``, the cumulative counters
        (packets), the protocol's own variables, the model's equilibrium where the model and protocol
        match (or ``{"error": ...}``), and status ``success`` only if the run reached ``t_end_s``.
    """
    t = data["t"]
    dt = np.diff(t)
    sent = data["sent"]
    rate = np.zeros_like(sent)
    rate[1:] = np.diff(sent, axis=0) / dt[:, None]
    area = data["area"]
    q = np.zeros_like(area)
    q[1:] = np.diff(area, axis=0) / dt[:, None]
    start = np.array([f["start_s"] for f in spec["flows"]], dtype=float)
    stop = np.array([np.inf if f["stop_s"] is None else f["stop_s"] for f in spec["flows"]], dtype=float)
    act = (start[None, :] <= t[:, None]) & (t[:, None] < stop[None, :])
    t_end = float(spec["t_end_s"])
    reached = float(t[-1]) if t.size else 0.0
    ok = abs(reached - t_end) <= 1e-6 * max(1.0, t_end)
    proto = spec["protocol"]
    link_vars = {}
    if proto == "aecp":
        link_vars["r"] = data["signal"]
    elif proto == "symbiosis":
        link_vars["available"] = data["signal"]
    rev = data.get("rev_departed")
    if rev is not None and rev.size:  # reverse-path flows: the links' reverse direction (cumulative, packets)
        link_vars.update(reverse_arrived=data["rev_offered"], reverse_lost=data["rev_dropped"],
                         reverse_departed=data["rev_departed"], reverse_queue_area=data["rev_area"])
    flow_vars = {"received": data["recv"]}
    if proto in ("aecp", "petcp", "symbiosis"):
        flow_vars["controller_rate"] = data["ctrl"]
    eq = None
    try:
        from ..models import get_model
        from .spec import MODEL_PROTOCOL
        if MODEL_PROTOCOL.get(spec["model"]) == proto:
            m = get_model(spec["model"])
            eq = m.equilibrium(net, m.make_params(**{k: v for k, v in spec["params"].items()}))
    except Exception as exc:  # an equilibrium that cannot be computed is reported, not fatal
        eq = {"error": str(exc)}
    timing = data.get("timing", np.full(3, np.nan))
    solver = {
        "backend": "ns-3 (pip wheel ns3, cppyy) packet level", "protocol": proto,
        "driver_protocol": spec["driver_protocol"], "packet_bytes": spec["packet_bytes"], "bin_s": spec["bin_s"],
        "access_factor": spec["access_factor"], "seed": spec["seed"],
        "buffers_pkts": [lk["buffer_pkts"] for lk in spec["links"]],
        "red": spec["red"], "symbiosis_tau": spec.get("symbiosis_tau"), "wall_s": float(data.get("wall_s", np.nan)),
        "import_s": float(timing[0]), "compile_s": float(timing[1]), "simulate_s": float(timing[2]),
        "t_reached_s": reached, "controller_updates": [float(v) for v in data.get("updates", [])],
        "min_rtt_s": [float(v) for v in data.get("min_rtt", [])],
        "reverse_flows": [f["name"] for f in spec["flows"] if f.get("reverse")],
    }
    msg = ("ok" if ok else f"the simulation stopped at {reached:g} s of {t_end:g} s")
    return Trajectory(
        name=spec["scenario"], model=f"{proto} (ns-3 packet level)", params=dict(spec["params"]), t_s=t,
        rate_pps=rate, queue_pkts=q, lost_pkts=data["dropped"], arrived_pkts=data["offered"],
        departed_pkts=data["departed"], sent_pkts=sent, queue_area_pkt_s=area, flow_vars=flow_vars,
        link_vars=link_vars, flow_names=[f["name"] for f in spec["flows"]],
        link_names=[lk["name"] for lk in spec["links"]],
        capacity_pps=np.array([lk["capacity_pps"] for lk in spec["links"]]), active=act,
        status=Status.SUCCESS if ok else Status.FAILED, message=msg, solver=solver,
        packet_bytes=float(spec["packet_bytes"]), summary_window_s=float(spec.get("summary_window_s") or 0.1 * t_end),
        equilibrium=eq)


def run_packet(scenario, *, protocol=None, t_end_s=None, bin_s=0.1, seed=1, access_factor=10.0,
               capacity_scale=1.0, overrides=None, progress=False, python=None, log_path=None,
               symbiosis_tau="measured", reverse_flows=None) -> Trajectory:
    """Run ``scenario`` (a name, a TOML path or a :class:`~ecocc.scenarios.Scenario`) in ns-3.

    Parameters
    ----------
    scenario : str, Path or Scenario
        A shipped name, a TOML path or a loaded scenario.
    protocol : str, optional
        Packet-level protocol (:data:`ecocc.packet.spec.PROTOCOLS`); default the scenario model's.
    t_end_s : float, optional
        Simulated time in seconds (default: the scenario's).
    bin_s : float
        Bin width of the rates and queues (s); 0.1 s by default.
    seed : int
        ns-3 random seed.
    access_factor : float
        Access links run at this multiple of the fastest link (>= 1).
    capacity_scale : float
        Multiply every capacity (packet-level runs cost time in proportion to packets).
    overrides : dict, optional
        Model parameters.
    progress : bool
        A progress bar in simulated seconds on stderr.
    symbiosis_tau : {"measured", "propagation"}
        TCP Symbiosis's tau_i (see :func:`ecocc.packet.spec.build_spec`).
    python : str, optional
        Interpreter with the ``ns3`` wheel (default ``$ECOCC_NS3_PYTHON`` or this one).
    log_path : str or path-like, optional
        Keep the child's stderr in this file (default: a temporary file, removed).
    reverse_flows : list of dict, optional
        Reverse-path flows (:func:`ecocc.packet.spec.build_spec`); their data travels the links' reverse
        direction.  They come after the scenario's flows in the result; with ``capacity_scale`` their
        ``initial_rate_pps`` is not scaled.

    Returns
    -------
    Trajectory
        Status ``success`` when the simulation reached ``t_end_s``.

    Raises
    ------
    InputError
        For a scenario, protocol or parameter the packet level cannot run.
    PacketBackendError
        When the ns-3 child process fails.
    """
    from .. import scenarios
    sc = scenario if isinstance(scenario, scenarios.Scenario) else scenarios.load(scenario)
    sc = scaled_scenario(sc, capacity_scale)
    spec = build_spec(sc, protocol=protocol, t_end_s=t_end_s, bin_s=bin_s, seed=seed, access_factor=access_factor,
                      overrides=overrides, symbiosis_tau=symbiosis_tau, reverse_flows=reverse_flows)
    spec["summary_window_s"] = min(sc.summary_window_s or 0.1 * spec["t_end_s"], spec["t_end_s"])
    data = run_spec(spec, progress=progress, python=python, log_path=log_path)
    return to_trajectory(spec, data, sc.network)


def scaled_scenario(sc, capacity_scale: float = 1.0):
    """Return ``sc`` with every capacity (and cross-traffic rate) multiplied by ``capacity_scale``.

    Flows' physical bandwidths and a ``r0_pps`` parameter are scaled too; delays are unchanged.

    Parameters
    ----------
    sc : Scenario
        The scenario.
    capacity_scale : float, optional
        Factor (> 0, dimensionless).

    Returns
    -------
    Scenario
        The scaled scenario (``sc`` itself when the factor is 1), its description saying so.

    Raises
    ------
    InputError
        For a factor that is not a finite number > 0.
    """
    import dataclasses
    from ..errors import check_finite
    s = check_finite("capacity_scale", capacity_scale, positive=True)
    if s == 1.0:
        return sc
    net = sc.network.scaled(capacity_scale=s)
    cts = tuple(dataclasses.replace(c, rate_pps=c.rate_pps * s,
                                    schedule=tuple((t, r * s) for t, r in c.schedule)) for c in net.cross_traffic)
    flows = tuple(f if f.physical_bw_pps is None else dataclasses.replace(f, physical_bw_pps=f.physical_bw_pps * s)
                  for f in net.flows)
    net = net.replace(cross_traffic=cts, flows=flows)
    params = dict(sc.params)
    if params.get("r0_pps") is not None:
        params["r0_pps"] = params["r0_pps"] * s
    return dataclasses.replace(sc, network=net, params=params,
                               name=sc.name, description=f"{sc.description} [capacities x {s:g}]")
