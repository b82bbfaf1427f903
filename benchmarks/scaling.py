"""Scaling benchmark of the compiled engine (issue #14): every model at N = 1e3, 1e4, 1e5 flows on 1,000 links.

Topology: :func:`ecocc.random_network` (``n_flows`` flows on ``n_links = 1000`` links, routes of 1 to 5
distinct links drawn uniformly, ``max_hops=5``; link capacities uniform in [1e4, 1e5] packets/s, RTTs uniform
in [0.01, 0.5] s, initial rate 10 packets/s, seed 0; the same network for every model).  Each model runs at
its default parameters and the default tolerances of :func:`ecocc.simulate` (adaptive Dormand--Prince 5(4),
``rtol = 1e-7``, ``atol = NetworkSystem.default_atol()``), ``engine="numba"``, 30 s simulated, output sampled
every ``--output-dt`` seconds (default 1 s: 31 samples; the default ``t_end / 2000`` of ``simulate`` would
store 2001 x 4 x 101,000 values at N = 1e5, beyond :data:`ecocc.limits.MAX_OUTPUT_VALUES`).

Each (model, N, repeat) runs in a fresh child process (``python scaling.py --child JSON``), which:

1. imports ecocc and builds the network (timed: ``build_network_s``);
2. runs the same model on a 50-flow, 5-link random network for 1 s (``warmup_s``: loading the model's
   generated kernel from the cache -- or compiling it when the cache is empty -- which the timed run then
   does not include);
3. runs the timed simulation: ``simulate_s`` is the in-process wall time of the ``simulate`` call (checks,
   system set-up, the compiled integration, building the Trajectory), ``solver_wall_s`` the integrator's
   own (``Trajectory.solver["wall_s"]``), ``n_steps`` the accepted steps;
4. reports the peak resident set of the whole child (``VmHWM``, MiB) and the resident set before the timed
   run.

The target of issue #14 is on ``simulate_s`` (in-process, compile excluded: < 30 s for every model, < 20 s
for AECP) and the child's peak RSS (< 4 GiB).  Rows are medians over ``--repeats`` runs.  The fit of
``log(simulate_s)`` against ``log(N)`` gives the growth exponent (1 = linear).  ``--cold`` first compiles
each model's kernels into empty caches (``ECOCC_CACHE_DIR`` / ``NUMBA_CACHE_DIR`` in a temporary
directory) and reports that compile time separately.  The load average (1 min) is recorded at the start and
end of every child.

``--past silent,steady`` runs each (model, N) under each reading of the past before t = 0
(:mod:`ecocc.system`; default ``silent``, simulate's default); ``--save-dir DIR`` keeps each run's sampled rates
and queues (``.npz``), and with both readings the report gives how far apart their trajectories are at the
last sample (largest relative difference of the rates, of the queues in packets).  ``--max-history-gib``
passes simulate's memory bound (default 2).  ``--progress``: each child prints a heartbeat (wall time, last
output time written, peak RSS, load) every 20 s on stderr; a child killed at ``--timeout`` then reports
the simulated time it had reached and its peak RSS so far.

Usage::

    python benchmarks/scaling.py [--models aecp,reno] [--sizes 1000,10000,100000] [--repeats 3]
                                 [--links 1000] [--t-end 30] [--output-dt 1] [--cold] [--out benchmarks/scaling]
                                 [--past silent,steady] [--save-dir DIR] [--max-history-gib 2] [--progress]

writes ``benchmarks/scaling.json`` and ``benchmarks/scaling.md`` (``--out`` changes the stem).
"""
import time

T_START = time.perf_counter()

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import platform  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

MODELS = ("aecp", "cltcp", "petcp", "symbiosis", "reno", "hstcp", "stcp", "fast", "xcp")
SIZES = (1_000, 10_000, 100_000)
#: issue #14: N = 1e5 flows on 1e3 links, 30 s simulated
TARGET_S = 30.0
TARGET_AECP_S = 20.0
TARGET_RSS_MIB = 4096.0


