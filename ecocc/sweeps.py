"""Parameter sweeps of a scenario: grids -> xarray, resumable, parallel.

Each grid point is one :func:`ecocc.simulate` run of the scenario with some
values changed.  Finished points are written at once to
``OUT/points/<key>.json`` (``key`` names the point), so an interrupted sweep
loses nothing: running the same command again skips the points already done.
Points run in local worker processes (``workers``), or on a Dask cluster when
``scheduler`` is a ``dask.distributed`` address (optional dependency).

Axes are model parameters (``alpha_per_s``, ``T_s``, ...) or
``rtt_scale`` (multiplies every flow's RTT and forward delays) or
``capacity_scale`` (multiplies every link capacity).

Metrics per point (final window of the scenario, see
:meth:`Trajectory.summary`): ``utilization`` and ``mean_queue_pkts`` of the
most loaded link, ``jain_index``, ``queue_p2p_pkts`` (peak-to-peak of that
queue over the window: ~0 when the run settles, large on a limit cycle),
``rate_p2p_rel`` (peak-to-peak of the aggregate rate over the window,
relative), ``t_efficiency_s`` (first time the aggregate rate reaches 99 % of
the capacity of that link) and ``status``.
"""
from __future__ import annotations

import dataclasses
import hashlib
import itertools
import math
import numbers
from pathlib import Path

import numpy as np

from .errors import InputError, check, check_finite
from .models import get_model

SPECIAL_AXES = ("rtt_scale", "capacity_scale")
METRICS = ("utilization", "mean_queue_pkts", "jain_index", "queue_p2p_pkts", "rate_p2p_rel", "t_efficiency_s")


#: at most this many values on one axis (``start:stop:count``): see :data:`MAX_POINTS`
MAX_AXIS_VALUES = 10_000


def parse_axis(text: str, option: str = "--axis"):
    """Parse one axis: ``NAME=v1,v2,...`` or ``NAME=start:stop:count`` (inclusive linspace).

    The one grammar of every grid command's axes (``sweep --axis``, ``sim-map --axis``,
    ``stability-map --axis``).

    Parameters
    ----------
    text : str
        The option's value.
    option : str
        The option named in error messages.

    Returns
    -------
    name : str
        The axis name (a parameter or an axis of :func:`run_point`).
    values : list of float
        Finite, distinct, at most :data:`MAX_AXIS_VALUES`.

    Raises
    ------
    InputError
        Naming ``option NAME`` and what is wrong.
    """
    text = str(text)
    if "=" not in text:
        raise InputError(option, text, "NAME=v1,v2,... or NAME=start:stop:count")
    name, vals = text.split("=", 1)
    name = name.strip()
    check(bool(name), option, text, "NAME=VALUES with a parameter name before '='")
    field = f"{option} {name}"
    if ":" in vals:
        parts = vals.split(":")
        check(len(parts) == 3, field, vals, "start:stop:count (three numbers)")
        try:
            a, b = float(parts[0]), float(parts[1])
        except ValueError:
            raise InputError(field, vals, "start:stop:count with numbers start and stop") from None
        try:
            n = int(parts[2])
        except ValueError:
            raise InputError(f"{field} count", parts[2], "an integer >= 1") from None
        check(math.isfinite(a) and math.isfinite(b), field, vals, "finite start and stop")
        check(1 <= n <= MAX_AXIS_VALUES, f"{field} count", n, f"an integer from 1 to {MAX_AXIS_VALUES}")
        check(n == 1 or a != b, field, vals, "start != stop when count > 1 (the values must be distinct)")
        values = [float(v) for v in np.linspace(a, b, n)]
    else:
        raw = [v.strip() for v in vals.split(",")]
        check(all(raw), field, vals, "numbers separated by single commas (v1,v2,...)")
        try:
            values = [float(v) for v in raw]
        except ValueError:
            raise InputError(field, vals, "numbers: v1,v2,... or start:stop:count") from None
        check(all(math.isfinite(v) for v in values), field, vals, "finite numbers")
        check(len(values) <= MAX_AXIS_VALUES, field, f"{len(values)} values", f"at most {MAX_AXIS_VALUES} values")
        check(len(set(values)) == len(values), field, vals, "distinct values")
    return name, values


