"""Click commands ``margins``, ``stability-map`` and ``sim-map`` (added to ``ecocc`` by cli.py)."""
from __future__ import annotations

import json
import math
import re
import sys
from pathlib import Path

import click
import numpy as np

from .cli_readings import reading_options, resolve_readings
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
    """JSON-ready: non-finite floats become null (JSON has no inf/NaN), tuples lists, NumPy scalars Python."""
    if hasattr(v, "item") and getattr(v, "ndim", None) == 0:
        v = v.item()
    if isinstance(v, float) and not math.isfinite(v):
        return None  # JSON null for every non-finite number, as in every ecocc output
    if isinstance(v, dict):
        return {k: _clean(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_clean(x) for x in v]
    return v


#: the paper's setting of each model: the shipped scenario whose link, flows and parameters ``margins MODEL`` uses
PAPER_SCENARIO = {"aecp": "aecp-dumbbell", "cltcp": "cltcp-dumbbell", "petcp": "petcp-dumbbell",
                  "symbiosis": "symbiosis-join", "reno": "reno-dumbbell"}
LINEAR_MODELS = SUPPORTED + ("reno",)


def linear_setting(target):
    """Return the model, parameters and synchronous-loop setting (N, C, RTT) of a model name or a scenario.

    A model name reads its paper's scenario (:data:`PAPER_SCENARIO`).  The
    scenario must have one link; with RTTs that differ the loop takes the
    largest (the most delay-sensitive reading) and says so.

    Parameters
    ----------
    target : str
        A model name with a paper scenario (a key of :data:`PAPER_SCENARIO`, any case) or a scenario
        name or ``.toml`` path.

    Returns
    -------
    dict
        ``model``, ``params`` (the scenario's overrides), ``n_flows``, ``capacity_pps`` (packets/s),
        ``rtt_s`` (seconds, the largest), ``scenario``, ``source``, ``packet_bytes``, ``notes`` (what the
        loop leaves out: differing RTTs, cross traffic, flows joining or leaving), and the scenario's readings
        ``past`` and ``load_rtt`` (for simulations of the setting).

    Raises
    ------
    InputError
        For a scenario that cannot be loaded, a model without a linear loop, mixed protocols, or more than
        one link.
    """
    from . import scenarios
    key = str(target).lower()
    name = PAPER_SCENARIO.get(key, target)
    sc = scenarios.load(name)
    from .cli_readings import refuse_rtt
    refuse_rtt(sc, "the synchronous loop")
    if sc.model not in LINEAR_MODELS:
        raise InputError("scenario model", sc.model, f"one of {', '.join(LINEAR_MODELS)} (a linear loop exists)")
    net = sc.network
    if sc.protocols or len({f.protocol for f in net.flows}) > 1:  # the loop is one model with sc.params
        raise InputError("scenario", sc.name, "a scenario of one protocol without a [protocols] table (mixed "
                         "protocols: ecocc.stability.network_linear.network_jacobians at the rest point)")
    if net.n_links != 1:
        raise InputError("scenario", sc.name, f"a scenario with one bottleneck link for the synchronous loop "
                         f"(it has {net.n_links}; see ecocc.stability.network_linear for whole networks)")
    a = net.arrays
    rtts = np.asarray(a.rtt_s, float)
    notes = []
    if np.ptp(rtts) > 0:
        notes.append(f"the flows' RTTs differ ({rtts.min():g}-{rtts.max():g} s): the synchronous loop takes the "
                     f"largest, {rtts.max():g} s (--rtt-s to choose another)")
    if net.cross_traffic:
        notes.append("the scenario's cross traffic is not in the synchronous loop")
    if np.any(np.isfinite(a.stop_s)) or np.ptp(a.start_s) > 0:
        notes.append(f"all {net.n_flows} flows taken as active together (in the scenario they join/leave)")
    return {"model": sc.model, "params": dict(sc.params), "n_flows": int(net.n_flows),
            "capacity_pps": float(a.capacity_pps[0]), "rtt_s": float(rtts.max()), "scenario": sc.name,
            "source": sc.source, "packet_bytes": int(net.packet_bytes), "notes": notes,
            "past": sc.past, "load_rtt": sc.load_rtt}


@click.command("margins")
@click.argument("target", metavar="MODEL|SCENARIO")
@click.option("--set", "sets", multiple=True, metavar="NAME=VALUE", help="Model parameter, e.g. alpha_per_s=1.")
@click.option("--flows", "n_flows", type=click.IntRange(min=1), default=None,
              help="Number of flows N (default: the scenario's).")
@click.option("--rtt-s", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Round-trip (feedback) delay in seconds (default: the scenario's largest RTT).")
@click.option("--capacity-pps", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Bottleneck capacity in packets/s (default: the scenario's).")
@click.option("--figures", "fig_dir", type=click.Path(file_okay=False), default=None,
              help="Write Bode and Nyquist plots (delay exact) to this directory.")
@click.option("--format", "formats", default="png,pdf", show_default=True,
              help="Figure formats, comma-separated (png, pdf, svg).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON (non-finite numbers as null).")
def margins(target, sets, n_flows, rtt_s, capacity_pps, fig_dir, formats, as_json):
    """Gain/phase/delay margins and certified characteristic roots of a linearized loop.

    MODEL|SCENARIO is a model name (aecp, cltcp, petcp, symbiosis, reno: the setting of its paper's
    scenario, e.g. petcp -> petcp-dumbbell, 5 flows, 100 Mbps, 50 ms) or a scenario (shipped name or TOML
    file) with one bottleneck.  N synchronous flows; --flows, --rtt-s, --capacity-pps override.
    """
    from .stability import analyze, bode_plot, nyquist_plot
    try:
        st = linear_setting(target)
    except InputError as e:
        raise click.UsageError(str(e)) from None
    key = st["model"]
    params = {**st["params"], **_parse_sets(key, sets)}
    for k, v in (("n_flows", n_flows), ("rtt_s", rtt_s), ("capacity_pps", capacity_pps)):
        if v is not None:
            st[k] = v
            st["notes"] = [n for n in st["notes"] if not ((k == "rtt_s" and "RTTs differ" in n)
                                                          or (k == "n_flows" and "taken as active" in n))]
    fmts = [f.strip().lower() for f in formats.split(",") if f.strip()]
    if not fmts or any(f not in ("png", "pdf", "svg") for f in fmts):
        raise click.BadParameter(f"{formats!r} is not allowed: comma-separated png, pdf, svg", param_hint="--format")
    try:
        a = analyze(key, n_flows=st["n_flows"], rtt_s=st["rtt_s"], capacity_pps=st["capacity_pps"], **params)
    except InputError as e:
        raise click.UsageError(str(e)) from None
    d = a.as_dict()
    mbps = st["capacity_pps"] * st["packet_bytes"] * 8 / 1e6
    d["setting"] = {"scenario": st["scenario"], "source": st["source"], "n_flows": st["n_flows"],
                    "capacity_pps": st["capacity_pps"], "capacity_mbps": mbps, "packet_bytes": st["packet_bytes"],
                    "rtt_s": st["rtt_s"], "notes": st["notes"]}
    if key == "reno":
        from .stability.reno_loop import reno_equilibrium
        d["reno_equilibrium"] = reno_equilibrium(st["n_flows"], st["capacity_pps"], st["rtt_s"], None,
                                                 **{k: v for k, v in params.items()})
    files = []
    if fig_dir:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        out = Path(fig_dir)
        out.mkdir(parents=True, exist_ok=True)
        where = (f"{st['scenario']}: {key}, N = {st['n_flows']}, C = {st['capacity_pps']:g} packets/s "
                 f"({mbps:g} Mbps at {st['packet_bytes']} B), RTT {st['rtt_s']:g} s")
        for kind, fn in (("bode", bode_plot), ("nyquist", nyquist_plot)):
            r = fn(a, title=f"{kind.capitalize()} plot (delay exact), {where}")
            for f in fmts:
                path = out / f"margins_{key}_{kind}.{f}"
                r["figure"].savefig(path, dpi=120)
                files.append(str(path))
            plt.close(r["figure"])
        d["files"] = files
    raw = d
    d = _clean(d)
    if as_json:
        click.echo(json.dumps(d, indent=2))
        return
    stp = d["setting"]
    click.echo(f"{stp['scenario']} ({key}): N = {stp['n_flows']}, C = {stp['capacity_pps']:g} packets/s "
               f"({mbps:g} Mbps at {stp['packet_bytes']} B), RTT {stp['rtt_s']:g} s")
    click.echo(f"  L(s) = {a.loop}   (loop delay e^(-s tau), tau = {stp['rtt_s']:g} s)")
    for k in ("phase_margin_deg", "phase_margin_unwrapped_deg", "gain_margin", "crossover_rad_s", "delay_margin_s",
              "critical_delay_s", "stable", "rightmost_root_per_s", "root_status", "status"):
        click.echo(f"  {k:26s} {raw[k]}")   # text: inf printed as inf (JSON: null)
    for msg in list(st["notes"]) + list(a.messages):
        click.echo(f"  note: {msg}")
    if files:
        click.echo("  wrote " + ", ".join(files))


@click.command("stability-map")
@click.argument("model", metavar="MODEL|SCENARIO")
@click.option("--axis", "axes", multiple=True, metavar="NAME=VALUES",
              help="An axis, given twice (x first, then y): NAME=v1,v2,... or NAME=start:stop:count.  "
                   "Default: --axis alpha_per_s=0.5,1,2,3,4 --axis rtt_s=0.05,0.2,0.4,0.6,0.8,1.0")
@click.option("--x", "x_name", default=None, hidden=True, help="Deprecated: use --axis.")
@click.option("--x-values", default=None, hidden=True, help="Deprecated: use --axis.")
@click.option("--y", "y_name", default=None, hidden=True, help="Deprecated: use --axis.")
@click.option("--y-values", default=None, hidden=True, help="Deprecated: use --axis.")
@click.option("--set", "sets", multiple=True, metavar="NAME=VALUE", help="Other model parameters.")
@click.option("--flows", "n_flows", type=click.IntRange(min=1), default=None,
              help="Number of flows N (default: the paper's scenario's).")
@click.option("--rtt-s", type=click.FloatRange(min=0, min_open=True), default=None,
              help="RTT (s) where it is not an axis (default: the scenario's largest).")
@click.option("--capacity-pps", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Capacity (packets/s) where it is not an axis (default: the scenario's).")
@click.option("--simulate", "sim_points", multiple=True, metavar="X,Y",
              help="Simulate the nonlinear model at X,Y: settled / decaying, not settled / growing or limit cycle.")
@click.option("--sim-t-end-s", type=click.FloatRange(min=0, min_open=True), default=60.0, show_default=True)
@click.option("--out", "out_dir", type=click.Path(file_okay=False), required=True, help="Output directory.")
@click.option("--quiet", is_flag=True, help="No progress bar.")
def stability_map(model, axes, x_name, x_values, y_name, y_values, sets, n_flows, rtt_s, capacity_pps, sim_points,
                  sim_t_end_s, out_dir, quiet):
    """Linear stability map over a parameter plane (exact-delay margins, certified roots): PNG, PDF and NetCDF
    in --out.  MODEL|SCENARIO as for `ecocc margins`: a model name takes its paper's setting."""
    from .models import get_model
    from .stability import plot_stability_map
    from .stability import stability_map as smap
    try:
        st = linear_setting(model)
    except InputError as e:
        raise click.UsageError(str(e)) from None
    key = st["model"]
    params = {**st["params"], **_parse_sets(key, sets)}
    from .sweeps import plane_axes
    old_x = None if x_name is None and x_values is None else f"{x_name or 'alpha_per_s'}={x_values or '0.5,1,2,3,4'}"
    old_y = None if y_name is None and y_values is None else f"{y_name or 'rtt_s'}={y_values or '0.05,0.2,0.4,0.6,0.8,1.0'}"
    (x_name, xs, xo), (y_name, ys, yo), note = plane_axes(
        axes, old_x, old_y, default=("alpha_per_s=0.5,1,2,3,4", "rtt_s=0.05,0.2,0.4,0.6,0.8,1.0"),
        old_form="--x/--x-values/--y/--y-values")
    if note:
        click.echo(f"note: {note}", err=True)
    if rtt_s is not None or "rtt_s" in (x_name, y_name):
        st["notes"] = [n for n in st["notes"] if "RTTs differ" not in n]
    if n_flows is not None or "n_flows" in (x_name, y_name):
        st["notes"] = [n for n in st["notes"] if "taken as active" not in n]
    n_flows = st["n_flows"] if n_flows is None else n_flows
    rtt_s = st["rtt_s"] if rtt_s is None else rtt_s
    capacity_pps = st["capacity_pps"] if capacity_pps is None else capacity_pps
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
                  simulate_points=pts, sim_t_end_s=sim_t_end_s, progress=not quiet, past=st["past"],
                  load_rtt=st["load_rtt"], **params)
    except InputError as e:
        raise click.UsageError(str(e)) from None
    from .store import OutputLock, atomic_path
    ds.attrs["setting"] = f"{st['scenario']}: " + "; ".join(st["notes"] or ["as in the scenario"])
    with OutputLock(out_dir) as lock:
        nc = lock.out / f"stability_map_{key}.nc"; png = lock.out / f"stability_map_{key}.png"
        pdf = png.with_suffix(".pdf")
        with atomic_path(nc) as tmp:
            ds.to_netcdf(tmp)
        fig = plot_stability_map(ds).figure
        with atomic_path(png) as tmp:
            fig.savefig(tmp, dpi=120, bbox_inches="tight")
        with atomic_path(pdf) as tmp:
            fig.savefig(tmp, bbox_inches="tight")
    stable = ds["stable"].values
    click.echo(f"{key} ({st['scenario']}: N = {n_flows}, C = {capacity_pps:g} packets/s, RTT {rtt_s:g} s where not "
               f"an axis): {int(stable.sum())} of {stable.size} points stable (exact-delay margins), roots certified "
               f"at {int(ds['roots_certified'].values.sum())}, verdicts consistent at {int(ds['consistent'].values.sum())}")
    if ds.sizes.get("sample", 0):
        reg = ds["sim_regime"].values.astype(str)
        for xv, yv, r, pr in zip(ds["sample_x"].values, ds["sample_y"].values, reg, ds["predicted_stable"].values):
            click.echo(f"  simulated at ({xv:g}, {yv:g}): {r.replace('_', ' ')}; linear: "
                       f"{'stable' if pr else 'unstable'}")
    click.echo(f"wrote {png}, {pdf} and {nc}")


#: simulate_map argument -> sim-map option, for error messages
_MAP_OPTIONS = {"x_name": "--x", "y_name": "--y", "t_end_s": "--t-end-s", "window_s": "--window-s",
                "decay_ratio": "--decay-ratio", "past": "--past", "load_rtt": "--load-rtt",
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
              help="Directory for sim_map.nc, sim_map.json, sim_map.png and sim_map.pdf; under readings other "
                   "than the defaults the names say which (sim_map_past-steady.nc, sim_map_load_rtt-sent.nc, "
                   "sim_map_past-steady_load_rtt-sent.nc, ...), so maps of one scenario under different readings "
                   "share a --out without replacing each other.")
@click.option("--set", "sets", multiple=True, metavar="NAME=VALUE", help="Override a model parameter (every point).")
@click.option("--t-end-s", type=float, default=None,
              help="Simulated time per point (s; default: the scenario's duration).")
@click.option("--window-s", type=float, default=None,
              help="Final window over which the queue swing is measured (s; default: the scenario's summary window "
                   "when --t-end-s is at least twice as long, so that the window before it exists for the decay "
                   "test, else a tenth of --t-end-s).")
@click.option("--threshold-pkts", type=float, default=1.0, show_default=True,
              help="Settled: every link's queue swings (peak to peak) less than this over the window (packets).")
@click.option("--decay-ratio", type=float, default=0.99, show_default=True,
              help="Decaying (not settled): the largest swing over the last window is below this factor times the "
                   "one over the window before.  Otherwise: growing or limit cycle.")
@click.option("--engine", type=click.Choice(["auto", "numba", "numpy"]), default=None,
              help="numba: compiled lock-step kernel generated from the model's laws, points in parallel (any "
                   "numeric parameter or rtt_scale as axis); numpy: one reference run per point (any model, slow).  "
                   "Default (auto): numba when it applies, else one compiled run per point.")
@click.option("--rtol", type=float, default=1e-7, show_default=True, help="Relative tolerance of the adaptive solver.")
@click.option("--steps-within-delay", is_flag=True,
              help="numba engine: never step past the smallest delay (the NumPy solver's method; slower at small "
                   "RTTs).  Default: longer steps, delayed values inside a step corrected iteratively.")
@reading_options("In sim-map sent runs one simulation per point, not the lock-step kernel, where it changes "
                 "the equations (a delayed load that reads the queueing delay, e.g. Reno); elsewhere "
                 "(AECP, CLTCP, PE-TCP, Symbiosis with available=paper) the readings coincide and the "
                 "lock-step kernel runs it.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@click.option("--quiet", is_flag=True, help="No progress bar.")
@click.option("--no-figure", is_flag=True, help="Skip the PNG figure.")
@click.option("--save-every-s", type=click.FloatRange(min=0), default=10.0, show_default=True,
              help="Write the finished points to the map's NetCDF file at most this often (wall-clock seconds) "
                   "while the map runs, so a killed run loses at most that much work.")
def sim_map(scenario, axes, x_axis, y_axis, out_dir, sets, t_end_s, window_s, threshold_pkts, decay_ratio, engine,
            rtol, steps_within_delay, load_rtt, past, as_json, quiet, no_figure, save_every_s):
    """Stability map of SCENARIO by simulating every grid point (a TOML file or a shipped name; default:
    aecp-parking-lot, whose flows all stay for the whole run; in aecp-dumbbell flows join and leave, so its
    queue never settles by this rule): NetCDF, JSON summary and PNG in --out.

    A point has settled when its run succeeded and every link's queue swings by less than --threshold-pkts over
    the last --window-s seconds of --t-end-s; otherwise it is decaying (not settled) when that swing is below
    --decay-ratio times the swing over the window before, else growing or in a limit cycle.  Interrupted with Ctrl-C, the finished points are written; the same
    command again runs only the missing ones.

    Files: sim_map.nc, sim_map.json, sim_map.png, sim_map.pdf under the default readings (--past silent,
    --load-rtt current); otherwise the stem names the readings that differ from those, e.g.
    sim_map_past-steady.nc or sim_map_past-steady_load_rtt-sent.nc, so a map under another reading in the same
    --out is a second set of files, never a replacement of the first (each set resumes on its own).
    """
    import numpy as np

    from . import scenarios
    from .batch import simulate_map
    from .cli import parse_assignment
    from .errors import check_finite
    from .models import get_model

    sc = scenarios.load(scenario or SIM_MAP_DEFAULT)
    from .cli_readings import refuse_rtt
    refuse_rtt(sc, "sim-map (the lock-step map kernel)")
    if sc.protocols or len({f.protocol for f in sc.network.flows}) > 1:  # the map runs one model
        raise InputError("scenario", sc.name, "a scenario of one protocol without a [protocols] table (the map "
                         "runs one model; mixed protocols: ecocc sweep)")
    t_end_s = sc.duration_s if t_end_s is None else t_end_s
    if window_s is None:
        # the decay test compares the last window with the one before it: a window longer than half the run (a
        # scenario's 50 s summary window with --t-end-s 60) left most points "not classified"
        window_s = sc.summary_window_s if sc.summary_window_s and 2 * sc.summary_window_s <= t_end_s else 0.1 * t_end_s
    params = dict(sc.params)
    params.update(dict(parse_assignment(s) for s in sets))
    from .sweeps import plane_axes
    (x_name, x_values, x_opt), (y_name, y_values, y_opt), note = plane_axes(
        axes, x_axis, y_axis, default=("alpha_per_s=0.5:6:20", "rtt_scale=0.25:4:20"))
    if note:
        click.echo(f"note: {note}", err=True)
    rtol = check_finite("--rtol", rtol, positive=True)
    load_rtt, past = resolve_readings(sc, load_rtt, past)  # the scenario's unless the command line says otherwise
    model = get_model(sc.model)
    if engine in (None, "auto"):
        engine = "auto"  # simulate_map: the lock-step kernel where it applies, else a compiled run per point
        from .batch import lanes_gap
        why = lanes_gap(model, sc.network, load_rtt=load_rtt, params=params)
        if not quiet and why is not None:
            click.echo(f"note: one run per point, not the lock-step kernel ({why})", err=True)
    from .store import OutputLock, atomic_path, atomic_write_text, load_dataset, run_key, save_dataset
    lock = OutputLock(out_dir).__enter__()  # one process per --out; released when the command ends
    click.get_current_context().call_on_close(lambda: lock.__exit__(None, None, None))
    out = lock.out
    kw = dict(t_end_s=t_end_s, window_s=window_s, swing_threshold_pkts=threshold_pkts, decay_ratio=decay_ratio,
              engine=engine, rtol=rtol, past=past, load_rtt=load_rtt,
              progress=not quiet, overlap=not steps_within_delay, **params)
    # an earlier run of the same command (same scenario contents, grid, settings, code): keep its finished points
    key, _ = run_key(kind="sim-map", scenario_digest=sc.digest, x=[x_name, x_values], y=[y_name, y_values],
                     **{k: v for k, v in kw.items() if k != "progress"})
    from .cli_readings import readings_stem
    stem = readings_stem("sim_map", load_rtt, past)  # the readings in the names: no map replaces another's files
    previous, note = load_dataset(out / f"{stem}.nc", key)
    if note:  # --quiet only hides the progress bar
        click.echo(f"note: {note}", err=True)
    kw["on_partial"] = lambda part: save_dataset(out / f"{stem}.nc", part, key)  # finished points as they come
    kw["partial_every_s"] = save_every_s
    try:
        try:
            ds = simulate_map(sc.network, sc.model, x_name, x_values, y_name, y_values, previous=previous, **kw)
        except InputError as e:
            if e.field != "previous":
                raise
            if not quiet:
                click.echo(f"note: {out / (stem + '.nc')} holds a map of other settings; computing every point",
                           err=True)
            ds = simulate_map(sc.network, sc.model, x_name, x_values, y_name, y_values, **kw)
    except InputError as e:
        raise _as_option(e, x_name, y_name, x_opt, y_opt) from None

    files = {"netcdf": f"{stem}.nc", "summary": f"{stem}.json", "figure": None if no_figure else f"{stem}.png",
             "figure_pdf": None if no_figure else f"{stem}.pdf"}
    save_dataset(out / files["netcdf"], ds, key)  # atomic; simulate_map returns a NetCDF-ready dataset
    status = ds["status"].values.astype(str)
    regime = ds["regime"].values
    ok = status == "success"
    counts = {"points": int(status.size), "settled": int((ok & (regime == 0)).sum()),
              "decaying_not_settled": int((ok & (regime == 1)).sum()),
              "growing_or_limit_cycle": int((ok & (regime == 2)).sum()),
              "queue_at_bound_rates_changing": int((ok & (regime == 3)).sum()),
              "not_classified": int((ok & (regime == -1)).sum()),
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
        "verdict": a["verdict"], "regime_rule": a["regime_rule"], "decay_ratio": float(a["decay_ratio"]),
        "swing_threshold_pkts": float(a["swing_threshold_pkts"]),
        "engine": a["engine"], "solver": a["solver"], "rtol": float(a["rtol"]), "t_end_s": float(a["t_end_s"]),
        "window_s": float(a["window_s"]), "sample_dt_s": float(a["sample_dt_s"]), "base_params": params,
        "past": a["past"], "load_rtt": a["load_rtt"],
        "wall_s": float(a["wall_s"]), "out_dir": str(out), "files": files})
    atomic_write_text(out / files["summary"], json.dumps(summary, indent=2, default=str))
    if not no_figure:
        import matplotlib
        matplotlib.use("Agg")
        from .plotting import plot_simulated_map
        fig = plot_simulated_map(ds).figure
        with atomic_path(out / files["figure"]) as tmp:  # tight: the legend below the axes is not clipped
            fig.savefig(tmp, dpi=120, bbox_inches="tight")
        with atomic_path(out / files["figure_pdf"]) as tmp:
            fig.savefig(tmp, bbox_inches="tight")
    if as_json:
        click.echo(json.dumps(summary, indent=2, default=str))
    else:
        c = counts
        click.echo(f"{a['scenario']} ({a['model']}): {ds.sizes['y']} x {ds.sizes['x']} points "
                   f"({y_name} x {x_name}), engine {a['engine']}, {a['wall_s']:.1f} s: {c['settled']} settled, "
                   f"{c['decaying_not_settled']} decaying but not settled, {c['growing_or_limit_cycle']} growing or "
                   f"limit cycle, {c['queue_at_bound_rates_changing']} with a queue at a bound and the rates still changing, "
                   f"{c['not_classified']} not classified, {c['failed']} failed, "
                   f"{c['interrupted']} interrupted")
        click.echo(f"  {a['verdict']}")
        click.echo(f"  {a['regime_rule']}")
        click.echo(f"  past {a['past']}, load_rtt {a['load_rtt']} (the readings every point ran with)")
        click.echo("  wrote " + ", ".join(str(out / f) for f in files.values() if f))
    if counts["interrupted"]:
        click.echo("interrupted: the points not reached are marked 'interrupted'", err=True)
        sys.exit(130)