def _status_kib(key):
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return -1


def _load1():
    return os.getloadavg()[0]


def _heartbeat(t0, cpu0, every=20.0):
    """``--progress``: a daemon thread printing to stderr every ``every`` s the child's wall time since ``t0``, the
    last output time the compiled integrator has written (its output rows are set to NaN first: the kernel runs
    without the GIL and writes them as it passes the output times), the resident and peak resident set and the
    load, so a killed run says how far it got (:func:`_partial`).  Instrumentation only: the run is unchanged."""
    import threading

    import numpy as np
    from ecocc.dde import engine
    seen = {}
    orig = engine.generic_args

    def generic_args(*a, **k):
        gen, kw = orig(*a, **k)
        kw["out_y"][:] = np.nan
        seen["kw"] = kw
        return gen, kw
    engine.generic_args = generic_args

    def beat():
        while True:
            time.sleep(every)
            kw, t_out = seen.get("kw"), -1.0
            if kw is not None:
                done = np.flatnonzero(~np.isnan(kw["out_y"][:, 0]))
                t_out = float(kw["t_eval"][done[-1]]) if done.size else -1.0
            print(f"HEARTBEAT wall={time.perf_counter() - t0:.1f} cpu={time.process_time() - cpu0:.1f} t_out={t_out:g} "
                  f"rss={_status_kib('VmRSS') / 1024:.0f} "
                  f"hwm={_status_kib('VmHWM') / 1024:.0f} load={_load1():.2f}", file=sys.stderr, flush=True)
    threading.Thread(target=beat, daemon=True).start()


def _partial(err):
    """From a killed child's stderr (``--progress``): the last output time it had written and its last
    heartbeat (wall since the timed run's start, peak RSS in MiB, load), or {}."""
    import re
    if isinstance(err, bytes):
        err = err.decode(errors="replace")
    out = {}
    beats = re.findall(r"HEARTBEAT wall=([0-9.]+) cpu=([0-9.]+) t_out=([-0-9.e]+) rss=([0-9]+) hwm=([0-9]+) "
                       r"load=([0-9.]+)", err or "")
    if beats:
        w, c, t, _, h, ld = beats[-1]
        out.update(partial_wall_s=float(w), partial_cpu_s=float(c), t_reached_s=float(t), peak_rss_mib=float(h),
                   load1_end=float(ld))
        out["heartbeats"] = [dict(wall_s=float(b[0]), cpu_s=float(b[1]), t_out_s=float(b[2]), hwm_mib=float(b[4]),
                                  load1=float(b[5])) for b in beats]
    return out