def parse_axes(texts, option: str = "--axis") -> dict:
    """Parse several ``--axis`` options.

    Parameters
    ----------
    texts : sequence of str
        The options' values (:func:`parse_axis`).
    option : str
        The option named in error messages.

    Returns
    -------
    dict
        ``name -> values`` in the order given; an axis given twice is refused.
    """
    out = {}
    for t in texts:
        name, values = parse_axis(t, option)
        check(name not in out, f"{option} {name}", t, "each axis once")
        out[name] = values
    return out


def plane_axes(axis_texts, old_x=None, old_y=None, default=None, old_form="--x/--y"):
    """The two axes of a map command.

    Parameters
    ----------
    axis_texts : sequence of str
        ``--axis`` values: exactly two (x first, then y), or none.
    old_x, old_y : str, optional
        The deprecated ``--x``/``--y`` forms as ``NAME=VALUES``.
    default : tuple of str
        The ``NAME=VALUES`` texts used when neither form is given.
    old_form : str
        How the deprecated options are named in the note.

    Returns
    -------
    x, y : tuple
        ``(name, values, option)``; ``option`` is the option to name in error messages.
    note : str or None
        A deprecation note to print when the old form was used.

    Raises
    ------
    InputError
        When the forms are mixed or ``--axis`` is not given twice.
    """
    axis_texts = list(axis_texts or ())
    if axis_texts:
        check(old_x is None and old_y is None, "--axis", axis_texts,
              f"either --axis (twice) or the deprecated {old_form}, not both")
        check(len(axis_texts) == 2, "--axis", axis_texts, "exactly two axes: --axis X=... --axis Y=... (x first)")
        axes = parse_axes(axis_texts)
        (xn, xv), (yn, yv) = axes.items()
        _check_plane(xv, yv, "--axis")
        return (xn, xv, "--axis"), (yn, yv, "--axis"), None
    note = None
    if old_x is not None or old_y is not None:
        note = (f"{old_form} are deprecated and will be removed: use --axis NAME=v1,v2,... or "
                "--axis NAME=start:stop:count, twice (x first, then y)")
    dx, dy = default
    xn, xv = parse_axis(old_x if old_x is not None else dx, "--x")
    yn, yv = parse_axis(old_y if old_y is not None else dy, "--y")
    check(xn != yn, "--y", yn, f"another parameter than the x axis ({xn})")
    _check_plane(xv, yv, "--x/--y")
    return (xn, xv, "--x"), (yn, yv, "--y"), note


def _check_plane(xv, yv, option):
    from .limits import MAX_MAP_POINTS
    n = len(xv) * len(yv)
    check(n <= MAX_MAP_POINTS, option, f"{len(xv)} x {len(yv)} = {n} points",
          f"at most {MAX_MAP_POINTS} points (ecocc.limits.MAX_MAP_POINTS)")


#: solver settings of every sweep point (those of :func:`ecocc.simulate` by default); part of each point's key
SOLVER = {"solver": "adaptive", "rtol": 1e-7, "atol": "default"}


def point_key(sc, point: dict, t_end_s: float, engine: str) -> tuple[str, dict]:
    """Key of one sweep point (:func:`ecocc.store.run_key`).

    Parameters
    ----------
    sc : Scenario
        Its contents enter through ``sc.digest``.
    point : dict
        ``axis name -> value``.
    t_end_s : float
        Simulated time per point in seconds.
    engine : str
        The solver engine.

    Returns
    -------
    key : str
        The hash (:func:`ecocc.store.run_key`), the point's file name in ``points/``.
    record : dict
        What was hashed: the scenario digest, the point, the duration, the engine, the solver settings
        (:data:`SOLVER`), the readings ``past`` and ``load_rtt`` of a fluid engine (and
        ``rtt_includes_queueing`` where set: the keys of constant-delay points are those they had before it
        existed) and the code version.
    """
    from .store import run_key
    extra = {}
    if engine == "ns3":  # code_version covers the fluid code only: add the packet back end's (C++ included)
        from .packet.runner import code_digest
        extra["packet_code"] = code_digest()
    if engine != "ns3":  # the fluid readings (the scenario's or run_sweep's overrides, which sc.digest omits)
        extra.update(past=sc.past, load_rtt=sc.load_rtt)
        if sc.rtt_includes_queueing:
            extra["rtt_includes_queueing"] = True
    return run_key(kind="sweep-point", scenario=sc.name, scenario_digest=sc.digest, model=sc.model,
                   point={k: float(v) for k, v in point.items()}, t_end_s=float(t_end_s), engine=engine,
                   output_dt_s=sc.output_dt_s, summary_window_s=sc.summary_window_s, **SOLVER, **extra)


