"""Benchmarks of issue #4: ecocc (adaptive, fixed step) vs jitcdde and ddeint.

Model: the AECP dumbbell (alpha = 2 /s, beta = 1 /s, T = 2 s,
C = 15000 packets/s, q0 = 100 packets, queue clamped at 0, constant
history x = r = 10 packets/s).  Cases: N = 4 RTTs 50/100/200/400 ms for
60 s; the same with starts 0/10/20/30 s; N = 100 and N = 1000 with RTTs
uniform in [0.01, 0.5] s (seeded) for 30 s.

Accuracy is measured against a tight ecocc reference (adaptive, rtol
1e-10, atol 1e-10 on rates, and max step 2.5 ms: the adaptive solver does
not control the interpolation error of its history, which with steps as
long as the smallest delay can exceed rtol, so the reference caps the
step).  Errors on the output grid (every 50 ms): relative aggregate rate
``max_t |S - S_ref| / max_t S_ref`` (S = sum of the flows' rates) and
absolute queue ``max_t |q - q_ref|`` in packets; "negative queue" is the
smallest queue value output.

Wall times are end to end in this one process run: ecocc from building
the network to the trajectory; jitcdde from building the symbolic model
through C compilation to the last output (in a subprocess, with a time
limit, failures recorded); ddeint its integration.

Usage: ``python benchmarks/run.py [--quick]``; writes ``results.json`` and
``results.md`` next to this file.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

from ecocc import dumbbell, simulate  # noqa: E402

import external  # noqa: E402

C_PPS = 15000.0
OUT_DT_S = 0.05
FIXED_STEP_S = 0.005  # <= the smallest delay of every case (10 ms): no extrapolation
JITC_TIMEOUT_S = 1200


def cases(quick):
    rng = np.random.default_rng(20260401)
    r100 = rng.uniform(0.01, 0.5, size=100)
    r1000 = rng.uniform(0.01, 0.5, size=1000)
    f = 6 if quick else 1
    out = [
        dict(name="N4", rtts=[0.05, 0.1, 0.2, 0.4], starts=[0.0] * 4, t_end=60.0 / f, ddeint=True),
        dict(name="N4-staggered", rtts=[0.05, 0.1, 0.2, 0.4], starts=[0.0, 10.0, 20.0, 30.0],
             t_end=60.0 if not quick else 35.0, ddeint=True),
        dict(name="N100", rtts=list(r100), starts=[0.0] * 100, t_end=30.0 / f, ddeint=False),
        dict(name="N1000", rtts=list(r1000), starts=[0.0] * 1000, t_end=30.0 / f, ddeint=False),
    ]
    return out


def _series(tr):
    return tr.t_s, tr.rate_pps.sum(axis=1), tr.queue_pkts[:, 0]


def _errors(t, S, q, ref):
    tr, Sr, qr = ref
    Sr_i = np.interp(t, tr, Sr)
    qr_i = np.interp(t, tr, qr)
    return dict(rel_rate_err=float(np.max(np.abs(S - Sr_i)) / np.max(Sr)),
                queue_err_pkts=float(np.max(np.abs(q - qr_i))),
                min_queue_pkts=float(np.min(q)))


def run_ecocc(case, **kw):
    t0 = time.perf_counter()
    net = dumbbell(C_PPS, case["rtts"], starts_s=case["starts"], initial_rate_pps=10.0)
    tr = simulate(net, "aecp", t_end_s=case["t_end"], r0_pps=10.0, output_dt_s=OUT_DT_S, **kw)
    wall = time.perf_counter() - t0
    return tr, wall


def run_jitc(case, t_out, rtol, atol):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "j.npz")
        args = dict(rtts=[float(r) for r in case["rtts"]], starts=[float(s) for s in case["starts"]],
                    t_end=case["t_end"], t_out=t_out.tolist(), rtol=rtol, atol=atol, out=out)
        t0 = time.perf_counter()
        try:
            p = subprocess.run([sys.executable, os.path.join(HERE, "external.py"), json.dumps(args)],
                               capture_output=True, text=True, timeout=JITC_TIMEOUT_S, cwd=d)
        except subprocess.TimeoutExpired:
            return dict(status="failed", message=f"time limit {JITC_TIMEOUT_S} s exceeded",
                        wall_s=time.perf_counter() - t0)
        wall = time.perf_counter() - t0
        if p.returncode != 0 or not os.path.exists(out):
            return dict(status="failed", message=(p.stderr or p.stdout)[-800:], wall_s=wall)
        d_ = np.load(out)
        Y = d_["Y"]
        info = dict(status="success", wall_s=wall, wall_in_process_s=float(d_["total_s"]),
                    compile_s=float(d_["compile_s"]), setup_s=float(d_["setup_s"]),
                    integrate_s=float(d_["integrate_s"]))
        if not np.all(np.isfinite(Y)):
            info.update(status="failed", message="non-finite output")
        return info, Y


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="shorter runs (smoke test)")
    ap.add_argument("--skip-jitcdde", action="store_true")
    ap.add_argument("--report-only", action="store_true", help="recompute targets and results.md from results.json")
    args = ap.parse_args()
    if args.report_only:
        with open(os.path.join(HERE, "results.json")) as fh:
            results = json.load(fh)
        results["targets"] = targets(results)
        _write(results)
        return
    results = dict(meta=dict(python=sys.version.split()[0], platform=platform.platform(), quick=args.quick,
                             cpu_count=os.cpu_count(), fixed_step_s=FIXED_STEP_S, output_dt_s=OUT_DT_S,
                             date=time.strftime("%Y-%m-%d %H:%M:%S")), cases=[])
    for case in cases(args.quick):
        name = case["name"]
        print(f"== {name}", flush=True)
        res = dict(name=name, n_flows=len(case["rtts"]), t_end_s=case["t_end"], runs={})
        ref_tr, ref_wall = run_ecocc(case, rtol=1e-10, max_step_s=0.0025)
        ref = _series(ref_tr)
        res["reference"] = dict(solver="ecocc adaptive rtol 1e-10, max_step 2.5 ms", wall_s=ref_wall,
                                status=ref_tr.status.value)
        t_out = ref[0]
        runs = [("ecocc adaptive (default rtol 1e-7)", dict()),
                ("ecocc adaptive rtol=atol=1e-8", dict(rtol=1e-8, atol=1e-8)),
                (f"ecocc fixed RK4 h={FIXED_STEP_S * 1e3:g} ms", dict(solver="fixed", step_s=FIXED_STEP_S))]
        for label, kw in runs:
            tr, wall = run_ecocc(case, **kw)
            t, S, q = _series(tr)
            r = dict(wall_s=wall, status=tr.status.value, nfev=tr.solver.get("nfev"),
                     n_steps=tr.solver.get("n_steps"), **_errors(t, S, q, ref))
            res["runs"][label] = r
            print(f"   {label}: {wall:.3f} s, rate err {r['rel_rate_err']:.2e}, queue err {r['queue_err_pkts']:.2e}",
                  flush=True)
        if not args.skip_jitcdde:
            for tol in (1e-8, 1e-6):
                label = _jitc_label(tol)
                out = run_jitc(case, t_out, tol, tol)
                if isinstance(out, tuple):
                    info, Y = out
                    N = len(case["rtts"])
                    act = (t_out[:, None] >= np.asarray(case["starts"])[None, :])
                    S = (np.exp(Y[:, :N]) * act).sum(axis=1)
                    if info["status"] == "success":
                        info.update(_errors(t_out, S, Y[:, N + 1], ref))
                else:
                    info = out
                res["runs"][label] = info
                print(f"   {label}: {info}", flush=True)
        if case["ddeint"]:
            for dt in (0.01,):
                label = f"ddeint grid {dt * 1e3:g} ms"
                try:
                    tt, Y, wall = external.run_ddeint(case["rtts"], case["starts"], case["t_end"], dt)
                    N = len(case["rtts"])
                    act = (tt[:, None] >= np.asarray(case["starts"])[None, :])
                    S = (np.exp(Y[:, :N]) * act).sum(axis=1)
                    info = dict(status="success" if np.all(np.isfinite(Y)) else "failed", wall_s=wall,
                                **_errors(tt, S, Y[:, N + 1], ref))
                except Exception as exc:  # recorded, not fatal
                    info = dict(status="failed", message=repr(exc)[:500])
                res["runs"][label] = info
                print(f"   {label}: {info}", flush=True)
        results["cases"].append(res)
        _write(results)
    results["throughput"] = throughput(args.quick)
    results["batch"] = batch_sweep(args.quick)
    results["targets"] = targets(results)
    _write(results)


def throughput(quick):
    """State updates per second of the fixed-step N=1000 run vs a plain NumPy update."""
    rng = np.random.default_rng(20260401)
    rtts = rng.uniform(0.01, 0.5, size=1000)
    t_end = 5.0 if quick else 30.0
    net = dumbbell(C_PPS, rtts, initial_rate_pps=10.0)
    t0 = time.perf_counter()
    tr = simulate(net, "aecp", t_end_s=t_end, r0_pps=10.0, solver="fixed", step_s=FIXED_STEP_S,
                  output_dt_s=OUT_DT_S)
    wall = time.perf_counter() - t0
    from ecocc import NetworkSystem, get_model
    n_state = NetworkSystem(get_model("aecp"), net, get_model("aecp").make_params(r0_pps=10.0), t_end).n
    steps = tr.solver["n_steps"]
    upd = n_state * steps / wall
    y = np.zeros(n_state)
    k = np.ones(n_state)
    t0 = time.perf_counter()
    for _ in range(steps):
        y += 1e-3 * k  # one array update per step: the floor of any NumPy stepping loop
    plain = n_state * steps / (time.perf_counter() - t0)
    return dict(fixed_step_updates_per_s=upd, plain_numpy_updates_per_s=plain, ratio=plain / upd,
                n_state=n_state, n_steps=steps, wall_s=wall)


NOTES = """
- jitcdde 1.8.3: same log-variable model; `adjust_diff()` (not `step_on_discontinuities`), `max_step` = smallest
  delay; the queue clamp is the smooth `conditional(dq, 0, conditional(q, 0, 0, dq, 1e-3), dq, 1e-3)`, so its queue
  dips ~0.01 packet below zero and its queue error is dominated by that smoothing (about 0.009 packet at every
  tolerance); staggered starts are a `conditional` in t of width 1e-4 s.  Its wall time includes building the
  symbolic model and the C compilation (run in a subprocess).