def child(args):
    """One timed run in this process; prints ``RESULT {json}``."""
    load0 = _load1()
    from ecocc import random_network, simulate
    t_import = time.perf_counter()
    net = random_network(args["n_flows"], args["n_links"], max_hops=5, seed=args.get("seed", 0))
    t_net = time.perf_counter()
    small = random_network(50, 5, max_hops=5, seed=1)
    tr0 = simulate(small, args["model"], t_end_s=1.0, output_dt_s=0.5, engine="numba")
    t_warm = time.perf_counter()
    rss_before = _status_kib("VmRSS") / 1024
    cpu0 = time.process_time()
    past = args.get("past", "silent")
    extra = {} if past == "silent" else {"past": past}  # the default call: runs against an older ecocc too
    if "max_history_gib" in args:
        extra["max_history_gib"] = args["max_history_gib"]
    if args.get("progress"):
        _heartbeat(t_warm, cpu0)
    tr = simulate(net, args["model"], t_end_s=args["t_end"], output_dt_s=args["output_dt"], engine="numba", **extra)
    t_done = time.perf_counter()
    cpu_s = time.process_time() - cpu0
    if args.get("save"):
        import numpy as np
        np.savez(args["save"], t=tr.t_s, rate=tr.rate_pps, queue=tr.queue_pkts)
    out = dict(model=args["model"], n_flows=args["n_flows"], n_links=args["n_links"], past=past, status=tr.status.value,
               message=tr.message, import_s=t_import - T_START, build_network_s=t_net - t_import,
               warmup_s=t_warm - t_net, warmup_status=tr0.status.value, simulate_s=t_done - t_warm,
               simulate_cpu_s=cpu_s,
               solver_wall_s=tr.solver["wall_s"], n_steps=int(tr.solver["n_steps"]),
               n_rejected=int(tr.solver.get("n_rejected", -1)), nfev=int(tr.solver.get("nfev", -1)),
               n_state=int(tr.solver.get("n_state", -1)) if "n_state" in tr.solver else None,
               h_min_s=tr.solver.get("h_min"), h_max_s=tr.solver.get("h_max"),
               rss_before_mib=rss_before, peak_rss_mib=_status_kib("VmHWM") / 1024,
               process_wall_s=time.perf_counter() - T_START, load1_start=load0, load1_end=_load1(),
               kernel=tr.solver.get("kernel") or tr.solver.get("compiled"))
    print("RESULT " + json.dumps(out, default=str), flush=True)


def run_child(spec, env=None, timeout=1800):
    t0 = time.perf_counter()
    try:
        p = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", json.dumps(spec)],
                           capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired as e:
        part = _partial(e.stderr)
        msg = f"killed after {timeout:g} s of wall time"
        if part:
            msg += (f"; it had reached t = {part.get('t_reached_s', float('nan')):g} s (last output written) after "
                    f"{part.get('partial_wall_s', float('nan')):g} s of the timed run ("
                    f"{part.get('partial_cpu_s', float('nan')):g} s of CPU), peak RSS "
                    f"{part.get('peak_rss_mib', float('nan')):.0f} MiB (last heartbeat)")
        return dict(spec, status="timeout", process_wall_s=time.perf_counter() - t0, error=msg, **part)
    for line in p.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    tail = (p.stderr or p.stdout).strip().splitlines()[-3:]
    return dict(spec, status="error", returncode=p.returncode, error=" | ".join(tail))


