"""Every shipped scenario on the default engine against the NumPy reference (issue 14: "ecocc simulate of every
shipped scenario ... on the default engine match[es] the NumPy reference within the stated tolerance").

    python benchmarks/scenarios_engines.py [--names aecp-fig6,petcp-fig7] [--timeout 1800] [--jobs 2]
                                           [--out benchmarks/scenarios_engines]

For each scenario of ``ecocc.scenarios.shipped()`` this runs ``ecocc simulate NAME --engine auto`` (what a user
gets) and ``ecocc simulate NAME --engine numpy --no-checkpoint`` (the reference solver), each in a fresh process
with ``--no-figure --quiet --json``, and compares the two NetCDF files on their common output grid:

* the queues (packets): the largest ``|q - q_ref| / (atol_q + rtol |q_ref|)``, with ``atol_q`` = 1e-4 packets
  (``NetworkSystem.default_atol``'s queue tolerance) and the run's rtol;
* the sending rates (packets/s): the largest ``|x - x_ref| / (1e-6 + (rtol + 1e-8) |x_ref|)`` over the samples
  where the flow is active (1e-8: the absolute tolerance of a log-stored rate, a relative one; 1e-6 packets/s: a
  floor for rates at zero);
* the cumulative arrivals, departures and losses of every link at the end (packets): ``|a - a_ref| / (1e-3 +
  rtol |a_ref|)`` (1e-3 packets: the counters' absolute tolerance).

Two error-controlled solutions of the same rtol on different meshes each lie within a few tens of local
tolerances of the true solution, so the verdict is **agree** when every scaled difference is at most 200 (the rule
of ``tests/test_codegen.py``'s module docstring, derived there), **differ** otherwise (with the time and the
quantity of the largest difference), **same solver** when the default engine itself ran the NumPy solver (nothing
to compare), or the failure / timeout.  Results: ``<out>.json`` (rewritten after every scenario: a killed run keeps
what finished, a rerun skips the scenarios already there unless ``--fresh``, and a run of some ``--names`` keeps the
other scenarios' rows) and ``<out>.md``.

Where they differ, which one is off?  Each scenario is also run once more on the compiled engine at rtol 1e-11 with
every absolute tolerance 1e-12 (through the Python API, in a fresh process: the CLI has no ``--atol``), and both
runs are compared with that tight run in the same units (the columns "against a tight run"): a scenario whose two
engines both lie hundreds of units from the tight run differs because the problem amplifies the tolerance's
errors (a limit cycle's phase drifts), not because one engine is wrong.  The verdict stays the two engines' own
difference.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

#: scaled differences above this are "differ" (tests/test_codegen.py: two solutions on different meshes)
AGREE = 200.0
#: the tight run both engines are also measured against
TIGHT_RTOL = 1e-11
TIGHT_ATOL = 1e-12
Q_ATOL_PKTS = 1e-4
RATE_FLOOR_PPS = 1e-6
LOG_ATOL = 1e-8
COUNTER_ATOL_PKTS = 1e-3


def _run(name, engine, out, timeout):
    """One ``ecocc simulate`` process: ``(wall s, summary dict or None, error text)``."""
    args = [sys.executable, "-m", "ecocc", "simulate", name, "--out", out, "--engine", engine, "--no-figure",
            "--quiet", "--json"] + (["--no-checkpoint"] if engine == "numpy" else [])
    t0 = time.perf_counter()
    try:
        p = subprocess.run(args, capture_output=True, text=True, timeout=timeout, cwd=out)
    except subprocess.TimeoutExpired:
        return time.perf_counter() - t0, None, f"timeout after {timeout:g} s"
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        return wall, None, (p.stderr or p.stdout).strip().splitlines()[-1:]
    return wall, json.loads(p.stdout), ""


def _tight(name, out):
    """Write ``<stem>.nc`` of the scenario at rtol 1e-11, every atol 1e-12, compiled (a child process's job)."""
    from ecocc.scenarios import load
    from ecocc.simulate import simulate
    sc = load(name)
    tr = simulate(sc.network, sc.model, t_end_s=sc.duration_s, output_dt_s=sc.output_dt_s,
                  summary_window_s=sc.summary_window_s, name=sc.name, protocols=sc.protocols or None,
                  load_rtt=sc.load_rtt, past=sc.past, engine="numba", rtol=TIGHT_RTOL, atol=TIGHT_ATOL,
                  checkpoint=None, **dict(sc.params))
    if tr.status != "success":
        raise SystemExit(f"tight run: status {tr.status}")
    tr.to_netcdf(Path(out) / f"{sc.file_stem}.nc")


def _run_tight(name, out, timeout):
    """The tight run in a fresh process: ``(wall s, error text)``."""
    t0 = time.perf_counter()
    try:
        p = subprocess.run([sys.executable, __file__, "--tight-run", name, out], capture_output=True, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return time.perf_counter() - t0, f"timeout after {timeout:g} s"
    return time.perf_counter() - t0, "" if p.returncode == 0 else " ".join((p.stderr or p.stdout).strip().splitlines()[-1:])


def compare(nc, nc_ref, rtol):
    """Scaled differences of two ``ecocc simulate`` NetCDF files (module docstring): a dict of the largest per
    quantity, with where it is."""
    import xarray as xr
    with xr.open_dataset(nc) as a, xr.open_dataset(nc_ref) as b:
        t = b.time.values
        if a.time.size != t.size or not np.allclose(a.time.values, t, rtol=0, atol=1e-9):
            raise ValueError("the two runs have different output grids")
        out = {}
        q, qr = a.queue.values, b.queue.values
        s = np.abs(q - qr) / (Q_ATOL_PKTS + rtol * np.abs(qr))
        i, j = np.unravel_index(np.argmax(s), s.shape)
        out["queue"] = dict(scaled=float(s[i, j]), t_s=float(t[i]), link=str(b.link.values[j]),
                            abs_pkts=float(np.abs(q - qr).max()))
        x, xr_ = a.rate.values, b.rate.values
        act = (a.active.values > 0) & (b.active.values > 0)
        s = np.where(act, np.abs(x - xr_) / (RATE_FLOOR_PPS + (rtol + LOG_ATOL) * np.abs(xr_)), 0.0)
        i, j = np.unravel_index(np.argmax(s), s.shape)
        rel = np.where(act & (np.abs(xr_) > 0), np.abs(x - xr_) / np.where(xr_ == 0, 1.0, np.abs(xr_)), 0.0)
        out["rate"] = dict(scaled=float(s[i, j]), t_s=float(t[i]), flow=str(b.flow.values[j]),
                           rel=float(rel.max()))
        worst = dict(scaled=0.0)
        for c in ("arrived", "departed", "lost"):
            v, vr = a[c].values[-1], b[c].values[-1]
            s = np.abs(v - vr) / (COUNTER_ATOL_PKTS + rtol * np.abs(vr))
            k = int(np.argmax(s))
            if s[k] >= worst["scaled"]:
                worst = dict(scaled=float(s[k]), counter=c, link=str(b.link.values[k]), abs_pkts=float(abs(v[k] - vr[k])))
        out["counters_at_end"] = worst
    return out


def one(name, timeout):
    """Both runs of one scenario and their comparison (a row of the results)."""
    row = dict(scenario=name)
    with tempfile.TemporaryDirectory() as d_auto, tempfile.TemporaryDirectory() as d_np:
        w, s, err = _run(name, "auto", d_auto, timeout)
        row.update(default_wall_s=round(w, 2), default_status=(s or {}).get("status", "error"), default_error=err,
                   default_solver=(s or {}).get("solver", {}))
        if s is None:
            row["verdict"] = "default engine failed"
            return row
        if s["solver"].get("engine") != "numba":
            row["verdict"] = "same solver (the default engine ran the NumPy solver)"
            return row
        w, r, err = _run(name, "numpy", d_np, timeout)
        row.update(numpy_wall_s=round(w, 2), numpy_status=(r or {}).get("status", "error"), numpy_error=err,
                   numpy_steps=(r or {}).get("solver", {}).get("n_steps"))
        if r is None:
            row["verdict"] = f"NumPy reference did not finish ({err})"
            return row
        if s["status"] != "success" or r["status"] != "success":
            row["verdict"] = f"status: default {s['status']}, NumPy {r['status']}"
            return row
        stem = next(Path(d_auto).glob("*.nc")).name
        rtol = float(s["solver"].get("rtol", 1e-7))
        row["diff"] = compare(Path(d_auto) / stem, Path(d_np) / stem, rtol)
        worst = max(v["scaled"] for v in row["diff"].values())
        row["worst_scaled"] = worst
        row["verdict"] = "agree" if worst <= AGREE else "differ"
        with tempfile.TemporaryDirectory() as d_t:
            w, err = _run_tight(name, d_t, timeout)
            row.update(tight_wall_s=round(w, 2), tight_error=err)
            if not err:
                for key, d in (("default_vs_tight", d_auto), ("numpy_vs_tight", d_np)):
                    c = compare(Path(d) / stem, Path(d_t) / stem, rtol)
                    row[key] = dict(worst=max(v["scaled"] for v in c.values()), rate_rel=c["rate"]["rel"],
                                    queue_pkts=c["queue"]["abs_pkts"])
    return row


def _md(res):
    rows = res["rows"]
    n_agree = sum(r["verdict"] == "agree" for r in rows)
    from collections import Counter
    per = Counter(r.get("commit", "unknown") for r in rows)
    commits = ", ".join(f"{c} ({k} rows)" for c, k in per.items())
    lines = [f"# Every shipped scenario: the default engine against the NumPy reference ({res['when']})", "",
             f"`python benchmarks/scenarios_engines.py` (last run at commit {res['commit']}; rows from {commits}; "
             f"Python {res['python']}, load "
             f"{res['load_start'][0]:.1f} at the start, {res['load_end'][0]:.1f} at the end).  `ecocc simulate NAME` "
             "with `--engine auto` (the default) and `--engine numpy`, fresh processes; differences on the output "
             "grid in units of the tolerance (queue: 1e-4 packets + rtol |q|; rate: 1e-6 packets/s + (rtol + 1e-8) "
             "|x|; counters at the end: 1e-3 packets + rtol |c|); **agree** = every one at most "
             f"{AGREE:g} (two solutions on different meshes, tests/test_codegen.py).  {n_agree} of {len(rows)} agree.", "",
             "The last two columns: each engine against the compiled engine at rtol 1e-11, every atol 1e-12 (the worst "
             "scaled difference in the same units; the rate's relative and the queue's absolute difference in "
             "brackets).", "",
             "| scenario | verdict | queue: scaled (abs packets, at t) | rate: scaled (relative) | counters at the end: scaled | default engine (s, kernel) | NumPy solver (s) | default against a tight run | NumPy against a tight run |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        d = r.get("diff")
        if d:
            q, x, c = d["queue"], d["rate"], d["counters_at_end"]
            qs = f"{q['scaled']:.3g} ({q['abs_pkts']:.2g}, {q['t_s']:g} s)"
            xs = f"{x['scaled']:.3g} ({x['rel']:.2g})"
            cs = f"{c['scaled']:.3g}" + (f" ({c['counter']})" if c["scaled"] > 0 else "")
        else:
            qs = xs = cs = "-"
        kern = r.get("default_solver", {}).get("compiled") or "NumPy"
        tight = []
        for key in ("default_vs_tight", "numpy_vs_tight"):
            v = r.get(key)
            tight.append(f"{v['worst']:.3g} ({v['rate_rel']:.2g}, {v['queue_pkts']:.2g})" if v else
                         (f"- ({r['tight_error']})" if r.get("tight_error") else "-"))
        lines.append(f"| {r['scenario']} | {r['verdict']} | {qs} | {xs} | {cs} | {r.get('default_wall_s', '-')} ({kern}) | "
                     f"{r.get('numpy_wall_s', '-')} | {tight[0]} | {tight[1]} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--tight-run"]:  # the child process of _run_tight
        if len(argv) != 3:
            raise SystemExit("error: --tight-run NAME OUT_DIR (the child process of _run_tight)")
        return _tight(argv[1], argv[2])
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--names", default=None, help="comma-separated scenario names (default: every shipped one)")
    ap.add_argument("--timeout", type=float, default=1800.0, help="per run, seconds")
    ap.add_argument("--jobs", type=int, default=2, help="scenarios run at once")
    ap.add_argument("--out", default=str(HERE / "scenarios_engines"), help="results stem (.json, .md)")
    ap.add_argument("--fresh", action="store_true",
                    help="rerun the named scenarios even if already in the results file (the others' rows are kept)")
    a = ap.parse_args(argv)
    if not (math.isfinite(a.timeout) and a.timeout > 0):
        ap.error(f"--timeout {a.timeout}: a finite positive number of seconds")
    if a.jobs < 1:
        ap.error(f"--jobs {a.jobs}: at least 1")
    out = Path(a.out)
    if not out.resolve().parent.is_dir():
        ap.error(f"--out {a.out!r}: its directory does not exist")
    from ecocc.scenarios import shipped
    from ecocc.store import atomic_write_text
    known = list(shipped())
    names = known if a.names is None else a.names.split(",")
    bad = [n for n in names if n not in known]
    if bad:
        ap.error(f"--names: {bad} are not shipped scenarios (one of {known})")
    jpath = out.with_suffix(".json")
    done = {}
    if jpath.is_file():
        old = json.loads(jpath.read_text())
        done = {r["scenario"]: r for r in old["rows"]}
        for r in done.values():  # rows of a file written before rows carried their commit: the file's
            r.setdefault("commit", old.get("commit", "unknown"))
        if a.fresh:  # rerun the named ones; the other scenarios' rows stay in the file
            done = {k: v for k, v in done.items() if k not in names}
    commit = subprocess.run(["git", "-C", str(HERE), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip() or "unknown"
    res = dict(when=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), commit=commit,
               python=sys.version.split()[0], load_start=os.getloadavg(), rows=[])

    def save():
        res["load_end"] = os.getloadavg()
        res["rows"] = [done[n] for n in known if n in done]  # every finished one, not only this run's --names
        atomic_write_text(jpath, json.dumps(res, indent=1))
        atomic_write_text(out.with_suffix(".md"), _md(res))

    todo = [n for n in names if n not in done]
    with ThreadPoolExecutor(a.jobs) as ex:
        for row in ex.map(lambda n: one(n, a.timeout), todo):
            row["commit"] = commit
            done[row["scenario"]] = row
            save()
            w = row.get("worst_scaled")
            print(f"{row['scenario']:24s} {row['verdict']}" + (f" (worst {w:.3g})" if w is not None else "")
                  + f"  default {row.get('default_wall_s')} s, NumPy {row.get('numpy_wall_s', '-')} s", flush=True)
    save()


if __name__ == "__main__":
    main()