def run_point(scenario, point: dict, t_end_s: float | None = None, engine: str = "auto") -> dict:
    """Simulate one grid point.

    Parameters
    ----------
    scenario : Scenario or str
        A loaded :class:`~ecocc.scenarios.Scenario` (what :func:`run_sweep` passes, so that every point of a
        sweep uses the contents its key was made from) or a shipped name / TOML path.
    point : dict
        ``axis name -> value``: model parameters (``protocol__field`` on a mixed network), ``rtt_scale`` or
        ``capacity_scale``.
    t_end_s : float, optional
        Simulated time in seconds (default: the scenario's duration).
    engine : {"auto", "numpy", "numba", "ns3"}
        The engine of :func:`ecocc.simulate` (default ``"auto"``), or ``"ns3"``: the packet-level
        simulation of :mod:`ecocc.packet` (one ns-3 child process per point).

    Returns
    -------
    dict
        JSON-able metrics of the most loaded link (:data:`METRICS`), ``status`` and ``message``.
    """
    from . import scenarios
    from .simulate import simulate
    sc = scenario if isinstance(scenario, scenarios.Scenario) else scenarios.load(scenario)
    params = dict(sc.params)
    special = {k: point[k] for k in SPECIAL_AXES if k in point}
    params.update({k: v for k, v in point.items() if k not in SPECIAL_AXES})
    net = sc.network.scaled(**special)
    t_end = t_end_s or sc.duration_s
    window = min(sc.summary_window_s or 0.1 * t_end, t_end)
    if engine == "ns3":  # packet level: one ns-3 child process per point (ecocc.packet)
        from .packet import run_packet
        tr = run_packet(dataclasses.replace(sc, network=net, params=params), t_end_s=t_end)
    else:
        tr = simulate(net, sc.model, t_end_s=t_end, output_dt_s=sc.output_dt_s, summary_window_s=window,
                      engine=engine, solver=SOLVER["solver"], rtol=SOLVER["rtol"],
                      protocols=sc.protocols or None, load_rtt=sc.load_rtt, past=sc.past,
                      rtt_includes_queueing=sc.rtt_includes_queueing, **params)
    s = tr.summary()
    j = int(np.argmax([lk["utilization"] if lk["utilization"] is not None else -1.0 for lk in s["links"]]))
    t = tr.t_s
    w = t >= t[-1] - window
    q = tr.queue_pkts[w, j]
    on_link = tr.rate_pps[:, np.asarray(net.arrays.routing[j].toarray()).ravel() > 0]
    agg = on_link.sum(axis=1)
    cap = tr.capacity_pps[j]
    reach = np.flatnonzero(agg >= 0.99 * cap)
    return {
        "point": point, "status": s["status"], "message": s["message"],
        "utilization": s["links"][j]["utilization"], "mean_queue_pkts": s["links"][j]["mean_queue_pkts"],
        "jain_index": s["jain_index"], "queue_p2p_pkts": float(np.ptp(q)) if q.size else math.nan,
        "rate_p2p_rel": float(np.ptp(agg[w]) / cap) if w.any() else math.nan,
        "t_efficiency_s": float(t[reach[0]]) if reach.size else math.nan,
        "link": s["links"][j]["name"], "window_s": s["window_s"],
    }


@dataclasses.dataclass
class SweepResult:
    """The assembled sweep: an xarray Dataset plus bookkeeping."""

    dataset: object
    n_points: int
    n_done_before: int
    n_run: int
    n_failed: int
    interrupted: bool
    out_dir: Path

    @property
    def complete(self) -> bool:
        return not self.interrupted and self.n_done_before + self.n_run == self.n_points


#: at most this many points in one sweep: every point is a full simulation (about 0.1-10 s each), so 10^5
#: points are already hours to days of work; a larger grid is almost certainly a typo (and its bookkeeping
#: alone would take gigabytes)
MAX_POINTS = 100_000


def check_metrics(metrics) -> list:
    """Check metric names before anything runs.

    Parameters
    ----------
    metrics : sequence of str
        Names from :data:`METRICS`, each once.

    Returns
    -------
    list of str
        The names, in the order given.

    Raises
    ------
    InputError
        For an unknown or repeated name (named as ``--metric``).
    """
    metrics = list(metrics)
    for m in metrics:
        check(m in METRICS, "--metric", m, f"one of {', '.join(METRICS)}")
    check(len(set(metrics)) == len(metrics), "--metric", metrics, "each metric once")
    return metrics


