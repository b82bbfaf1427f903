"""A 100 x 100 stability map by simulation, 60 s per point, for every model the generated kernels serve.

``python benchmarks/map_models.py [--n 100] [--t-end-s 60] [--models aecp,petcp] [--out benchmarks/map_models.json]``

The public :func:`ecocc.batch.simulate_map` (engine "numba": the lock-step kernel generated from the model's
laws, :mod:`ecocc.dde.lanes`; default rtol 1e-7, steps past the smallest delay) on the 4-flow dumbbell of
``benchmarks/run.py`` (15,000 packets/s, RTTs 50/100/200/400 ms, flows starting at 10 packets/s): x = the
model's main gain from 0.25 to 3 times its default, y = every RTT scaled by 0.25 to 4.  The last 10 s decide
the verdict.  Each model's kernel is built (or loaded) by a one-point map first, timed separately
(``first_use_s``: the generation and compilation on a machine where it was never built); ``wall_s`` is the
timed map in the same process (the kernel loaded), ``cpu_s`` the processor time this process used for it
(all threads): on a shared machine the wall time depends on the other processes, the processor time much less.  Results are written to a JSON file and a Markdown table
next to it; the machine and its load (``os.getloadavg``) are recorded, since the machine may be shared.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

#: the numeric parameter on the x axis of each model's map (its main gain)
#: (Reno and HSTCP have no gain of their own: RED's p_max, the axis of the classic RED stability maps)
GAIN = {"aecp": "alpha_per_s", "cltcp": "alpha_per_s", "petcp": "a_pps2", "symbiosis": "epsilon_per_s",
        "fast": "alpha_pkts", "reno": "red_p_max", "hstcp": "red_p_max", "stcp": "a_pkts_per_ack", "xcp": "alpha"}
C_PPS = 15000.0


def one_map(name, n, t_end):
    from ecocc import dumbbell
    from ecocc.batch import REGIMES, simulate_map
    from ecocc.models import get_model
    m = get_model(name)
    g0 = getattr(m.make_params(), GAIN[name])
    net = dumbbell(C_PPS, [0.05, 0.1, 0.2, 0.4], initial_rate_pps=10.0)
    kw = dict(x_name=GAIN[name], y_name="rtt_scale", window_s=10.0, engine="numba", rtol=1e-7)
    t0 = time.perf_counter()
    simulate_map(net, name, x_values=[g0], y_values=[1.0], t_end_s=12.0, **kw)  # build or load the kernel
    first = time.perf_counter() - t0
    load0 = os.getloadavg()
    t0 = time.perf_counter()
    c0 = time.process_time()
    ds = simulate_map(net, name, x_values=np.linspace(0.25, 3.0, n) * g0, y_values=np.linspace(0.25, 4.0, n),
                      t_end_s=t_end, **kw)
    wall = time.perf_counter() - t0
    cpu = time.process_time() - c0
    st = ds.status.values.astype(str)
    return dict(model=name, x_name=GAIN[name], points=int(st.size), t_end_s=t_end, wall_s=wall, cpu_s=cpu,
                simulate_map_wall_s=float(ds.attrs["wall_s"]), first_use_s=first,
                n_success=int((st == "success").sum()), n_failed=int((st == "failed").sum()),
                n_settled=int(ds.stable.values.sum()), mean_steps=float(ds.n_steps.values.mean()),
                regimes={name_: int((ds.regime.values == code).sum()) for code, name_ in REGIMES.items()},
                kernel=ds.attrs["kernel"], solver=ds.attrs["solver"], loadavg_before=load0,
                loadavg_after=os.getloadavg())


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--t-end-s", type=float, default=60.0)
    ap.add_argument("--models", default=",".join(GAIN))
    ap.add_argument("--out", default=str(HERE / "map_models.json"))
    a = ap.parse_args()
    out = Path(a.out)
    res = dict(machine=dict(cpus=os.cpu_count(), affinity=len(os.sched_getaffinity(0)), python=sys.version.split()[0],
                            platform=platform.platform()), n=a.n, t_end_s=a.t_end_s, maps=[])
    for name in a.models.split(","):
        r = one_map(name, a.n, a.t_end_s)
        res["maps"].append(r)
        print(f"{name}: {r['points']} points in {r['wall_s']:.1f} s ({r['cpu_s']:.1f} s of CPU; first use {r['first_use_s']:.1f} s), "
              f"{r['n_settled']} settled, {r['n_failed']} failed, regimes {r['regimes']}, mean steps {r['mean_steps']:.0f}, load "
              f"{r['loadavg_before'][0]:.1f}", flush=True)
        out.write_text(json.dumps(res, indent=1))
    lines = [f"# {a.n} x {a.n} maps by simulation, {a.t_end_s:g} s per point (benchmarks/map_models.py)", "",
             f"machine: {res['machine']}", "",
             "| model | x axis | points | wall (s) | CPU (s) | first use (s) | settled | queue at a bound, rates changing | failed | mean steps | load avg (1 min) |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in res["maps"]:
        lines.append(f"| {r['model']} | {r['x_name']} | {r['points']} | {r['wall_s']:.1f} | {r.get('cpu_s', float('nan')):.1f} | "
                     f"{r['first_use_s']:.1f} | "
                     f"{r['n_settled']} | {r.get('regimes', {}).get('queue_at_bound_rates_changing', '-')} | {r['n_failed']} | {r['mean_steps']:.0f} | {r['loadavg_before'][0]:.1f} |")
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
