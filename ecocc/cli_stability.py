"""Click commands ``margins``, ``stability-map`` and ``sim-map`` (added to ``ecocc`` by cli.py)."""
from __future__ import annotations

import json
import math
import re
import sys
from pathlib import Path

import click

from .errors import InputError

SUPPORTED = ("aecp", "cltcp", "petcp", "symbiosis")


def _model(name):
    key = str(name).lower()
    if key not in SUPPORTED:
        raise click.BadParameter(f"model = {name!r} is not allowed: one of {', '.join(SUPPORTED)}", param_hint="MODEL")
    return key


def _parse_sets(model, sets):
    from .models import get_model
    m = get_model(model)
    allowed = m.Params.field_names()
    out = {}
    for item in sets:
        if "=" not in item:
            raise click.BadParameter(f"{item!r} is not NAME=VALUE", param_hint="--set")
        k, v = item.split("=", 1)
        k = k.strip()
        if k not in allowed:
            raise click.BadParameter(f"parameter {k!r} is not allowed for {model}: one of {', '.join(allowed)}",
                                     param_hint="--set")
        val = v.strip()
        if val.lower() in ("true", "false"):
            val = val.lower() == "true"
        else:
            try:
                val = float(val)
            except ValueError:
                pass
        out[k] = val
    try:
        m.make_params(None, **out)
    except InputError as e:
        raise click.BadParameter(str(e), param_hint="--set") from None
    return out