def run_sweep(scenario_ref, axes: dict, out_dir, *, t_end_s=None, workers: int = 1, scheduler=None,
              engine: str = "auto", progress: bool = True, past: str | None = None,
              load_rtt: str | None = None, rtt_includes_queueing: bool | None = None) -> SweepResult:
    """Run (or resume) a sweep and assemble ``OUT/sweep.nc``.

    Parameters
    ----------
    scenario_ref : str, path or Scenario
        Shipped scenario name, TOML path or a loaded :class:`~ecocc.scenarios.Scenario`.
    axes : dict
        ``name -> list of values`` (one to three axes).
    out_dir : path
        Directory for ``points/*.json``, ``sweep.json``, ``sweep.nc`` and figures.  Locked while the sweep
        runs (:class:`ecocc.store.OutputLock`): a second process on it is refused.
    t_end_s : float, optional
        Simulated time per point in seconds (default: the scenario's duration).
    workers : int
        Local worker processes (1 = in this process).
    scheduler : str, optional
        ``dask.distributed`` scheduler address.
    engine : {"auto", "numpy", "numba", "ns3"}
        Engine of every point (:func:`run_point`; default ``"auto"``).
    progress : bool
        Show a progress bar.
    past : {"silent", "steady"}, optional
        The past before ``t = 0`` of every point (:func:`ecocc.simulate`'s ``past``); default: the scenario's
        ``[scenario].past``.  Not for ``engine="ns3"`` (a packet run has no fluid past).
    load_rtt : {"current", "sent"}, optional
        How a delayed Reno-type rate is read (:func:`ecocc.simulate`'s ``load_rtt``); default: the
        scenario's ``[scenario].load_rtt``.  Not for ``engine="ns3"``.
    rtt_includes_queueing : bool, optional
        Whether each feedback delay includes the path's queueing delay (:func:`ecocc.simulate`'s option);
        default: the scenario's ``[scenario].rtt_includes_queueing``.  Not for ``engine="ns3"`` (a packet run's
        round trips always include its queues).

    Returns
    -------
    SweepResult
        The assembled dataset, counts of points run, reused and failed, and whether it was interrupted.

    Notes
    -----
    Each finished point is written at once, atomically, to ``OUT/points/<key>.json`` where ``key`` is
    :func:`point_key`: a hash of the scenario's contents, the point, the duration, the engine, the solver
    settings and the code version.  A rerun skips the points whose key exists; a point of another scenario,
    an edited scenario file, another duration or engine or code version has another key and is computed.
    """
    from . import scenarios
    from .results import json_dumps
    from .store import OutputLock, atomic_path, atomic_write_text, read_json
    sc = scenario_ref if isinstance(scenario_ref, scenarios.Scenario) else scenarios.load(scenario_ref)
    if past is not None or load_rtt is not None or rtt_includes_queueing is not None:  # over the scenario's
        from .system import check_load_rtt, check_past
        for name, v in (("past", past), ("load_rtt", load_rtt), ("rtt_includes_queueing", rtt_includes_queueing)):
            check(v is None or engine != "ns3", name, v, "no value with engine='ns3' (packet runs have no fluid "
                  "past or load reading, and their round trips always include the queues)")
        check(rtt_includes_queueing is None or isinstance(rtt_includes_queueing, bool), "rtt_includes_queueing",
              rtt_includes_queueing, "True, False or None (the scenario's)")
        sc = dataclasses.replace(sc, past=sc.past if past is None else check_past(past),
                                 load_rtt=sc.load_rtt if load_rtt is None else check_load_rtt(load_rtt),
                                 rtt_includes_queueing=(sc.rtt_includes_queueing if rtt_includes_queueing is None
                                                        else rtt_includes_queueing))
    check(isinstance(axes, dict), "axes", axes, "a dict NAME -> list of values")
    check(1 <= len(axes) <= 3, "axes", list(axes), "one to three axes")
    pnames = set(get_model(sc.model).Params.field_names())
    axes = dict(axes)
    for name, vals in axes.items():
        proto_axis = "__" in name  # a mixed scenario's protocol parameter, protocol__field (ecocc.mixed)
        check(proto_axis or name in pnames or name in SPECIAL_AXES, "axis", name,
              f"a parameter of {sc.model} ({', '.join(sorted(pnames))}), PROTOCOL__FIELD on a mixed network, "
              f"or one of {SPECIAL_AXES}")
        check(isinstance(vals, (list, tuple, np.ndarray)) and len(vals) > 0, f"axis {name}", vals,
              "a list of at least one value")
        axes[name] = [check_finite(f"axis {name}[{i}]", v) for i, v in enumerate(vals)]
        check(len(set(axes[name])) == len(axes[name]), f"axis {name}", vals, "distinct values")
        for i, v in enumerate(axes[name]):  # every value checked before anything runs
            if name in SPECIAL_AXES:
                check(v > 0, f"axis {name}[{i}]", v, "a factor > 0")
            elif proto_axis:
                from .mixed import resolve_protocols
                try:
                    resolve_protocols(sc.network, sc.model, None, sc.protocols, {name: v})
                except InputError as exc:
                    raise InputError(f"axis {name}[{i}]", v, exc.allowed) from None
            else:
                try:
                    get_model(sc.model).make_params(None, **{**sc.params, name: v})
                except InputError as exc:
                    raise InputError(f"axis {name}[{i}]", v, exc.allowed) from None
    n_grid = math.prod(len(v) for v in axes.values())
    check(n_grid <= MAX_POINTS, "axes", f"{n_grid} points", f"at most {MAX_POINTS} points (see sweeps.MAX_POINTS)")
    check(isinstance(workers, numbers.Integral) and not isinstance(workers, bool) and workers >= 1,
          "workers", workers, "an integer >= 1")
    t_end = sc.duration_s if t_end_s is None else check_finite("t_end_s", t_end_s, positive=True)
    from .limits import check_run_size
    try:
        check_run_size(sc.network, sc.model, {**sc.params}, t_end, sc.output_dt_s, axes=axes)
    except InputError as exc:  # name the axis that makes the run too large, when it is one
        name = exc.field.split(" ")[0]
        name = "rtt_scale" if name == "rtt_s" and "rtt_scale" in axes else name
        raise InputError(f"axis {name} ({exc.field})" if name in axes else exc.field, exc.value, exc.allowed) from None
    with OutputLock(out_dir) as lock:
        out = lock.out
        (out / "points").mkdir(parents=True, exist_ok=True)
        names = list(axes)
        grid = [dict(zip(names, combo)) for combo in itertools.product(*(axes[n] for n in names))]
        keys = [point_key(sc, p, t_end, engine) for p in grid]
        atomic_write_text(out / "sweep.json", json_dumps(
            {"scenario": sc.name, "scenario_source": str(scenario_ref) if not isinstance(scenario_ref, scenarios.Scenario)
             else sc.name, "scenario_digest": sc.digest, "axes": axes, "t_end_s": t_end, "engine": engine,
             **SOLVER, **({} if engine == "ns3" else {"past": sc.past, "load_rtt": sc.load_rtt,
                                                      "rtt_includes_queueing": sc.rtt_includes_queueing}),
             "point_keys": [k for k, _ in keys]}, indent=2))
        todo = [(p, k) for p, k in zip(grid, keys) if read_json(out / "points" / f"{k[0]}.json") is None]
        done_before = len(grid) - len(todo)
        bar = None
        if progress:
            from tqdm.auto import tqdm
            bar = tqdm(total=len(grid), initial=done_before, unit="run", desc=f"sweep {sc.name}")

        def save(res, key):
            res = dict(res, key=key[0], key_inputs=key[1])
            atomic_write_text(out / "points" / f"{key[0]}.json", json_dumps(res))  # non-finite -> null
            if bar is not None:
                bar.update(1)

        n_run = n_failed = 0
        interrupted = False
        try:
            if scheduler is not None:
                try:
                    from dask.distributed import Client, as_completed
                except ImportError:
                    raise InputError("--scheduler", scheduler,
                                     "a dask.distributed address (pip install 'dask[distributed]')") from None
                try:
                    client = Client(scheduler, timeout="10s")
                except (OSError, TimeoutError, ValueError, TypeError) as exc:
                    raise InputError("--scheduler", scheduler,
                                     f"the address of a running dask scheduler, e.g. tcp://host:8786 ({exc})") from None
                with client:
                    futs = {client.submit(run_point, sc, p, t_end, engine, pure=False): k for p, k in todo}
                    for fut in as_completed(futs):
                        res = fut.result()
                        save(res, futs[fut]); n_run += 1; n_failed += res["status"] != "success"
            elif workers == 1:
                for p, k in todo:
                    res = run_point(sc, p, t_end, engine)
                    save(res, k); n_run += 1; n_failed += res["status"] != "success"
            else:
                from concurrent.futures import ProcessPoolExecutor, as_completed
                with ProcessPoolExecutor(max_workers=int(workers)) as ex:
                    futs = {ex.submit(run_point, sc, p, t_end, engine): k for p, k in todo}
                    try:
                        for fut in as_completed(futs):
                            res = fut.result()
                            save(res, futs[fut]); n_run += 1; n_failed += res["status"] != "success"
                    except KeyboardInterrupt:
                        for f in futs:
                            f.cancel()
                        raise
        except KeyboardInterrupt:
            interrupted = True
        finally:
            if bar is not None:
                bar.close()
        ds = assemble(out, axes, sc, keys=[k for k, _ in keys])
        with atomic_path(out / "sweep.nc") as tmp:
            ds.to_netcdf(tmp, engine="h5netcdf")
    return SweepResult(ds, len(grid), done_before, n_run, n_failed, interrupted, out)


