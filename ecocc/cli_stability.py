"""Click commands ``margins`` and ``stability-map`` (added to ``ecocc`` by cli.py)."""
from __future__ import annotations

import json
import math
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
        return None if math.isnan(v) else ("inf" if v > 0 else "-inf")
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
@click.option("--x", "x_name", default="alpha_per_s", show_default=True, help="Parameter on the x axis.")
@click.option("--x-values", default="0.5,1,2,3,4", show_default=True, help="Comma-separated x values.")
@click.option("--y", "y_name", default="rtt_s", show_default=True, help="Parameter on the y axis.")
@click.option("--y-values", default="0.05,0.2,0.4,0.6,0.8,1.0", show_default=True, help="Comma-separated y values.")
@click.option("--set", "sets", multiple=True, metavar="NAME=VALUE", help="Other model parameters.")
@click.option("--flows", "n_flows", type=click.IntRange(min=1), default=4, show_default=True)
@click.option("--rtt-s", type=click.FloatRange(min=0, min_open=True), default=0.1, show_default=True)
@click.option("--capacity-pps", type=click.FloatRange(min=0, min_open=True), default=1000.0, show_default=True)
@click.option("--simulate", "sim_points", multiple=True, metavar="X,Y", help="Simulate the nonlinear model at X,Y.")
@click.option("--sim-t-end-s", type=click.FloatRange(min=0, min_open=True), default=60.0, show_default=True)
@click.option("--out", "out_dir", type=click.Path(file_okay=False), required=True, help="Output directory.")
def stability_map(model, x_name, x_values, y_name, y_values, sets, n_flows, rtt_s, capacity_pps, sim_points,
                  sim_t_end_s, out_dir):
    """Stability map of MODEL over a parameter plane: PNG + NetCDF in --out."""
    from .models import get_model
    from .stability import plot_stability_map
    from .stability import stability_map as smap
    key = _model(model)
    params = _parse_sets(key, sets)
    allowed = get_model(key).Params.field_names() + ["rtt_s", "capacity_pps", "n_flows"]
    for hint, nm in (("--x", x_name), ("--y", y_name)):
        if nm not in allowed:
            raise click.BadParameter(f"{nm!r} is not allowed: one of {', '.join(allowed)}", param_hint=hint)

    def floats(text, hint):
        try:
            return [float(v) for v in text.split(",") if v.strip()]
        except ValueError:
            raise click.BadParameter(f"{text!r} is not allowed: comma-separated numbers", param_hint=hint) from None
    xs, ys = floats(x_values, "--x-values"), floats(y_values, "--y-values")
    pts = [tuple(floats(p, "--simulate")) for p in sim_points]
    if any(len(p) != 2 for p in pts):
        raise click.BadParameter(f"{sim_points!r} is not allowed: X,Y pairs", param_hint="--simulate")
    try:
        ds = smap(key, x_name, xs, y_name, ys, n_flows=n_flows, rtt_s=rtt_s, capacity_pps=capacity_pps,
                  simulate_points=pts, sim_t_end_s=sim_t_end_s, **params)
    except InputError as e:
        raise click.UsageError(str(e)) from None
    out = Path(out_dir); out.mkdir(parents=True, exist_ok=True)
    nc = out / f"stability_map_{key}.nc"; png = out / f"stability_map_{key}.png"
    ds.to_netcdf(nc)
    fig = plot_stability_map(ds)
    fig.savefig(png, dpi=120, bbox_inches="tight")
    click.echo(f"wrote {png} and {nc}")
