"""``ecocc reproduce NAME|all``: the papers' experiments run and compared."""
from __future__ import annotations

import json
import sys

import click


@click.command("reproduce")
@click.argument("name")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default="figures", show_default=True,
              help="Directory for the figures (PNG and PDF, one per scenario).")
@click.option("--workers", type=click.IntRange(1), default=1, show_default=True, help="Local worker processes.")
@click.option("--scheduler", default=None, help="dask.distributed scheduler address (runs go to the cluster).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON records (scenario, quantity, paper, ecocc, agrees, why).")
@click.option("--no-figures", is_flag=True, help="Do not write figures.")
@click.option("--list", "list_only", is_flag=True, help="List the reproducible scenarios and exit (NAME ignored).")
@click.option("--quiet", is_flag=True, help="No progress bar.")
@click.option("--level", type=click.Choice(["fluid", "packet", "both"]), default="fluid", show_default=True,
              help="fluid: the fluid models; packet: the same tasks in ns-3 (ecocc.packet; figures and stored runs "
                   "in OUT/packet, resumable); both: paper | fluid | packet side by side.")
@click.option("--max-packets", type=click.FloatRange(0), default=2e6, show_default=True,
              help="Packet level: skip (and list) runs larger than this many data packets (duration x sum of link "
                   "capacities; about 7e-5 s of ns-3 CPU each); 0: no budget.")
def reproduce_cmd(name, out_dir, workers, scheduler, as_json, no_figures, list_only, quiet, level, max_packets):
    """Run the scenarios of a paper figure/table (NAME, e.g. cltcp-fig10) or ``all``; print what the
    paper reports beside what ecocc measures, and write figures to OUT (packet level: OUT/packet)."""
    from .reproduce import format_table, reproduce, reproducible
    if list_only:
        for n in reproducible():
            click.echo(n)
        return
    if level != "fluid":
        return _reproduce_levels(name, out_dir, workers, scheduler, as_json, no_figures, quiet, level, max_packets)
    records, results, timing = reproduce(name, out_dir, workers=workers, scheduler=scheduler,
                                         progress=not quiet and not as_json, figures=not no_figures)
    failed = [k for k, v in results.items() if v.get("status") != "success"]
    if as_json:
        click.echo(json.dumps({"records": [r.as_dict() for r in records], "wall_s": timing["wall_s"],
                               "n_runs": timing["n_runs"], "not_successful": failed,
                               "figures": timing["figures"], "run_wall_s": timing["run_wall_s"],
                               "cpu_s": timing["cpu_s"], "run_cpu_s": timing["run_cpu_s"]}, indent=1))
    else:
        click.echo(format_table(records))
        n_yes = sum(r.agrees is True for r in records)
        n_no = sum(r.agrees is False for r in records)
        n_na = sum(r.agrees is None for r in records)
        click.echo(f"\n{len(records)} rows: {n_yes} agree, {n_no} disagree, {n_na} not comparable "
                   f"(claims without a number, or runs missing); {timing['n_runs']} runs in {timing['wall_s']:.0f} s "
                   f"(simulation CPU time {timing['cpu_s']:.0f} s)"
                   + (f"; not successful: {', '.join(failed)}" if failed else ""))
        if timing["figures"]:
            click.echo(f"figures: {len(timing['figures'])} files in {out_dir}/")
    if failed:
        sys.exit(1)


def _reproduce_levels(name, out_dir, workers, scheduler, as_json, no_figures, quiet, level, max_packets):
    """``--level packet|both``: packet runs (and fluid runs), paper | fluid | packet side by side."""
    from .packet.reproduce import figure_dir, format_side_by_side, reproduce_packet, side_by_side
    from .reproduce import reproduce
    fl_rec = fl_res = fl_t = None
    if level == "both":
        fl_rec, fl_res, fl_t = reproduce(name, out_dir, workers=workers, scheduler=scheduler,
                                         progress=not quiet and not as_json, figures=not no_figures)
    pk_rec, pk_res, pk_t = reproduce_packet(name, figure_dir(out_dir), workers=workers, scheduler=scheduler,
                                            progress=not quiet and not as_json, figures=not no_figures,
                                            max_packets=max_packets or None)
    rows = side_by_side(fl_rec, pk_rec)
    skipped = [(k, v["message"]) for k, v in pk_res.items() if v["status"] == "skipped"]
    failed = [k for k, v in (fl_res or {}).items() if v.get("status") != "success"]
    failed += [f"{k} (ns-3)" for k, v in pk_res.items() if v["status"] not in ("success", "skipped")]
    if as_json:
        click.echo(json.dumps({
            "level": level, "records": [r.as_dict() for r in rows], "packet_skipped": dict(skipped),
            "not_successful": failed, "packet_wall_s": pk_t["wall_s"], "packet_runs": pk_t["n_runs"],
            "packet_reused": pk_t["n_reused"], "packet_run_wall_s": pk_t["run_wall_s"],
            "fluid_wall_s": fl_t["wall_s"] if fl_t else None,
            "figures": (fl_t["figures"] if fl_t else []) + pk_t["figures"]}, indent=1))
    else:
        click.echo(format_side_by_side(rows, skipped))
        n_pk = sum(v["status"] != "skipped" for v in pk_res.values())
        click.echo(f"\n{len(rows)} rows; packet level: {sum(r.packet_agrees is True for r in rows)} agree, "
                   f"{sum(r.packet_agrees is False for r in rows)} disagree; {n_pk} ns-3 runs ({pk_t['n_runs']} run now "
                   f"in {pk_t['wall_s']:.0f} s, {pk_t['n_reused']} reused from {figure_dir(out_dir)}/runs), "
                   f"{len(skipped)} not runnable at packet level" + (" (listed above)" if skipped else "")
                   + (f"; fluid: {len(fl_res)} runs in {fl_t['wall_s']:.0f} s" if fl_t else "")
                   + (f"; not successful: {', '.join(failed)}" if failed else ""))
        figs = (fl_t["figures"] if fl_t else []) + pk_t["figures"]
        if figs:
            click.echo(f"figures: {len(figs)} files in {out_dir}/" + (" and " if fl_t else "") +
                       f"{figure_dir(out_dir)}/")
    if failed:
        sys.exit(1)
