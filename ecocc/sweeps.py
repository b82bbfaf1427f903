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
import json
import math
from pathlib import Path

import numpy as np

from .errors import InputError, check
from .models import get_model

SPECIAL_AXES = ("rtt_scale", "capacity_scale")
METRICS = ("utilization", "mean_queue_pkts", "jain_index", "queue_p2p_pkts", "rate_p2p_rel", "t_efficiency_s")


def parse_axis(text: str):
    """``NAME=v1,v2,...`` or ``NAME=start:stop:count`` (inclusive linspace)."""
    if "=" not in text:
        raise InputError("--axis", text, "NAME=v1,v2,... or NAME=start:stop:count")
    name, vals = text.split("=", 1)
    name = name.strip()
    try:
        if ":" in vals:
            a, b, n = vals.split(":")
            a, b, n = float(a), float(b), int(n)
        else:
            values = [float(v) for v in vals.split(",") if v.strip()]
    except ValueError:
        raise InputError(f"--axis {name}", vals, "numbers: v1,v2,... or start:stop:count") from None
    if ":" in vals:
        check(n >= 1, f"--axis {name} count", n, "an integer >= 1")
        values = list(np.linspace(a, b, n))
    check(len(values) > 0, f"--axis {name}", vals, "at least one value")
    return name, values


def _key(point: dict) -> str:
    s = json.dumps({k: float(v) for k, v in sorted(point.items())}, sort_keys=True)
    return hashlib.sha1(s.encode()).hexdigest()[:16]


def run_point(scenario_ref: str, point: dict, t_end_s: float | None = None, engine: str = "auto") -> dict:
    """Simulate one grid point and return its metrics (a JSON-able dict)."""
    from . import scenarios
    from .simulate import simulate
    sc = scenarios.load(scenario_ref)
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
                      engine=engine, **params)
    s = tr.summary()
    j = int(np.argmax([lk["utilization"] for lk in s["links"]]))
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


def run_sweep(scenario_ref: str, axes: dict, out_dir, *, t_end_s=None, workers: int = 1, scheduler=None,
              engine: str = "auto", progress: bool = True) -> SweepResult:
    """Run (or resume) a sweep and assemble ``OUT/sweep.nc``.

    Parameters
    ----------
    scenario_ref : shipped scenario name or TOML path
    axes : dict ``name -> list of values`` (one or two axes)
    out_dir : directory for ``points/*.json``, ``sweep.nc`` and figures
    workers : local worker processes (1 = in this process)
    scheduler : ``dask.distributed`` scheduler address, or None
    """
    from . import scenarios
    sc = scenarios.load(scenario_ref)
    check(1 <= len(axes) <= 3, "axes", list(axes), "one to three axes")
    pnames = set(get_model(sc.model).Params.field_names())
    for name, vals in axes.items():
        check(name in pnames or name in SPECIAL_AXES, "axis", name,
              f"a parameter of {sc.model} ({', '.join(sorted(pnames))}) or one of {SPECIAL_AXES}")
        check(len(vals) > 0, f"axis {name}", vals, "at least one value")
    check(int(workers) >= 1, "workers", workers, "an integer >= 1")
    out = Path(out_dir)
    (out / "points").mkdir(parents=True, exist_ok=True)
    (out / "sweep.json").write_text(json.dumps({"scenario": scenario_ref, "axes": axes, "t_end_s": t_end_s}, indent=2))
    names = list(axes)
    grid = [dict(zip(names, combo)) for combo in itertools.product(*(axes[n] for n in names))]
    todo = [p for p in grid if not (out / "points" / f"{_key(p)}.json").exists()]
    done_before = len(grid) - len(todo)
    bar = None
    if progress:
        from tqdm.auto import tqdm
        bar = tqdm(total=len(grid), initial=done_before, unit="run", desc=f"sweep {sc.name}")

    def save(res):
        (out / "points" / f"{_key(res['point'])}.json").write_text(json.dumps(res, default=_json_default))
        if bar is not None:
            bar.update(1)

    n_run = n_failed = 0
    interrupted = False
    try:
        if scheduler is not None:
            try:
                from dask.distributed import Client, as_completed
            except ImportError:
                raise InputError("--scheduler", scheduler, "a dask.distributed address (pip install 'dask[distributed]')") from None
            with Client(scheduler) as client:
                futs = [client.submit(run_point, scenario_ref, p, t_end_s, engine, pure=False) for p in todo]
                for fut in as_completed(futs):
                    res = fut.result()
                    save(res); n_run += 1; n_failed += res["status"] != "success"
        elif workers == 1:
            for p in todo:
                res = run_point(scenario_ref, p, t_end_s, engine)
                save(res); n_run += 1; n_failed += res["status"] != "success"
        else:
            from concurrent.futures import ProcessPoolExecutor, as_completed
            with ProcessPoolExecutor(max_workers=int(workers)) as ex:
                futs = [ex.submit(run_point, scenario_ref, p, t_end_s, engine) for p in todo]
                try:
                    for fut in as_completed(futs):
                        res = fut.result()
                        save(res); n_run += 1; n_failed += res["status"] != "success"
                except KeyboardInterrupt:
                    for f in futs:
                        f.cancel()
                    raise
    except KeyboardInterrupt:
        interrupted = True
    finally:
        if bar is not None:
            bar.close()
    ds = assemble(out, axes, sc)
    ds.to_netcdf(out / "sweep.nc", engine="h5netcdf")
    return SweepResult(ds, len(grid), done_before, n_run, n_failed, interrupted, out)


def _json_default(o):
    if isinstance(o, (np.floating, np.integer)):
        return o.item()
    raise TypeError(type(o).__name__)


def assemble(out_dir, axes: dict, sc=None):
    """Collect ``points/*.json`` into an ``xarray.Dataset`` (NaN where not done)."""
    import xarray as xr
    out = Path(out_dir)
    names = list(axes)
    shape = tuple(len(axes[n]) for n in names)
    data = {m: np.full(shape, np.nan) for m in METRICS}
    status = np.full(shape, "not run", dtype=object)
    for idx in itertools.product(*(range(s) for s in shape)):
        p = {n: axes[n][i] for n, i in zip(names, idx)}
        f = out / "points" / f"{_key(p)}.json"
        if f.exists():
            rec = json.loads(f.read_text())
            for m in METRICS:
                v = rec.get(m)
                data[m][idx] = np.nan if v is None else v
            status[idx] = rec["status"]
    units = {"utilization": "1", "mean_queue_pkts": "packets", "jain_index": "1", "queue_p2p_pkts": "packets",
             "rate_p2p_rel": "1", "t_efficiency_s": "s"}
    ds = xr.Dataset({m: (names, data[m], {"units": units[m]}) for m in METRICS},
                    coords={n: (n, np.asarray(axes[n], dtype=float)) for n in names})
    ds["status"] = (names, status.astype(str))
    if sc is not None:
        ds.attrs.update(scenario=sc.name, model=sc.model, description=sc.description)
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