def execute_tasks(fn, tasks, *, workers: int = 1, scheduler=None, progress: bool = False, desc: str = "runs"):
    """Yield ``(task, fn(task))`` for every task, as they finish.

    In this process (``workers=1``), in ``workers`` local processes, or on the ``dask.distributed``
    cluster at ``scheduler``.  ``fn`` and the tasks must be picklable (except in this process).  The same
    three ways of running as :func:`run_sweep`.

    Parameters
    ----------
    fn : callable
        ``fn(task) -> result``, run once per task.
    tasks : sequence
        The tasks (``len`` is taken for the progress bar).
    workers : int, optional
        Local processes (>= 1); ignored when ``scheduler`` is given.
    scheduler : str or None, optional
        Address of a running dask scheduler, e.g. ``tcp://host:8786``.
    progress : bool, optional
        Show a progress bar (tqdm).
    desc : str, optional
        Label of the progress bar.

    Yields
    ------
    task : object
        A task.
    result : object
        ``fn(task)``, in order of completion (task order when ``workers=1``).

    Raises
    ------
    InputError
        For ``workers`` not an integer >= 1, dask not installed, or a scheduler that cannot be reached.
    """
    check(isinstance(workers, numbers.Integral) and not isinstance(workers, bool) and workers >= 1,
          "workers", workers, "an integer >= 1")
    bar = None
    if progress:
        from tqdm.auto import tqdm
        bar = tqdm(total=len(tasks), unit="run", desc=desc)
    try:
        if scheduler is not None:
            try:
                from dask.distributed import Client, as_completed
            except ImportError:
                raise InputError("--scheduler", scheduler, "a dask.distributed address (pip install 'dask[distributed]')") from None
            try:
                client = Client(scheduler, timeout="10s")
            except (OSError, TimeoutError, ValueError, TypeError) as exc:
                raise InputError("--scheduler", scheduler,
                                 f"the address of a running dask scheduler, e.g. tcp://host:8786 ({exc})") from None
            with client:
                futs = {client.submit(fn, t, pure=False): t for t in tasks}
                for fut in as_completed(list(futs)):
                    yield futs[fut], fut.result()
                    if bar is not None:
                        bar.update(1)
        elif int(workers) == 1:
            for t in tasks:
                yield t, fn(t)
                if bar is not None:
                    bar.update(1)
        else:
            from concurrent.futures import ProcessPoolExecutor, as_completed
            with ProcessPoolExecutor(max_workers=int(workers)) as ex:
                futs = {ex.submit(fn, t): t for t in tasks}
                for fut in as_completed(futs):
                    yield futs[fut], fut.result()
                    if bar is not None:
                        bar.update(1)
    finally:
        if bar is not None:
            bar.close()


