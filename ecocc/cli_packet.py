"""Command line: ``ecocc packet`` (a scenario in ns-3) and ``ecocc compare`` (fluid vs packet)."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import click


def _common(f):
    opts = [
        click.option("--out", "out_dir", type=click.Path(file_okay=False), default="out", show_default=True,
                     help="Output directory."),
        click.option("--protocol", type=click.Choice(["aecp", "petcp", "symbiosis", "reno", "newreno", "highspeed",
                                                      "scalable", "bic", "cubic"]), default=None,
                     help="Packet-level protocol (default: the scenario model's; reno = ns-3 TcpNewReno)."),
        click.option("--t-end-s", type=float, default=None, help="Simulated time in seconds (default: the scenario's)."),
        click.option("--bin-s", type=float, default=0.1, show_default=True,
                     help="Bin width of the rates and queues (s)."),
        click.option("--capacity-scale", type=float, default=1.0, show_default=True,
                     help="Multiply every capacity and cross-traffic rate (packet runs cost time per packet)."),
        click.option("--seed", type=int, default=1, show_default=True, help="ns-3 random seed."),
        click.option("--set", "sets", multiple=True, metavar="NAME=VALUE", help="Override a model parameter."),
        click.option("--python", "python", default=None,
                     help="Interpreter that has the ns3 wheel (default: $ECOCC_NS3_PYTHON or this one)."),
        click.option("--symbiosis-tau", type=click.Choice(["measured", "propagation"]), default="measured",
                     show_default=True, help="TCP Symbiosis tau_i: the smallest RTT measured (002's definition) or "
                                             "the flow's propagation RTT."),
        click.option("--quiet", is_flag=True, help="No progress bar."),
    ]
    for o in reversed(opts):
        f = o(f)
    return f


def _overrides(sets):
    from .cli import parse_assignment  # not at import time: ecocc.cli imports this module
    return dict(parse_assignment(s) for s in sets)


def _require_ns3(python):
    from .packet import available
    ok, why = available(python)
    if not ok:
        click.echo(f"Error: {why}", err=True)
        sys.exit(2)


def _save_fig(fig, stem):
    fig.savefig(f"{stem}.png", dpi=110)
    fig.savefig(f"{stem}.pdf")
    return [f"{stem}.png", f"{stem}.pdf"]


def _atomic_write(path, text):
    tmp = Path(f"{path}.tmp{os.getpid()}")
    tmp.write_text(text)
    tmp.replace(path)


@click.command("packet")
@click.argument("scenario")
@_common
def packet_cmd(scenario, out_dir, protocol, t_end_s, bin_s, capacity_scale, seed, sets, python, symbiosis_tau, quiet):
    """Run SCENARIO (a TOML file or a shipped name) at packet level in ns-3.

    Writes OUT/<name>_packet.nc (xarray), OUT/<name>_packet_summary.json and a figure (PNG, PDF).
    """
    from . import scenarios
    from .packet import run_packet
    sc = scenarios.load(scenario)  # an unknown scenario is reported before a missing ns-3
    _require_ns3(python)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tr = run_packet(sc, protocol=protocol, t_end_s=t_end_s, bin_s=bin_s, seed=seed, capacity_scale=capacity_scale,
                    overrides=_overrides(sets), progress=not quiet, python=python, symbiosis_tau=symbiosis_tau)
    stem = out / f"{sc.name}_packet"
    tmp = Path(f"{stem}.nc.tmp{os.getpid()}")
    tr.to_netcdf(tmp)
    tmp.replace(f"{stem}.nc")
    summary = tr.summary()
    summary["scenario_source"] = sc.source
    summary["packet_bytes_note"] = f"{tr.packet_bytes:g}-byte packets at the IP layer"
    _atomic_write(f"{stem}_summary.json", json.dumps(summary, indent=2))
    import matplotlib
    matplotlib.use("Agg")
    files = [f"{stem}.nc", f"{stem}_summary.json"] + _save_fig(tr.plot(), stem)
    s = tr.solver
    click.echo(f"{sc.name} at packet level ({s['driver_protocol']}, {tr.packet_bytes:g}-byte packets): status "
               f"{tr.status.value} ({tr.message}); {s['t_reached_s']:g} s simulated in {s['wall_s']:.1f} s wall "
               f"(ns-3 import {s['import_s']:.1f} s, C++ compile {s['compile_s']:.1f} s, run {s['simulate_s']:.1f} s)")
    click.echo("wrote " + ", ".join(files))
    for f in summary["flows"]:
        click.echo(f"  flow {f['name']:>8s}: mean rate {f['mean_rate_mbps']:10.4f} Mbps ({f['mean_rate_pps']:.2f} pkt/s) "
                   f"over {summary['window_s'][0]:g}-{summary['window_s'][1]:g} s")
    for lk in summary["links"]:
        click.echo(f"  link {lk['name']:>8s}: mean queue {lk['mean_queue_pkts']:.3f} pkt, utilization "
                   f"{lk['utilization']:.6f}, lost {lk['lost_pkts']:.0f} pkt (loss ratio {lk['loss_ratio']:.3g})")
    if summary.get("jain_index") is not None:
        click.echo(f"  Jain's index of the flows active at the end: {summary['jain_index']:.4f}")
    if not tr.ok:
        sys.exit(3)


@click.command("compare")
@click.argument("scenario")
@_common
@click.option("--engine", type=click.Choice(["numpy", "numba"]), default="numpy", show_default=True,
              help="Engine of the fluid run.")
@click.option("--markdown", is_flag=True, help="Print the table as Markdown.")
def compare_cmd(scenario, out_dir, protocol, t_end_s, bin_s, capacity_scale, seed, sets, python, symbiosis_tau, quiet,
                engine, markdown):
    """Run SCENARIO with the fluid model and in ns-3 and print them side by side.

    Writes OUT/<name>_compare.json, OUT/<name>_compare.{png,pdf} and both runs as NetCDF.
    """
    from . import scenarios
    from .packet import compare
    sc = scenarios.load(scenario)  # an unknown scenario is reported before a missing ns-3
    _require_ns3(python)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    cmp = compare(sc, protocol=protocol, t_end_s=t_end_s, bin_s=bin_s, seed=seed, capacity_scale=capacity_scale,
                  overrides=_overrides(sets), progress=not quiet, python=python,
                  fluid_kwargs={"engine": engine}, symbiosis_tau=symbiosis_tau)
    stem = out / f"{sc.name}_compare"
    _atomic_write(f"{stem}.json", json.dumps(cmp.to_dict(), indent=2))
    for tr, tag in ((cmp.fluid, "fluid"), (cmp.packet, "packet")):
        tmp = Path(f"{out / sc.name}_{tag}.nc.tmp{os.getpid()}")
        tr.to_netcdf(tmp)
        tmp.replace(f"{out / sc.name}_{tag}.nc")
    import matplotlib
    matplotlib.use("Agg")
    files = [f"{stem}.json"] + _save_fig(cmp.plot(), stem)
    click.echo(f"{sc.name}: fluid model '{cmp.fluid.model}' (status {cmp.fluid.status.value}) vs ns-3 "
               f"'{cmp.packet.solver['driver_protocol']}' (status {cmp.packet.status.value}, "
               f"{cmp.packet.solver['wall_s']:.1f} s wall)")
    for n in cmp.notes:
        click.echo(f"  {n}")
    click.echo(cmp.format_markdown() if markdown else cmp.format_table())
    if cmp.paper_source:
        click.echo(f"paper: {cmp.paper_source} [{cmp.paper_where}]")
    click.echo("wrote " + ", ".join(files))
    if not (cmp.fluid.ok and cmp.packet.ok):
        sys.exit(3)


def register(main):
    """Add ``packet`` and ``compare`` to the ``ecocc`` command group.

    Parameters
    ----------
    main : click.Group
        The ``ecocc`` command group.
    """
    main.add_command(packet_cmd)
    main.add_command(compare_cmd)