def _clean(v):
    if isinstance(v, float) and not math.isfinite(v):
        return None  # JSON null for every non-finite number, as in every ecocc output
    if isinstance(v, dict):
        return {k: _clean(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_clean(x) for x in v]
    return v


@click.command("margins")
@click.argument("model")
@click.option("--set", "sets", multiple=True, metavar="NAME=VALUE", help="Model parameter, e.g. alpha_per_s=1.")
@click.option("--flows", "n_flows", type=click.IntRange(min=1), default=4, show_default=True, help="Number of flows N.")
@click.option("--rtt-s", type=click.FloatRange(min=0, min_open=True), default=0.1, show_default=True,
              help="Round-trip (feedback) delay in seconds.")
@click.option("--capacity-pps", type=click.FloatRange(min=0, min_open=True), default=1000.0, show_default=True,
              help="Bottleneck capacity in packets/s.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def margins(model, sets, n_flows, rtt_s, capacity_pps, as_json):
    """Gain/phase/delay margins of MODEL's linearized loop (N synchronous flows, one link)."""
    from .stability import analyze
    key = _model(model)
    params = _parse_sets(key, sets)
    try:
        a = analyze(key, n_flows=n_flows, rtt_s=rtt_s, capacity_pps=capacity_pps, **params)
    except InputError as e:
        raise click.UsageError(str(e)) from None
    d = _clean(a.as_dict())
    if as_json:
        click.echo(json.dumps(d, indent=2))
        return
    click.echo(f"{key}: L(s) = {a.loop}   (loop delay e^(-s tau), tau = {rtt_s:g} s)")
    for k in ("phase_margin_deg", "gain_margin", "crossover_rad_s", "delay_margin_s", "critical_delay_s", "stable",
              "rightmost_root_per_s", "status"):
        click.echo(f"  {k:22s} {d[k]}")
    for msg in a.messages:
        click.echo(f"  note: {msg}")


@click.command("stability-map")
@click.argument("model")
@click.option("--axis", "axes", multiple=True, metavar="NAME=VALUES",
              help="An axis, given twice (x first, then y): NAME=v1,v2,... or NAME=start:stop:count.  "
                   "Default: --axis alpha_per_s=0.5,1,2,3,4 --axis rtt_s=0.05,0.2,0.4,0.6,0.8,1.0")
@click.option("--x", "x_name", default=None, hidden=True, help="Deprecated: use --axis.")
@click.option("--x-values", default=None, hidden=True, help="Deprecated: use --axis.")
@click.option("--y", "y_name", default=None, hidden=True, help="Deprecated: use --axis.")
@click.option("--y-values", default=None, hidden=True, help="Deprecated: use --axis.")
@click.option("--set", "sets", multiple=True, metavar="NAME=VALUE", help="Other model parameters.")
@click.option("--flows", "n_flows", type=click.IntRange(min=1), default=4, show_default=True)
@click.option("--rtt-s", type=click.FloatRange(min=0, min_open=True), default=0.1, show_default=True)
@click.option("--capacity-pps", type=click.FloatRange(min=0, min_open=True), default=1000.0, show_default=True)
@click.option("--simulate", "sim_points", multiple=True, metavar="X,Y", help="Simulate the nonlinear model at X,Y.")
@click.option("--sim-t-end-s", type=click.FloatRange(min=0, min_open=True), default=60.0, show_default=True)
@click.option("--out", "out_dir", type=click.Path(file_okay=False), required=True, help="Output directory.")
def stability_map(model, axes, x_name, x_values, y_name, y_values, sets, n_flows, rtt_s, capacity_pps, sim_points,
                  sim_t_end_s, out_dir):
    """Stability map of MODEL over a parameter plane: PNG + NetCDF in --out."""
    from .models import get_model
    from .stability import plot_stability_map
    from .stability import stability_map as smap
    key = _model(model)
    params = _parse_sets(key, sets)
    from .sweeps import plane_axes
    old_x = None if x_name is None and x_values is None else f"{x_name or 'alpha_per_s'}={x_values or '0.5,1,2,3,4'}"
    old_y = None if y_name is None and y_values is None else f"{y_name or 'rtt_s'}={y_values or '0.05,0.2,0.4,0.6,0.8,1.0'}"
    (x_name, xs, xo), (y_name, ys, yo), note = plane_axes(
        axes, old_x, old_y, default=("alpha_per_s=0.5,1,2,3,4", "rtt_s=0.05,0.2,0.4,0.6,0.8,1.0"),
        old_form="--x/--x-values/--y/--y-values")
    if note:
        click.echo(f"note: {note}", err=True)
    allowed = get_model(key).Params.field_names() + ["rtt_s", "capacity_pps", "n_flows"]
    for hint, nm in ((xo, x_name), (yo, y_name)):
        if nm not in allowed:
            raise click.BadParameter(f"{nm!r} is not allowed: one of {', '.join(allowed)}", param_hint=hint)

    def floats(text, hint):
        try:
            return [float(v) for v in text.split(",") if v.strip()]
        except ValueError:
            raise click.BadParameter(f"{text!r} is not allowed: comma-separated numbers", param_hint=hint) from None
    pts = [tuple(floats(p, "--simulate")) for p in sim_points]
    if any(len(p) != 2 for p in pts):
        raise click.BadParameter(f"{sim_points!r} is not allowed: X,Y pairs", param_hint="--simulate")
    try:
        ds = smap(key, x_name, xs, y_name, ys, n_flows=n_flows, rtt_s=rtt_s, capacity_pps=capacity_pps,
                  simulate_points=pts, sim_t_end_s=sim_t_end_s, **params)
    except InputError as e:
        raise click.UsageError(str(e)) from None
    from .store import OutputLock, atomic_path
    with OutputLock(out_dir) as lock:
        nc = lock.out / f"stability_map_{key}.nc"; png = lock.out / f"stability_map_{key}.png"
        with atomic_path(nc) as tmp:
            ds.to_netcdf(tmp)
        fig = plot_stability_map(ds)
        with atomic_path(png) as tmp:
            fig.savefig(tmp, dpi=120, bbox_inches="tight")
    click.echo(f"wrote {png} and {nc}")


#: simulate_map argument -> sim-map option, for error messages
_MAP_OPTIONS = {"x_name": "--x", "y_name": "--y", "t_end_s": "--t-end-s", "window_s": "--window-s",
                "swing_threshold_pkts": "--threshold-pkts", "engine": "--engine"}


def _as_option(exc, x_name, y_name, x_opt="--x", y_opt="--y"):
    """The InputError ``exc`` of simulate_map with its field named as the sim-map option."""
    m = re.match(r"([xy])_values\[(\d+)\]", exc.field)
    if m:
        field = f"{x_opt if m[1] == 'x' else y_opt} {x_name if m[1] == 'x' else y_name}[{m[2]}]"
    elif exc.field in ("x_name", "y_name"):
        field = x_opt if exc.field == "x_name" else y_opt
    else:
        field = _MAP_OPTIONS.get(exc.field, exc.field)
    value = exc.value.item() if hasattr(exc.value, "item") and getattr(exc.value, "ndim", 1) == 0 else exc.value
    return InputError(field, value, exc.allowed)


SIM_MAP_DEFAULT = "aecp-parking-lot"


@click.command("sim-map")
@click.argument("scenario", required=False, default=None)
@click.option("--axis", "axes", multiple=True, metavar="NAME=VALUES",
              help="An axis, given twice (x first, then y): a model parameter or rtt_scale, NAME=start:stop:count "
                   "or NAME=v1,v2,...  Default: --axis alpha_per_s=0.5:6:20 --axis rtt_scale=0.25:4:20")
@click.option("--x", "x_axis", default=None, hidden=True, metavar="NAME=VALUES", help="Deprecated: use --axis.")
@click.option("--y", "y_axis", default=None, hidden=True, metavar="NAME=VALUES", help="Deprecated: use --axis.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), required=True,
              help="Directory for sim_map.nc, sim_map.json and sim_map.png.")
@click.option("--set", "sets", multiple=True, metavar="NAME=VALUE", help="Override a model parameter (every point).")
@click.option("--t-end-s", type=float, default=None,
              help="Simulated time per point (s; default: the scenario's duration).")
@click.option("--window-s", type=float, default=None,
              help="Final window over which the queue swing is measured (s; default: the scenario's summary window, "
                   "else a tenth of --t-end-s).")
@click.option("--threshold-pkts", type=float, default=1.0, show_default=True,
              help="Stable: every link's queue swings (peak to peak) less than this over the window (packets).")
@click.option("--engine", type=click.Choice(["numba", "numpy"]), default=None,
              help="numba: compiled kernel, points in parallel (AECP/CLTCP; axes alpha_per_s, beta_per_s, T_s, "
                   "q0_pkts, rtt_scale); numpy: one reference run per point (any model, slow).  "
                   "Default: numba when it applies, else numpy.")
@click.option("--rtol", type=float, default=1e-7, show_default=True, help="Relative tolerance of the adaptive solver.")
@click.option("--steps-within-delay", is_flag=True,
              help="numba engine: never step past the smallest delay (the NumPy solver's method; slower at small "
                   "RTTs).  Default: longer steps, delayed values inside a step corrected iteratively.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@click.option("--quiet", is_flag=True, help="No progress bar.")
@click.option("--no-figure", is_flag=True, help="Skip the PNG figure.")
@click.option("--save-every-s", type=click.FloatRange(min=0), default=10.0, show_default=True,
              help="Write the finished points to sim_map.nc at most this often (wall-clock seconds) while the map "
                   "runs, so a killed run loses at most that much work.")
def sim_map(scenario, axes, x_axis, y_axis, out_dir, sets, t_end_s, window_s, threshold_pkts, engine, rtol,
            steps_within_delay, as_json, quiet, no_figure, save_every_s):
    """Stability map of SCENARIO by simulating every grid point (a TOML file or a shipped name; default:
    aecp-parking-lot, whose flows all stay for the whole run; in aecp-dumbbell flows join and leave, so its
    queue never settles by this rule): NetCDF, JSON summary and PNG in --out.

    A point is stable when its run succeeded and every link's queue swings by less than --threshold-pkts over the
    last --window-s seconds of --t-end-s.  Interrupted with Ctrl-C, the finished points are written; the same
    command again runs only the missing ones.
    """
    import numpy as np

    from . import scenarios
    from .batch import MAP_AXES_NUMBA, simulate_map
    from .cli import parse_assignment
    from .dde.engine import check_engine
    from .errors import check_finite
    from .models import get_model

    sc = scenarios.load(scenario or SIM_MAP_DEFAULT)
    t_end_s = sc.duration_s if t_end_s is None else t_end_s
    if window_s is None:
        window_s = sc.summary_window_s if sc.summary_window_s and sc.summary_window_s <= t_end_s else 0.1 * t_end_s
    params = dict(sc.params)
    params.update(dict(parse_assignment(s) for s in sets))
    from .sweeps import plane_axes
    (x_name, x_values, x_opt), (y_name, y_values, y_opt), note = plane_axes(
        axes, x_axis, y_axis, default=("alpha_per_s=0.5:6:20", "rtt_scale=0.25:4:20"))
    if note:
        click.echo(f"note: {note}", err=True)
    rtol = check_finite("--rtol", rtol, positive=True)
    model = get_model(sc.model)
    if engine is None:
        try:
            check_engine("numba", model, sc.network, kernel="lanes")
            engine = "numba"
        except InputError:
            engine = "numpy"
        if engine == "numba" and not {x_name, y_name} <= set(MAP_AXES_NUMBA):
            engine = "numpy"
            if not quiet:
                click.echo(f"note: engine numpy (the numba kernel takes the axes {', '.join(MAP_AXES_NUMBA)})",
                           err=True)
    from .store import OutputLock, atomic_path, atomic_write_text, load_dataset, run_key, save_dataset
    lock = OutputLock(out_dir).__enter__()  # one process per --out; released when the command ends
    click.get_current_context().call_on_close(lambda: lock.__exit__(None, None, None))
    out = lock.out
    kw = dict(t_end_s=t_end_s, window_s=window_s, swing_threshold_pkts=threshold_pkts, engine=engine, rtol=rtol,
              progress=not quiet, overlap=not steps_within_delay, **params)
    # an earlier run of the same command (same scenario contents, grid, settings, code): keep its finished points
    key, _ = run_key(kind="sim-map", scenario_digest=sc.digest, x=[x_name, x_values], y=[y_name, y_values],
                     **{k: v for k, v in kw.items() if k != "progress"})
    previous, note = load_dataset(out / "sim_map.nc", key)
    if note:  # --quiet only hides the progress bar
        click.echo(f"note: {note}", err=True)
    kw["on_partial"] = lambda part: save_dataset(out / "sim_map.nc", part, key)  # finished points as they come
    kw["partial_every_s"] = save_every_s
    try:
        try:
            ds = simulate_map(sc.network, sc.model, x_name, x_values, y_name, y_values, previous=previous, **kw)
        except InputError as e:
            if e.field != "previous":
                raise
            if not quiet:
                click.echo(f"note: {out / 'sim_map.nc'} holds a map of other settings; computing every point",
                           err=True)
            ds = simulate_map(sc.network, sc.model, x_name, x_values, y_name, y_values, **kw)
    except InputError as e:
        raise _as_option(e, x_name, y_name, x_opt, y_opt) from None

    files = {"netcdf": "sim_map.nc", "summary": "sim_map.json", "figure": None if no_figure else "sim_map.png"}
    save_dataset(out / files["netcdf"], ds, key)  # atomic; simulate_map returns a NetCDF-ready dataset
    status = ds["status"].values.astype(str)
    stable = ds["stable"].values.astype(bool)
    ok = status == "success"
    counts = {"points": int(status.size), "stable": int(stable.sum()), "not_stable": int((ok & ~stable).sum()),
              "failed": int((~ok & (status != "interrupted")).sum()),
              "interrupted": int((status == "interrupted").sum())}
    statuses, n_status = np.unique(status, return_counts=True)

    def axis(name, coord):
        v = coord.values
        return {"name": name, "units": coord.attrs.get("units", "-"), "min": float(v.min()), "max": float(v.max()),
                "count": int(v.size), "values": [float(a) for a in v]}

    a = ds.attrs
    summary = _clean({
        "scenario": a["scenario"], "scenario_source": sc.source, "model": a["model"],
        "x": axis(x_name, ds["x"]), "y": axis(y_name, ds["y"]), "counts": counts,
        "status_counts": {str(k): int(n) for k, n in zip(statuses, n_status)},
        "verdict": a["verdict"], "swing_threshold_pkts": float(a["swing_threshold_pkts"]),
        "engine": a["engine"], "solver": a["solver"], "rtol": float(a["rtol"]), "t_end_s": float(a["t_end_s"]),
        "window_s": float(a["window_s"]), "sample_dt_s": float(a["sample_dt_s"]), "base_params": params,
        "wall_s": float(a["wall_s"]), "out_dir": str(out), "files": files})
    atomic_write_text(out / files["summary"], json.dumps(summary, indent=2, default=str))
    if not no_figure:
        import matplotlib
        matplotlib.use("Agg")
        from .plotting import plot_simulated_map
        fig = plot_simulated_map(ds)
        with atomic_path(out / files["figure"]) as tmp:
            fig.savefig(tmp, dpi=120)
    if as_json:
        click.echo(json.dumps(summary, indent=2, default=str))
    else:
        c = counts
        click.echo(f"{a['scenario']} ({a['model']}): {ds.sizes['y']} x {ds.sizes['x']} points "
                   f"({y_name} x {x_name}), engine {a['engine']}, {a['wall_s']:.1f} s: {c['stable']} stable, "
                   f"{c['not_stable']} not stable, {c['failed']} failed, {c['interrupted']} interrupted")
        click.echo(f"  {a['verdict']}")
        click.echo("  wrote " + ", ".join(str(out / f) for f in files.values() if f))
    if counts["interrupted"]:
        click.echo("interrupted: the points not reached are marked 'interrupted'", err=True)
        sys.exit(130)