- ddeint 0.3.0: SciPy `odeint` between 10 ms output points with the past interpolated from those outputs; exact
  (discontinuous) clamp.  Its accuracy is limited by the output grid.
- ecocc adaptive, default settings (rtol 1e-7, queue atol 1e-4 packet): the queue error (~4e-3 packet for N4) is
  well above the local tolerance.  For N4 the step is pinned at the smallest delay (1236 steps of <= 50 ms, the
  same count at rtol 1e-8 with the default atol); capping the step at 10 ms only brings it to 2.5e-3, while
  rtol = atol = 1e-8 brings it to ~6e-5.  Separately, the adaptive error estimate does not see the interpolation
  error of its Hermite history: on y'(t) = -y(t-1) with constant history it takes 13 steps of length 1 at
  rtol 1e-12 and is off by 2.6e-3 (tests/test_fixed.py caps the reference's step for that reason).
- The fixed-step run uses h = 5 ms for every case (<= the smallest delay); its queue error is first order near
  the clamp (the crossing is not located).
"""


def _jitc_label(tol):
    return f"jitcdde rtol=atol={tol:.0e}".replace("e-0", "e-")  # "1e-8"


def batch_sweep(quick):
    """A sweep of alpha over B members of the N4 dumbbell: one batched fixed-step
    run vs B single adaptive runs (default settings) and B single fixed-step runs."""
    from ecocc.batch import simulate_batch
    B = 4 if quick else 16
    t_end = 10.0 if quick else 60.0
    alphas = np.linspace(1.0, 3.0, B)
    net = dumbbell(C_PPS, [0.05, 0.1, 0.2, 0.4], initial_rate_pps=10.0)
    t0 = time.perf_counter()
    ds = simulate_batch(net, "aecp", [dict(alpha_per_s=float(a), r0_pps=10.0) for a in alphas], t_end_s=t_end,
                        step_s=FIXED_STEP_S, output_dt_s=OUT_DT_S)
    wall_batch = time.perf_counter() - t0
    t0 = time.perf_counter()
    singles = [simulate(net, "aecp", t_end_s=t_end, r0_pps=10.0, alpha_per_s=float(a), output_dt_s=OUT_DT_S)
               for a in alphas]
    wall_adaptive = time.perf_counter() - t0
    t0 = time.perf_counter()
    fixed = [simulate(net, "aecp", t_end_s=t_end, r0_pps=10.0, alpha_per_s=float(a), output_dt_s=OUT_DT_S,
                      solver="fixed", step_s=FIXED_STEP_S) for a in alphas]
    wall_fixed = time.perf_counter() - t0
    dev_fixed = max(float(np.max(np.abs(ds.queue.values[b] - fixed[b].queue_pkts))) for b in range(B))
    dev_adapt = max(float(np.max(np.abs(ds.queue.values[b] - singles[b].queue_pkts))) for b in range(B))
    return dict(members=B, t_end_s=t_end, step_s=FIXED_STEP_S, wall_batch_s=wall_batch,
                wall_single_adaptive_total_s=wall_adaptive, wall_single_fixed_total_s=wall_fixed,
                speedup_vs_adaptive=wall_adaptive / wall_batch, speedup_vs_single_fixed=wall_fixed / wall_batch,
                max_queue_dev_vs_single_fixed_pkts=dev_fixed, max_queue_dev_vs_adaptive_pkts=dev_adapt,
                statuses=sorted(set(ds.status.values.tolist())))


def targets(results):
    out = {}
    by = {c["name"]: c for c in results["cases"]}
    for c in results["cases"]:  # results.json of earlier versions wrote "1e-08"
        for old in list(c["runs"]):
            if old.startswith("jitcdde") and "e-0" in old:
                c["runs"][old.replace("e-0", "e-")] = c["runs"].pop(old)

    def speed(case, ours, theirs):
        r = by[case]["runs"]
        if theirs not in r or r[theirs].get("status") != "success":
            return None
        return r[theirs]["wall_s"] / r[ours]["wall_s"]

    if "N4" in by:
        r = by["N4"]["runs"]
        ours = "ecocc adaptive (default rtol 1e-7)"
        best = None
        for lab in ("jitcdde rtol=atol=1e-8", "jitcdde rtol=atol=1e-6"):
            if lab in r and r[lab].get("status") == "success":
                # compare with the cheapest jitcdde run that is at least as accurate as ours
                if (r[lab]["rel_rate_err"] <= max(r[ours]["rel_rate_err"], 1e-12) * 1.0001
                        or best is None):
                    best = lab
        if best:
            sp = r[best]["wall_s"] / r[ours]["wall_s"]
            equal_acc = (r[ours]["rel_rate_err"] <= r[best]["rel_rate_err"]
                         and r[ours]["queue_err_pkts"] <= r[best]["queue_err_pkts"])
            out["N4 >= 2x faster than jitcdde at equal or better accuracy"] = dict(
                speedup=sp, against=best, ecocc_at_least_as_accurate=equal_acc, met=bool(sp >= 2 and equal_acc))
    if "N1000" in by:
        sp = speed("N1000", "ecocc adaptive rtol=atol=1e-8", "jitcdde rtol=atol=1e-8")
        r = by["N1000"]["runs"]
        fx = [k for k in r if k.startswith("ecocc fixed")][0]
        sp_fx = speed("N1000", fx, "jitcdde rtol=atol=1e-8")
        out["N1000 >= 20x faster than jitcdde at rtol=atol=1e-8"] = dict(
            speedup=sp, met=bool(sp is not None and sp >= 20),
            note=("ecocc adaptive at rtol=atol=1e-8 vs jitcdde at rtol=atol=1e-8"
                  if sp is not None else "jitcdde did not complete; see its run entry"),
            fixed_step_speedup=sp_fx,
            fixed_step_at_least_as_accurate=bool(
                sp_fx is not None and r[fx]["rel_rate_err"] <= r["jitcdde rtol=atol=1e-8"]["rel_rate_err"]
                and r[fx]["queue_err_pkts"] <= r["jitcdde rtol=atol=1e-8"]["queue_err_pkts"]))
    acc = {}
    for c in results["cases"]:
        r = c["runs"]["ecocc adaptive (default rtol 1e-7)"]
        acc[c["name"]] = dict(rel_rate_err=r["rel_rate_err"], queue_err_pkts=r["queue_err_pkts"],
                              met=bool(r["rel_rate_err"] <= 1e-6 and r["queue_err_pkts"] <= 1e-3))
    out["default accuracy 1e-6 rel aggregate rate and 1e-3 pkt queue"] = dict(
        per_case=acc, met=all(v["met"] for v in acc.values()))
    return out


def _write(results):
    with open(os.path.join(HERE, "results.json"), "w") as fh:
        json.dump(results, fh, indent=1, default=str)
    lines = ["# Benchmarks (AECP dumbbell)", "",
             f"Generated by `python benchmarks/run.py{' --quick' if results['meta']['quick'] else ''}` "
             f"on {results['meta']['date']} ({results['meta']['platform']}, Python {results['meta']['python']}).",
             "", "Errors against an ecocc reference (adaptive rtol 1e-10, max step 2.5 ms), on a 50 ms grid. "
             "Wall times end to end (jitcdde: symbolic set-up + C compilation + integration).", ""]
    for c in results["cases"]:
        ref = c["reference"]
        lines += [f"## {c['name']} ({c['n_flows']} flows, {c['t_end_s']:g} s)", "",
                  f"Reference: {ref['solver']}, {ref['wall_s']:.2f} s, {ref['status']}.", "",
                  "| run | status | wall (s) | vs ecocc adaptive | rel. aggregate rate err | queue err (pkt) | min queue (pkt) |",
                  "|---|---|---|---|---|---|---|"]
        base = c["runs"]["ecocc adaptive (default rtol 1e-7)"]["wall_s"]
        for lab, r in c["runs"].items():
            if r.get("status") == "success" or "rel_rate_err" in r:
                lines.append(f"| {lab} | {r['status']} | {r['wall_s']:.3f} | {r['wall_s'] / base:.2f}x | "
                             f"{r.get('rel_rate_err', float('nan')):.2e} | {r.get('queue_err_pkts', float('nan')):.2e} | "
                             f"{r.get('min_queue_pkts', float('nan')):.3g} |")
            else:
                msg = str(r.get("message", "")).replace("\n", " ").replace("|", "/")[:200]
                lines.append(f"| {lab} | {r.get('status')} | {r.get('wall_s', float('nan')):.3f} | | {msg} | | |")
        lines.append("")
    if "throughput" in results:
        th = results["throughput"]
        lines += ["## Throughput (fixed step, N=1000)", "",
                  f"{th['fixed_step_updates_per_s']:.3g} state-component updates/s ({th['n_state']} components x "
                  f"{th['n_steps']} RK4 steps in {th['wall_s']:.2f} s) vs {th['plain_numpy_updates_per_s']:.3g}/s "
                  f"for a plain NumPy `y += h*k` of the same size ({th['ratio']:.0f}x).", ""]
    if "batch" in results:
        bt = results["batch"]
        lines += ["## Batch sweep (N4, alpha in [1, 3])", "",
                  f"{bt['members']} members, {bt['t_end_s']:g} s, h = {bt['step_s'] * 1e3:g} ms: one `simulate_batch` run "
                  f"{bt['wall_batch_s']:.2f} s vs {bt['wall_single_adaptive_total_s']:.2f} s for the single adaptive runs "
                  f"({bt['speedup_vs_adaptive']:.1f}x) and {bt['wall_single_fixed_total_s']:.2f} s for the single fixed-step "
                  f"runs ({bt['speedup_vs_single_fixed']:.1f}x).  Max queue difference vs the single fixed-step runs "
                  f"{bt['max_queue_dev_vs_single_fixed_pkts']:.1e} packet, vs the adaptive runs "
                  f"{bt['max_queue_dev_vs_adaptive_pkts']:.1e} packet; statuses {bt['statuses']}.", ""]
    if "targets" in results:
        lines += ["## Targets", ""]
        for k, v in results["targets"].items():
            lines.append(f"- **{k}**: {'met' if v.get('met') else 'NOT met'} — "
                         + json.dumps({kk: vv for kk, vv in v.items() if kk != 'met'}, default=str))
        lines.append("")
    lines += ["## Notes", "", NOTES.strip(), ""]
    with open(os.path.join(HERE, "results.md"), "w") as fh:
        fh.write("\n".join(lines))


if __name__ == "__main__":
    main()
