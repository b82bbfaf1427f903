"""``ecocc claims``: check the papers' claims and print, export or report the verdicts."""
from __future__ import annotations

import json
from pathlib import Path

import click


def _table(records) -> list[str]:
    lines = [f"{'id':24s} {'verdict':13s} statement"]
    for r in records:
        lines.append(f"{r.id:24s} {r.verdict:13s} {r.statement}")
    return lines


def write_report(records, out_dir: Path, figdir_name="figures") -> Path:
    """Write ``out_dir/claims.md`` (per-paper verdict counts, then each record with its evidence and figures) and ``out_dir/claims.json``.

    Parameters
    ----------
    records : list of ecocc.claims.base.Record
        The checked claims (:mod:`ecocc.claims`).
    out_dir : pathlib.Path
        Output directory (created if missing).
    figdir_name : str, optional
        Name of the figure directory relative to ``out_dir``, for the image links.

    Returns
    -------
    pathlib.Path
        Path of ``claims.md`` (written through a temporary file, so a crash leaves no half report).
    """
    from .claims import VERDICTS, counts
    from .claims.base import PAPERS, SEEDS
    out_dir.mkdir(parents=True, exist_ok=True)
    c = counts(records)
    L = ["# ecocc claims ledger", "",
         "Verdicts are about each statement as printed, under the paper's own model: holds, approximate (true within "
         "the paper's own stated approximation; error given), fails (counterexample given; corrected statement "
         "checked where derivable), not-checkable (needs what a fluid model lacks).", "",
         "| paper | seed | " + " | ".join(VERDICTS) + " | total |", "|---|---|" + "---|" * (len(VERDICTS) + 1)]
    for p in PAPERS:
        if p in c:
            L.append(f"| {p} | {SEEDS[PAPERS[p]]} | " + " | ".join(str(c[p][v]) for v in VERDICTS)
                     + f" | {sum(c[p].values())} |")
    L.append("")
    for r in records:
        L += [f"## `{r.id}` — **{r.verdict}**", "", f"*Source:* {r.source}", "", f"*Statement:* {r.statement}", "",
              r.detail, ""]
        if r.readings:
            L += ["| reading | verdict | evidence |", "|---|---|---|"]
            for rd in r.readings:
                L.append(f"| {rd.name} | {rd.verdict} | {rd.detail.replace('|', '/')} |")
            L.append("")
        if r.corrected:
            L += [f"*Corrected statement:* {r.corrected.get('statement')} — check: {r.corrected.get('check')}", ""]
        for f in r.figures:
            if f.endswith(".png"):
                L += [f"![{r.id}]({figdir_name}/{f})", ""]
        if r.run:
            L += [f"*Reproduce:* `ecocc claims --only {r.id}`; {r.run}", ""]
        from .results import _jsonable
        ev = json.dumps(_jsonable(r.as_dict()["evidence"]), indent=1, allow_nan=False)
        if len(ev) > 4000:
            ev = ev[:4000] + "\n... (truncated; full evidence in claims.json)"
        L += ["<details><summary>evidence</summary>", "", "```json", ev, "```", "", "</details>", ""]
    path = out_dir / "claims.md"
    tmp = path.with_suffix(".md.tmp")
    tmp.write_text("\n".join(L))
    tmp.replace(path)
    from .results import json_dumps
    (out_dir / "claims.json").write_text(json_dumps([r.as_dict() for r in records], indent=1))  # non-finite: null
    return path


@click.command("claims")
@click.option("--only", "only", multiple=True, metavar="ID", help="Check only this claim id (repeatable).")
@click.option("--paper", "papers", multiple=True, metavar="NAME",
              help="Check only this paper's claims (petcp, cltcp, symbiosis, iguchi, aecp; repeatable).")
@click.option("--slow", "include_slow", is_flag=True, help="Also run the claims marked slow.")
@click.option("--json", "as_json", is_flag=True, help="Print the records as JSON.")
@click.option("--list", "list_only", is_flag=True, help="List the claim ids and statements without running them.")
@click.option("--report", "report_dir", type=click.Path(file_okay=False), default=None,
              help="Write a Markdown report (claims.md, claims.json, figures/ in PNG and PDF) into this directory.")
@click.option("--quiet", is_flag=True, help="No progress bar.")
def claims_cmd(only, papers, include_slow, as_json, list_only, report_dir, quiet):
    """Check the papers' claims against analysis and numeric runs and print the verdicts.

    \b
    Some records add ns-3 packet-level readings when the ns3 wheel is installed (ecocc[packet]):
    ECOCC_CLAIMS_PACKET=off skips them, =all also runs the long ones (cltcp.fig6 at 120 Mbps, ~20 min).
    """
    from . import claims
    from .errors import InputError
    try:
        chosen = claims.select(list(only) or None, list(papers) or None, include_slow)
    except InputError as exc:  # name the option the value came from
        option = {"claim id": "--only", "paper": "--paper"}.get(exc.field, exc.field)
        raise InputError(f"{option} ({exc.field})", exc.value, exc.allowed) from None
    if list_only:
        for c in chosen:
            click.echo(f"{c.id:24s} {'(slow) ' if c.slow else ''}{c.statement}")
        return
    from tqdm.auto import tqdm
    bar = tqdm(total=len(chosen), unit="claim", disable=quiet, leave=False)

    def progress(cid):
        bar.set_description(cid)
        bar.update(0)

    figdir = Path(report_dir) / "figures" if report_dir else None
    records = []
    try:
        for c in chosen:
            progress(c.id)
            records += claims.evaluate([c.id], figdir=figdir)
            bar.update(1)
    finally:
        bar.close()
    if report_dir:
        path = write_report(records, Path(report_dir))
        click.echo(f"wrote {path}", err=True)
    if as_json:
        from .results import json_dumps
        click.echo(json_dumps([r.as_dict() for r in records], indent=2))  # non-finite numbers as null
        return
    for line in _table(records):
        click.echo(line)
    click.echo("")
    for p, d in claims.counts(records).items():
        click.echo(f"{p}: " + ", ".join(f"{v} {k}" for k, v in d.items()))
