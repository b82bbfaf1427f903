"""Run ``ecocc reproduce all`` and write its records as the table ``docs/reproduce_table.md``.

    python benchmarks/reproduce_table.py            # ecocc reproduce all --workers 2 --json --out figures/reproduce

The whole command is timed from outside (wall seconds, one run); the table lists every record: what the
paper reports, what ecocc measures, whether they agree within the stated tolerance (``-``: a statement
without a number) and why where known.  ``--from-json FILE`` rewrites the table from a saved ``--json``
output instead of running.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _num(v):
    if v is None:
        return "-"
    if isinstance(v, (int, float)):
        return f"{v:.4g}"
    return str(v)


def _cell(s):
    return str(s).replace("|", "\\|").replace("\n", " ")


def table(doc: dict, wall_s: float | None, workers: int) -> str:
    recs = doc["records"]
    agree = sum(1 for r in recs if r.get("agrees") is True)
    disagree = sum(1 for r in recs if r.get("agrees") is False)
    statement = len(recs) - agree - disagree
    when = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    load = os.getloadavg()
    timing = (f"{int(wall_s // 60)} min {wall_s % 60:.0f} s wall, whole command, load average at the end "
              f"{load[0]:.1f}" if wall_s is not None else "time not measured (rewritten from saved JSON)")
    bad = doc.get("not_successful") or []
    head = [f"# `ecocc reproduce all` ({when})", "",
            f"The records printed by `ecocc reproduce all --workers {workers} --json --out figures/reproduce` "
            f"(`python benchmarks/reproduce_table.py`; {timing}; {doc.get('n_runs', '?')} runs, "
            + ("all successful" if not bad else f"not successful: {', '.join(map(str, bad))}")
            + f"; simulation CPU {doc.get('cpu_s', float('nan')):.0f} s), one row per record: what the paper "
            "reports, what ecocc measures, whether they agree within the stated tolerance (`-`: a statement "
            f"without a number), and why where known.  {len(recs)} rows: {agree} agree, {disagree} disagree, "
            f"{statement} without a number.", "",
            "| scenario | protocol | quantity | where | paper | ecocc | unit | agrees | why |",
            "|---|---|---|---|---|---|---|---|---|"]
    rows = []
    for r in recs:
        ag = r.get("agrees")
        agrees = "yes" if ag is True else ("**no**" if ag is False else "-")
        why = r.get("why") or ""
        if r.get("paper") is None and r.get("quote"):
            why = f"paper: '{r['quote']}'" + (f"; {why}" if why else "")
        rows.append("| " + " | ".join(_cell(x) for x in (
            r.get("scenario", ""), r.get("protocol", ""), r.get("quantity", ""), r.get("where", ""),
            _num(r.get("paper")), _num(r.get("ecocc")), r.get("unit", ""), agrees, why)) + " |")
    return "\n".join(head + rows) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, default=2, help="local worker processes (>= 1)")
    ap.add_argument("--out", default=str(ROOT / "docs" / "reproduce_table.md"))
    ap.add_argument("--json-out", default=str(ROOT / "benchmarks" / "reproduce_all.json"),
                    help="where the command's JSON output is kept")
    ap.add_argument("--from-json", default=None, help="rewrite the table from this saved JSON, do not run")
    a = ap.parse_args(argv)
    if a.workers < 1:
        ap.error(f"--workers {a.workers}: at least 1")
    if a.from_json:
        try:
            doc, wall = json.loads(Path(a.from_json).read_text()), None
        except (OSError, ValueError) as exc:
            ap.error(f"--from-json {a.from_json}: not a readable JSON file ({exc})")
        if not isinstance(doc, dict) or not isinstance(doc.get("records"), list):
            ap.error(f"--from-json {a.from_json}: not the output of `ecocc reproduce ... --json` (no 'records' list)")
    else:
        cmd = [sys.executable, "-m", "ecocc", "reproduce", "all", "--workers", str(a.workers), "--json",
               "--quiet", "--out", str(ROOT / "figures" / "reproduce")]
        t0 = time.perf_counter()
        p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        if p.returncode != 0:
            sys.exit(f"{' '.join(cmd)} exited {p.returncode}:\n{p.stderr[-2000:]}")
        doc = json.loads(p.stdout)
        tmp = Path(a.json_out + ".tmp")
        tmp.write_text(json.dumps(doc, indent=1))
        tmp.replace(a.json_out)
    text = table(doc, wall, a.workers)
    tmp = Path(a.out + ".tmp")
    tmp.write_text(text)
    tmp.replace(a.out)
    print(text.splitlines()[2])


if __name__ == "__main__":
    main()
