"""Time ``ecocc simulate NAME`` for every shipped scenario (issue 11: each under a minute).

    python benchmarks/scenarios_time.py [--cache DIR]

Each scenario runs in a fresh process (``python -m ecocc simulate NAME --out <tmp> --json``), timed from spawn
to exit, in the order of ``ecocc.scenarios.shipped()``.  The kernel cache (``ECOCC_CACHE_DIR``) is a new
empty directory shared by the runs (``--cache`` to reuse one): the first scenario that needs a kernel not built at
install time pays its compilation, which the table marks (``compiled``, from the run's stderr).  Writes
``scenarios_time.json`` and ``scenarios_time.md`` beside this file.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache", default=None, help="kernel cache directory (default: a new empty one)")
    ap.add_argument("--timeout", type=float, default=600.0, help="per scenario, seconds")
    ap.add_argument("--out", default=str(HERE / "scenarios_time"))
    a = ap.parse_args(argv)
    if not a.timeout > 0:
        ap.error(f"--timeout {a.timeout}: a positive number of seconds")
    from ecocc.scenarios import shipped
    names = list(shipped())
    cache = a.cache or tempfile.mkdtemp(prefix="ecocc-cache-")
    env = dict(os.environ, ECOCC_CACHE_DIR=cache)
    rows, load0 = [], os.getloadavg()
    for nm in names:
        with tempfile.TemporaryDirectory() as out:
            t0 = time.perf_counter()
            try:
                p = subprocess.run([sys.executable, "-m", "ecocc", "simulate", nm, "--out", out, "--json"],
                                   capture_output=True, text=True, timeout=a.timeout, env=env)
                wall, rc, err = time.perf_counter() - t0, p.returncode, p.stderr
                status = "?"
                try:
                    status = json.loads(p.stdout).get("status", "?")
                except ValueError:
                    pass
            except subprocess.TimeoutExpired:
                wall, rc, err, status = time.perf_counter() - t0, None, "", "timeout"
        rows.append(dict(scenario=nm, wall_s=round(wall, 2), exit=rc, status=status,
                         compiled="compiling" in err, under_a_minute=wall < 60.0))
        print(f"{nm:32s} {wall:7.2f} s  {status}{'  (compiled a kernel)' if rows[-1]['compiled'] else ''}",
              flush=True)
    res = dict(when=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), load_start=load0,
               load_end=os.getloadavg(), python=sys.version.split()[0], rows=rows)
    from ecocc.store import atomic_write_text
    atomic_write_text(a.out + ".json", json.dumps(res, indent=1))  # an interrupted run keeps the old file
    slow = [r["scenario"] for r in rows if not r["under_a_minute"]]
    md = [f"# `ecocc simulate NAME` for every shipped scenario ({res['when']})", "",
          f"`python benchmarks/scenarios_time.py`: one fresh process per scenario, timed from spawn to exit; one "
          f"kernel cache, empty at the start, shared by the runs (a run marked *compiled* built a kernel that the "
          f"install does not ship).  Load average {load0[0]:.1f} at the start, {res['load_end'][0]:.1f} at the end.  "
          f"{len(rows)} scenarios; over a minute: {', '.join(slow) if slow else 'none'}.", "",
          "| scenario | wall (s) | status | compiled a kernel |", "|---|---|---|---|"]
    md += [f"| {r['scenario']} | {r['wall_s']:.2f} | {r['status']} | {'yes' if r['compiled'] else ''} |" for r in rows]
    atomic_write_text(a.out + ".md", "\n".join(md) + "\n")
    if a.cache is None:
        shutil.rmtree(cache, ignore_errors=True)  # the temporary kernel cache of this run


if __name__ == "__main__":
    main()