def assemble(out_dir, axes: dict, sc, keys=None, t_end_s=None, engine="auto"):
    """Collect ``points/<key>.json`` into a Dataset.

    Parameters
    ----------
    out_dir : path
        The sweep's directory.
    axes : dict
        ``name -> values``.
    sc : Scenario
        The swept scenario.
    keys : list of str, optional
        Point keys in grid order (``itertools.product`` of the axes); default: :func:`point_key` of ``sc``,
        ``t_end_s`` (default the scenario's duration) and ``engine``.
    t_end_s : float, optional
        Simulated time per point, seconds (for the default keys).
    engine : str
        The engine of the points (for the default keys).

    Returns
    -------
    xarray.Dataset
        One variable per metric on the axes (NaN and status ``"not run"`` where a point is missing).
    """
    import xarray as xr

    from .store import read_json
    out = Path(out_dir)
    names = list(axes)
    shape = tuple(len(axes[n]) for n in names)
    if keys is None:
        t_end = sc.duration_s if t_end_s is None else t_end_s
        keys = [point_key(sc, dict(zip(names, combo)), t_end, engine)[0]
                for combo in itertools.product(*(axes[n] for n in names))]
    data = {m: np.full(shape, np.nan) for m in METRICS}
    status = np.full(shape, "not run", dtype=object)
    for idx, key in zip(itertools.product(*(range(s) for s in shape)), keys):
        rec = read_json(out / "points" / f"{key}.json")
        if rec is not None:
            for m in METRICS:
                v = rec.get(m)
                data[m][idx] = np.nan if v is None else v
            status[idx] = rec["status"]
    units = {"utilization": "1", "mean_queue_pkts": "packets", "jain_index": "1", "queue_p2p_pkts": "packets",
             "rate_p2p_rel": "1", "t_efficiency_s": "s"}
    ds = xr.Dataset({m: (names, data[m], {"units": units[m]}) for m in METRICS},
                    coords={n: (n, np.asarray(axes[n], dtype=float)) for n in names})
    ds["status"] = (names, status.astype(str))
    ds.attrs.update(scenario=sc.name, model=sc.model, description=sc.description, scenario_digest=sc.digest,
                    past=sc.past, load_rtt=sc.load_rtt, rtt_includes_queueing=int(sc.rtt_includes_queueing))
    return ds