def _median_row(runs):
    ok = [r for r in runs if r.get("status") == "success"]
    if len(ok) != len(runs):
        bad = next(r for r in runs if r.get("status") != "success")
        row = dict(bad)
    else:
        row = dict(sorted(ok, key=lambda r: r["simulate_s"])[len(ok) // 2])
    for key in ("simulate_s", "solver_wall_s", "peak_rss_mib"):
        row[key + "_runs"] = [r.get(key) for r in runs]
    return row


def fit_loglog(rows, key):
    import numpy as np
    ok = [r for r in rows if r.get("status") == "success" and r.get(key)]
    if len(ok) < 2:
        return None
    x = np.log([r["n_flows"] for r in ok])
    y = np.log([r[key] for r in ok])
    slope = float(np.polyfit(x, y, 1)[0])
    return slope


def compare_pasts(save_dir, model, N, rows):
    """Silent against steady past for one (model, N), from the saved samples of two successful runs (None
    otherwise): the largest relative rate difference and queue difference (packets) at the last sample, and the
    largest relative rate difference over the samples from 10 % of the run on."""
    import numpy as np
    ok = {r.get("past"): r for r in rows if r["model"] == model and r["n_flows"] == N and r.get("status") == "success"}
    if not {"silent", "steady"} <= set(ok):
        return None
    d = {p: np.load(os.path.join(save_dir, f"{model}_{N}_{p}.npz")) for p in ("silent", "steady")}
    t = d["silent"]["t"]
    if not np.array_equal(t, d["steady"]["t"]):
        return None
    ra, rb = d["silent"]["rate"], d["steady"]["rate"]
    qa, qb = d["silent"]["queue"], d["steady"]["queue"]
    rel = np.abs(ra - rb) / np.maximum(np.maximum(np.abs(ra), np.abs(rb)), 1e-300)
    k0 = int(np.searchsorted(t, 0.1 * t[-1]))
    return dict(model=model, n_flows=N, t_s=float(t[-1]), rate_rel_at_t=float(np.max(rel[-1])),
                queue_abs_at_t=float(np.max(np.abs(qa[-1] - qb[-1]))), rate_rel_from=float(np.max(rel[k0:])),
                t_from_s=float(t[k0]))


def cold_compile(model, t_end):
    """Compile ``model``'s kernels into empty caches: the child's warm-up time is then the compile time."""
    with tempfile.TemporaryDirectory(prefix="ecocc-scale-cold-") as d:
        env = dict(os.environ, ECOCC_CACHE_DIR=os.path.join(d, "ecocc"), NUMBA_CACHE_DIR=os.path.join(d, "numba"))
        r = run_child(dict(model=model, n_flows=100, n_links=10, t_end=1.0, output_dt=0.5), env=env)
    return dict(status=r.get("status"), compile_s=r.get("warmup_s"), process_wall_s=r.get("process_wall_s"))


def verdicts(rows):
    out = {}
    for r in rows:
        if r["n_flows"] != 100_000:
            continue
        lim = TARGET_AECP_S if r["model"] == "aecp" else TARGET_S
        t, rss = r.get("simulate_s"), r.get("peak_rss_mib")
        out[r["model"]] = dict(
            simulate_s=t, peak_rss_mib=rss, time_limit_s=lim, rss_limit_mib=TARGET_RSS_MIB,
            met_time=bool(r.get("status") == "success" and t is not None and t < lim),
            met_rss=bool(r.get("status") == "success" and rss is not None and rss < TARGET_RSS_MIB))
    return out


def write(res, stem):
    with open(stem + ".json", "w") as fh:
        json.dump(res, fh, indent=1, default=str)
    L = [f"# Scaling of the compiled engine (issue #14)", "",
         f"Generated by `python benchmarks/scaling.py {' '.join(res['argv'])}` on {res['date_utc']} "
         f"({res['machine']}, {res['cpus']} CPUs); load average (1 min) at start {res['load_start'][0]:.2f}, "
         f"at end {res['load_end'][0]:.2f}.", "",
         f"Network: `random_network(N, {res['n_links']}, max_hops=5, seed=0)` (routes of 1-5 distinct links "
         "drawn uniformly; capacities uniform in [1e4, 1e5] packets/s; RTTs uniform in [0.01, 0.5] s). "
         f"Each model at its default parameters and `simulate`'s default tolerances (adaptive RK45, rtol 1e-7, "
         f"default atol), engine numba, {res['t_end_s']:g} s simulated, output every {res['output_dt_s']:g} s. "
         "Times are in-process walls of the `simulate` call in a fresh child process after a warm-up run "
         "(kernel load/compile excluded, reported as warm-up), and the child's CPU time over that call (all threads: "
         "what a machine to itself would take, about); peak RSS is the child's VmHWM. "
         f"Medians of the runs per size {res['repeats']}; a child still running after {res['timeout_s']:g} s is "
         "killed (status timeout).", "",
         "| model | N flows | past | status | simulate (s) | simulate CPU (s) | solver (s) | steps | rejected | "
         "warm-up (s) | peak RSS (MiB) | all simulate runs (s) | load1 |",
         "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in res["rows"]:
        runs = ", ".join("-" if v is None else f"{v:.2f}" for v in r.get("simulate_s_runs", []))

        def f(k, fmt):
            v = r.get(k)
            return "-" if v is None else format(v, fmt)
        L.append(f"| {r['model']} | {r['n_flows']} | {r.get('past', 'silent')} | {r.get('status')} | "
                 f"{f('simulate_s', '.2f')} | {f('simulate_cpu_s', '.2f')} | "
                 f"{f('solver_wall_s', '.2f')} | {f('n_steps', 'd')} | {f('n_rejected', 'd')} | {f('warmup_s', '.2f')} | "
                 f"{f('peak_rss_mib', '.0f')} | {runs} | {f('load1_start', '.2f')} |")
    failed = [r for r in res["rows"]
              if r.get("status") not in ("success", None) and (r.get("message") or r.get("error"))]
    if failed:
        L += ["", "Messages of the runs that did not succeed:", ""]
        L += [f"- {r['model']} N = {r['n_flows']} past = {r.get('past', 'silent')}: "
              f"{r.get('message') or r.get('error')}"
              for r in failed]
    if res.get("compare"):
        L += ["", "Silent against steady past (same model and N; the sampled runs, both successful): largest "
                  "difference at the last sample, and over the samples from `t` on:", "",
              "| model | N flows | t (s) | max rel. rate diff at t | max queue diff at t (pkt) | "
              "max rel. rate diff over [t_from, t] | t_from (s) |", "|---|---|---|---|---|---|---|"]
        for c in res["compare"]:
            L.append(f"| {c['model']} | {c['n_flows']} | {c['t_s']:g} | {c['rate_rel_at_t']:.3g} | "
                     f"{c['queue_abs_at_t']:.3g} | {c['rate_rel_from']:.3g} | {c['t_from_s']:g} |")
    L += ["", "Growth exponent (slope of log time against log N; 1 = linear):", "",
          "| model | simulate_s | solver_wall_s | peak RSS |", "|---|---|---|---|"]
    for m, fit in res["fit"].items():
        L.append(f"| {m} | " + " | ".join("-" if fit.get(k) is None else f"{fit[k]:.2f}"
                                          for k in ("simulate_s", "solver_wall_s", "peak_rss_mib")) + " |")
    if res.get("cold"):
        L += ["", "First compile per model (empty caches, child warm-up):", "", "| model | compile (s) | status |",
              "|---|---|---|"]
        for m, c in res["cold"].items():
            L.append(f"| {m} | {c['compile_s'] if c['compile_s'] is None else format(c['compile_s'], '.1f')} | "
                     f"{c['status']} |")
    if res["verdicts"]:
        L += ["", f"Targets at N = 1e5 (simulate < {TARGET_S:g} s, AECP < {TARGET_AECP_S:g} s; peak RSS < "
                  f"{TARGET_RSS_MIB:g} MiB):", "", "| model | simulate (s) | limit (s) | time | peak RSS (MiB) | memory |",
              "|---|---|---|---|---|---|"]
        for m, v in res["verdicts"].items():
            L.append(f"| {m} | {v['simulate_s'] if v['simulate_s'] is None else format(v['simulate_s'], '.2f')} | "
                     f"{v['time_limit_s']:g} | {'met' if v['met_time'] else 'MISSED'} | "
                     f"{v['peak_rss_mib'] if v['peak_rss_mib'] is None else format(v['peak_rss_mib'], '.0f')} | "
                     f"{'met' if v['met_rss'] else 'MISSED'} |")
    with open(stem + ".md", "w") as fh:
        fh.write("\n".join(L) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--models", default=",".join(MODELS), help="comma-separated model names")
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)), help="comma-separated flow counts")
    ap.add_argument("--links", type=int, default=1000, help="links of the random network")
    ap.add_argument("--repeats", default="3", help="runs per (model, N), the median reported; one number or one per "
                    "size (e.g. 3,1,1)")
    ap.add_argument("--timeout", type=float, default=1800.0, help="wall-time limit of one child, s (status 'timeout')")
    ap.add_argument("--t-end", type=float, default=30.0, help="simulated time, s")
    ap.add_argument("--output-dt", type=float, default=1.0, help="output sampling step, s")
    ap.add_argument("--cold", action="store_true", help="also time each model's first compile (empty caches)")
    ap.add_argument("--out", default=os.path.join(HERE, "scaling"), help="output stem (.json and .md)")
    ap.add_argument("--past", default="silent", help="comma-separated readings of the past before t = 0 "
                    "(silent, steady): each (model, N) runs under each")
    ap.add_argument("--save-dir", default=None, help="keep each run's sampled rates and queues there (.npz); with "
                    "both readings, compare them")
    ap.add_argument("--progress", action="store_true", help="children print a heartbeat (wall, last output time "
                    "written, peak RSS) on stderr: a child killed at --timeout reports how far it got")
    ap.add_argument("--max-history-gib", type=float, default=None, help="simulate's max_history_gib (default 2)")
    a = ap.parse_args()
    if a.child:
        child(json.loads(a.child))
        return
    models = [m.strip() for m in a.models.split(",") if m.strip()]
    sizes = [int(s) for s in a.sizes.split(",")]
    reps = [int(r) for r in a.repeats.split(",")]
    reps = reps * len(sizes) if len(reps) == 1 else reps
    if len(reps) != len(sizes):
        ap.error(f"--repeats: one number or one per size ({len(sizes)})")
    res = dict(argv=sys.argv[1:], date_utc=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
               machine=platform.processor() or platform.machine(), cpus=os.cpu_count(), load_start=os.getloadavg(),
               n_links=a.links, t_end_s=a.t_end, output_dt_s=a.output_dt, repeats=dict(zip(map(str, sizes), reps)),
               timeout_s=a.timeout, rows=[], fit={},
               cold={}, compare=[])
    pasts = [p.strip() for p in a.past.split(",") if p.strip()]
    if a.save_dir:
        os.makedirs(a.save_dir, exist_ok=True)
    if a.cold:
        for m in models:
            res["cold"][m] = cold_compile(m, a.t_end)
            print(f"cold {m}: {res['cold'][m]}", flush=True)
    for m in models:
        for N, rep, past in ((N, rep, past) for N, rep in zip(sizes, reps) for past in pasts):
            spec = dict(model=m, n_flows=N, n_links=a.links, t_end=a.t_end, output_dt=a.output_dt, past=past)
            if a.progress:
                spec["progress"] = True
            if a.max_history_gib is not None:
                spec["max_history_gib"] = a.max_history_gib
            if a.save_dir:
                spec["save"] = os.path.join(a.save_dir, f"{m}_{N}_{past}.npz")
            runs = []
            for _ in range(rep):
                runs.append(run_child(spec, timeout=a.timeout))
                if runs[-1].get("status") != "success":
                    break  # a failed or refused run is not repeated
            row = _median_row(runs)
            row.setdefault("past", past)
            res["rows"].append(row)
            if a.save_dir and past == pasts[-1] and len(pasts) > 1:
                c = compare_pasts(a.save_dir, m, N, res["rows"])
                if c:
                    res["compare"].append(c)
            print(f"{m} N={N} past={past}: {row.get('status')} simulate {row.get('simulate_s')} s, "
                  f"steps {row.get('n_steps')}, "
                  f"RSS {row.get('peak_rss_mib')} MiB, runs {row['simulate_s_runs']} load {os.getloadavg()[0]:.2f}"
                  + (f" [{row.get('error') or row.get('message')}]" if row.get("status") != "success" else ""),
                  flush=True)
        rows = [r for r in res["rows"] if r["model"] == m and r.get("past", "silent") == pasts[0]]
        res["fit"][m] = {k: fit_loglog(rows, k) for k in ("simulate_s", "solver_wall_s", "peak_rss_mib")}
        res["load_end"] = os.getloadavg()
        res["verdicts"] = verdicts(res["rows"])
        write(res, a.out)  # after each model: a long run leaves partial results
    res["load_end"] = os.getloadavg()
    write(res, a.out)


if __name__ == "__main__":
    main()
