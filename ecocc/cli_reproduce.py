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
def reproduce_cmd(name, out_dir, workers, scheduler, as_json, no_figures, list_only, quiet):
    """Run the scenarios of a paper figure/table (NAME, e.g. cltcp-fig10) or ``all``; print what the
    paper reports beside what ecocc measures, and write figures to OUT."""
    from .reproduce import format_table, reproduce, reproducible
    if list_only:
        for n in reproducible():
            click.echo(n)
        return
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