def plot_sweep(ds, metric="queue_p2p_pkts", ax=None, *, fig=None, **line_kw):
    """Line plot (one axis) or heat map (two or more axes: the first two) of a sweep metric.

    Parameters
    ----------
    ds : xarray.Dataset
        From :func:`run_sweep` / :func:`assemble`.
    metric : str
        One of :data:`METRICS`; labelled in words with units
        (:func:`ecocc.plotting.param_label`).
    ax : matplotlib Axes, optional
        Where to draw; a new figure is created when absent.
    fig : matplotlib Figure, optional
        Deprecated (use ``ax=``); accepted for one release with a DeprecationWarning.
    **line_kw
        Passed to ``Axes.plot`` (one axis) or ``Axes.pcolormesh`` (heat map).

    Returns
    -------
    ecocc.plotting.SweepPlot
        ``figure``, ``axes``, ``lines`` (list of Line2D), ``mesh`` (QuadMesh or None),
        ``colorbar`` and ``savefig``.
    """
    from .plotting import SweepPlot, _resolve_axes, model_label, param_label
    if metric not in ds:
        raise InputError("metric", metric, f"one of {list(METRICS)}")
    da = ds[metric]
    figure, (ax,), created = _resolve_axes(ax, 1, fig, (7, 5), "plot_sweep")
    label = param_label(metric)
    dims = list(da.dims)
    res = SweepPlot(figure=figure, axes=ax)
    if len(dims) == 1:
        kw = dict(marker="o", ls="-")
        kw.update(line_kw)
        res.lines += ax.plot(da[dims[0]].values, da.values, **kw)
        ax.set_xlabel(param_label(dims[0]))
        ax.set_ylabel(label)
    else:
        x, y = dims[1], dims[0]
        vals = da.values if da.ndim == 2 else da.isel({d: 0 for d in dims[2:]}).values
        kw = dict(shading="nearest", cmap="viridis")
        kw.update(line_kw)
        res.mesh = ax.pcolormesh(da[x].values, da[y].values, vals, **kw)
        res.colorbar = figure.colorbar(res.mesh, ax=ax, label=label)
        ax.set_xlabel(param_label(x))
        ax.set_ylabel(param_label(y))
    extra = "" if da.ndim <= 2 else "; " + ", ".join(f"{param_label(d)} = {float(da[d].values[0]):g}"
                                                       for d in dims[2:])
    ax.set_title(f"Sweep of scenario {ds.attrs.get('scenario', '?')}, model {model_label(ds.attrs.get('model', '?'))}"
                 f"{extra}", fontsize=10)
    ax.grid(alpha=0.3)
    return res
