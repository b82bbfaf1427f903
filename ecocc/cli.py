"""Command line: a thin layer over the same API the notebooks use.

User mistakes (bad scenario file, unknown model or parameter, bad value)
are reported as one line naming the field, the value and what is allowed,
with exit status 2, never as a traceback.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from .cli_readings import check_readings, reading_options, resolve_readings, resolve_rtt, rtt_option
from .errors import EcoccError, InputError, check, check_finite


def parse_assignment(text: str):
    """Parse ``NAME=VALUE``.

    Parameters
    ----------
    text : str
        One ``NAME=VALUE`` assignment as typed on the command line.

    Returns
    -------
    name : str
        The text before the first ``=``, stripped.
    value : bool, int, float or str
        Read as the first of these that fits.
    """
    if "=" not in text:
        raise click.BadParameter(f"{text!r} is not NAME=VALUE", param_hint="--set")
    name, raw = text.split("=", 1)
    name, raw = name.strip(), raw.strip()
    low = raw.lower()
    if low in ("true", "false"):
        return name, low == "true"
    for conv in (int, float):
        try:
            return name, conv(raw)
        except ValueError:
            pass
    return name, raw


def parse_sets(sets, option: str = "--set") -> dict:
    """Parse ``--set NAME=VALUE`` options.

    Parameters
    ----------
    sets : sequence of str
        The ``NAME=VALUE`` texts, one per option given.
    option : str
        The option named in error messages.

    Returns
    -------
    dict
        ``name -> value``; a name given twice is refused (the last would win silently).
    """
    out = {}
    for text in sets:
        name, value = parse_assignment(text)
        if not name:
            raise InputError(option, text, "NAME=VALUE with a parameter name")
        if name in out:
            raise InputError(f"{option} {name}", text, "each parameter once")
        out[name] = value
    return out


class _Group(click.Group):
    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except (EcoccError, ValueError) as exc:
            click.echo(f"Error: {exc}", err=True)
            ctx.exit(2)
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            ctx.exit(130)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="ecocc")
def main():
    """ecocc: fluid models of congestion control from population ecology."""


@main.command("scenarios")
def list_scenarios():
    """List the scenarios shipped with ecocc."""
    from . import scenarios
    for name in scenarios.shipped():
        sc = scenarios.load(name)
        click.echo(f"{name:20s} {sc.model:10s} {sc.description}")


FIGURE_FORMATS = ("png", "pdf", "svg")


def _figure_formats(text):
    """``"png,pdf"`` -> ``["png", "pdf"]`` (each one of FIGURE_FORMATS, at least one)."""
    from .errors import InputError
    fmts = [f.strip().lower().lstrip(".") for f in str(text).split(",") if f.strip()]
    bad = [f for f in fmts if f not in FIGURE_FORMATS]
    if not fmts or bad:
        raise InputError("--format", text, f"a comma-separated list of {', '.join(FIGURE_FORMATS)}")
    return list(dict.fromkeys(fmts))


@main.command("simulate")
@click.argument("scenario", required=False, default=None)
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default="out", show_default=True,
              help="Directory for the NetCDF, CSV, PNG and summary JSON files.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary over the final window as JSON.")
@click.option("--set", "sets", multiple=True, metavar="NAME=VALUE", help="Override a model parameter.")
@click.option("--t-end-s", type=float, default=None, help="Simulated time in seconds (default: the scenario's).")
@click.option("--solver", type=click.Choice(["adaptive", "fixed"]), default="adaptive", show_default=True)
@click.option("--step-s", type=float, default=None, help="Step of the fixed-step solver (s).")
@click.option("--rtol", type=float, default=1e-7, show_default=True, help="Relative tolerance (adaptive).")
@click.option("--queue-atol-pkts", type=float, default=None, metavar="PACKETS",
              help="Absolute tolerance of the queues (adaptive; packets, > 0; default 1e-4, or rtol / the signal's "
                   "slope in the queue if smaller: PE-TCP rtol T C).  A law that reads the queue's level (RED) needs "
                   "less: Reno under RED meets 1e-6 relative at rtol 1e-7 with 1e-6.")
@click.option("--max-history-gib", type=str, default="2", show_default=True, metavar="GIB",
              help="Memory bound of the adaptive solver's stored past (GiB, > 0; inf for none): a run whose past "
                   "would need more (a step size that collapsed, as when the solution blows up) stops with "
                   "status failed and says why.")
@click.option("--engine", type=click.Choice(["auto", "numpy", "numba"]), default="auto", show_default=True,
              help="auto: the compiled engine where it applies (adaptive and fixed: every model the generated kernels serve), else "
                   "the NumPy solver.  numba: compiled or an error; numpy: the NumPy reference.  The compiled "
                   "kernel of a model is generated from its laws and compiled on its first use on a machine "
                   "(needs numba, the 'fast' extra), then cached.")
@reading_options()
@rtt_option
@click.option("--overlap", is_flag=True,
              help="Compiled adaptive solver: steps may exceed the smallest delay, delayed values inside a step "
                   "corrected iteratively (far fewer steps at RTTs of a few ms; no gain on large random "
                   "networks; docs/notes/overlap1.md).  Default: every step within the smallest delay.")
@click.option("--no-figure", is_flag=True, help="Skip the figure.")
@click.option("--format", "fig_formats", default="png,pdf", show_default=True, metavar="EXT[,EXT...]",
              help="Figure file formats, comma-separated (png, pdf, svg).")
@click.option("--no-checkpoint", is_flag=True,
              help="Do not save the solver state (by default the adaptive NumPy solver saves it in OUT every 30 s "
                   "and on Ctrl-C; running the same command again resumes).")
@click.option("--quiet", is_flag=True, help="No progress bar.")
def simulate_cmd(scenario, out_dir, as_json, sets, t_end_s, solver, step_s, rtol, queue_atol_pkts, max_history_gib,
                 engine, load_rtt, past, rtt_includes_queueing, overlap, no_figure, fig_formats, no_checkpoint, quiet):
    """Simulate SCENARIO (a TOML file or a shipped name; default: aecp-dumbbell)."""
    from . import scenarios
    from .simulate import simulate
    from .results import json_dumps
    from .store import OutputLock, atomic_path, atomic_write_text, run_key

    formats = _figure_formats(fig_formats)
    if scenario is not None and not scenario.strip():
        raise InputError("SCENARIO", scenario, "a .toml file or a shipped scenario name (omit it for "
                         f"{scenarios.DEFAULT})")
    sc = scenarios.load(scenario or scenarios.DEFAULT)
    load_rtt, past = resolve_readings(sc, load_rtt, past)
    rtt_includes_queueing = resolve_rtt(sc, rtt_includes_queueing, solver)
    params = dict(sc.params)
    params.update(parse_sets(sets))
    t_end = sc.duration_s if t_end_s is None else check_finite("--t-end-s", t_end_s, positive=True)
    rtol = check_finite("--rtol", rtol, positive=True)
    if queue_atol_pkts is not None:
        queue_atol_pkts = check_finite("--queue-atol-pkts", queue_atol_pkts, positive=True)
        if solver != "adaptive":
            raise InputError("--queue-atol-pkts", queue_atol_pkts, "only with --solver adaptive (a fixed-step run "
                             "has no error control)")
    from .dde.options import max_history_gib as _check_history
    try:
        max_history_gib = _check_history(float(max_history_gib), "--max-history-gib")
    except (ValueError, InputError):
        raise InputError("--max-history-gib", max_history_gib, "a number of GiB > 0 (inf for no bound)") from None
    if step_s is not None:
        step_s = check_finite("--step-s", step_s, positive=True)
    stem_name = sc.file_stem  # the name made safe as a file name: nothing is written outside --out
    with OutputLock(out_dir) as lock:
        out = lock.out
        ckpt = None
        # the checkpoint is the adaptive NumPy solver's: simulate() writes it where the run is on that solver
        # (--engine numpy, or auto falling back to it: a mixed network the composite kernels do not serve, no
        # numba); decided here from the engine asked for, since only simulate() knows the system's kernel
        if solver == "adaptive" and engine != "numba" and not no_checkpoint:
            key, _ = run_key(kind="simulate-checkpoint", scenario_digest=sc.digest, params=params, t_end_s=t_end,
                             rtol=rtol, solver=solver, engine="numpy", output_dt_s=sc.output_dt_s,
                             **({} if queue_atol_pkts is None else {"queue_atol_pkts": queue_atol_pkts}),
                             **({} if load_rtt == "current" else {"load_rtt": load_rtt}),
                             **({} if past == "silent" else {"past": past}),
                             **({"rtt_includes_queueing": True} if rtt_includes_queueing else {}))
            ckpt = out / f".{stem_name}-{key[:12]}.ckpt.npz"
            if ckpt.exists() and not quiet:
                click.echo(f"found {ckpt}: the NumPy solver resumes from it (a run on the compiled engine "
                           "starts over)", err=True)
        tr = simulate(sc.network, sc.model, t_end_s=t_end, output_dt_s=sc.output_dt_s,
                      summary_window_s=min(sc.summary_window_s or 0.1 * t_end, t_end), name=sc.name,
                      solver=solver, step_s=step_s, rtol=rtol, queue_atol_pkts=queue_atol_pkts, engine=engine,
                      progress=not quiet, checkpoint=ckpt,
                      keep_checkpoint=True, protocols=sc.protocols or None, max_history_gib=max_history_gib,
                      load_rtt=load_rtt, past=past, overlap=overlap, rtt_includes_queueing=rtt_includes_queueing,
                      **params)
        stem = out / stem_name
        files = [f"{stem}.nc", f"{stem}_flows.csv", f"{stem}_links.csv", f"{stem}_summary.json"]
        with atomic_path(files[0]) as tmp:
            tr.to_netcdf(tmp)
        with atomic_path(files[1]) as tmp1, atomic_path(files[2]) as tmp2:
            tr.to_csv(tmp1, tmp2)
        summary = tr.summary()
        summary["scenario_source"] = sc.source
        summary["scenario_notes"] = sc.notes
        summary["scenario_digest"] = sc.digest
        atomic_write_text(files[3], json_dumps(summary, indent=2))
        if not no_figure:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
            fig = tr.plot().figure
            for ext in formats:
                with atomic_path(f"{stem}.{ext}") as tmp:
                    fig.savefig(tmp, dpi=110, format=ext)  # the temporary name has no extension to go by
                files.append(f"{stem}.{ext}")
            plt.close(fig)
        if ckpt is not None and tr.status.value in ("success", "inaccurate"):
            ckpt.unlink(missing_ok=True)  # only now that every output exists
    if as_json:
        click.echo(json_dumps(summary, indent=2))
    else:
        click.echo(f"{sc.name}: status {tr.status.value} ({tr.message}); wrote " + ", ".join(files))
        w0, w1 = summary["window_s"]
        for f in summary["flows"]:
            if not f.get("active_in_window", True):
                click.echo(f"  flow {f['name']:>8s}: not active in {w0:g}-{w1:g} s (left or not started)")
                continue
            click.echo(f"  flow {f['name']:>8s}: mean rate {f['mean_rate_mbps']:10.4f} Mbps "
                       f"({f['mean_rate_pps']:.2f} pkt/s) over {w0:g}-{w1:g} s")
        for lk in summary["links"]:
            click.echo(f"  link {lk['name']:>8s}: mean queue {lk['mean_queue_pkts']:.3f} pkt, "
                       f"utilization {lk['utilization']:.6f}, lost {lk['lost_pkts']:.1f} pkt")
    if not tr.ok:
        sys.exit(3)


@main.command("sweep")
@click.argument("scenario")
@click.option("--axis", "axes", multiple=True, required=True, metavar="NAME=VALUES",
              help="A swept parameter: NAME=v1,v2,... or NAME=start:stop:count (one to three axes; "
                   "model parameters, rtt_scale or capacity_scale).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), required=True, help="Output directory.")
@click.option("--t-end-s", type=float, default=None, help="Simulated time per point (default: the scenario's).")
@click.option("--workers", type=click.IntRange(1), default=1, show_default=True, help="Local worker processes.")
@click.option("--scheduler", default=None, help="dask.distributed scheduler address (optional).")
@click.option("--engine", type=click.Choice(["auto", "numpy", "numba", "ns3"]), default="auto", show_default=True,
              help="Solver engine of every point (auto: compiled where it applies, else NumPy; ns3: packet level, "
                   "the packet extra).")
@click.option("--metric", "metrics", multiple=True, default=("queue_p2p_pkts", "utilization", "t_efficiency_s"),
              show_default=True, help="Metrics to plot.")
@reading_options()
@rtt_option
@click.option("--quiet", is_flag=True, help="No progress bar.")
def sweep_cmd(scenario, axes, out_dir, t_end_s, workers, scheduler, engine, metrics, load_rtt, past,
              rtt_includes_queueing, quiet):
    """Sweep SCENARIO over a parameter grid; resumable (finished points are kept in OUT/points)."""
    from .store import atomic_path
    from .sweeps import check_metrics, parse_axes, plot_sweep, run_sweep
    metrics = check_metrics(metrics)  # before anything runs
    parsed = parse_axes(axes)
    if t_end_s is not None:
        t_end_s = check_finite("--t-end-s", t_end_s, positive=True)
    load_rtt, past = check_readings(load_rtt, past)  # None where not given: the scenario's
    for opt, v in (("--load-rtt", load_rtt), ("--past", past),
                   ("--rtt-includes-queueing" if rtt_includes_queueing else "--constant-rtt", rtt_includes_queueing)):
        if v is not None and engine == "ns3":
            raise InputError(opt, v, "no value with --engine ns3 (a packet run has no fluid past or load reading, "
                                     "and its round trips always include the queues)")
    res = run_sweep(scenario, parsed, out_dir, t_end_s=t_end_s, workers=workers, scheduler=scheduler,
                    engine=engine, progress=not quiet, past=past, load_rtt=load_rtt,
                    rtt_includes_queueing=rtt_includes_queueing)
    import matplotlib
    matplotlib.use("Agg")
    written = [str(res.out_dir / "sweep.nc")]
    for m in metrics:
        fig = plot_sweep(res.dataset, m)
        path = res.out_dir / f"sweep_{m}.png"
        with atomic_path(path) as tmp:
            fig.savefig(tmp, dpi=110)
        written.append(str(path))
    state = ("interrupted: run the same command again to resume" if res.interrupted
             else "complete" if res.complete else "incomplete")
    click.echo(f"{res.n_points} points: {res.n_done_before} done before, {res.n_run} run now, "
               f"{res.n_failed} not successful; {state}. Wrote " + ", ".join(written))
    if res.interrupted:
        sys.exit(130)


from .cli_claims import claims_cmd  # noqa: E402  (ecocc.cli_claims)
main.add_command(claims_cmd)

from .cli_params import params_cmd  # noqa: E402
main.add_command(params_cmd)

try:  # stability commands (ecocc.cli_stability)
    from .cli_stability import margins, sim_map, stability_map  # noqa: E402
    main.add_command(margins)
    main.add_command(stability_map)
    main.add_command(sim_map)
except ImportError:  # pragma: no cover - while the module is being written
    pass

from .cli_packet import register as _register_packet  # noqa: E402  packet level: ecocc packet, ecocc compare
_register_packet(main)

try:  # reproduce command (ecocc.cli_reproduce)
    from .cli_reproduce import reproduce_cmd  # noqa: E402
    main.add_command(reproduce_cmd)
except ImportError:  # pragma: no cover
    pass


if __name__ == "__main__":
    main()
