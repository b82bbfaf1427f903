"""Mackey--Glass at rtol 1e-10 through the SymPy interface, whole processes: ecocc against jitcdde.

The equation is jitcdde's documented example (tau = 15, n = 10, beta = 0.25, gamma = 0.1, constant past 1,
t from 0 to 10000, outputs every 10), at rtol = atol = 1e-10.  Each run is a fresh Python process timed
by this script from spawn to exit (interpreter start-up, imports, building the equation, code generation,
compilation or loading of a cached kernel, integration, writing the result):

* ``jitcdde``: ``jitcdde(f)``, ``constant_past``, ``adjust_diff``, ``integrate`` at each output time (it
  compiles its C module in every process: it keeps no cache unless asked to save it);
* ``ecocc cold``: :func:`ecocc.dde.sympy_dde.sympy_dde` with empty kernel caches (``ECOCC_CACHE_DIR``,
  ``NUMBA_CACHE_DIR`` fresh temporary directories): the first run on a machine, which compiles the kernel
  (default mode: ``numba.pycc`` into the cache; ``ECOCC_AOT=0``: numba's JIT);
* ``ecocc warm``: the same with the caches the cold run wrote.

The runs of the cases are interleaved (one of each per round), so that the load of the machine hits them
alike; the ratio is of the medians.  The first 200 time units of both solutions are compared (the
attractor is chaotic: beyond that the two solvers' tolerance-sized differences grow to O(1)).

Usage: ``python benchmarks/mackey_glass.py [--rounds 5] [--cold-rounds 3] [--t-end 10000]``; writes
``mackey_glass.json`` and ``mackey_glass.md`` next to this file.
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

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TAU, N_EXP, BETA, GAMMA = 15.0, 10, 0.25, 0.1
RTOL = 1e-10

JITCDDE = """
import sys, numpy as np
from jitcdde import jitcdde, y, t
f = [{b} * y(0, t - {tau}) / (1 + y(0, t - {tau}) ** {n}) - {g} * y(0)]
dde = jitcdde(f, verbose=False)
dde.constant_past([1.0])
dde.set_integration_parameters(rtol={rtol}, atol={rtol})
dde.adjust_diff()
ts = np.arange(0.0, {t_end} + 1e-9, 10.0)
Y = np.array([dde.integrate(tt)[0] if tt > 0 else 1.0 for tt in ts])
np.save(sys.argv[1], Y)
"""

ECOCC = """
import sys, numpy as np
from ecocc.dde.sympy_dde import sympy_dde, t, y
f = [{b} * y(0, t - {tau}) / (1 + y(0, t - {tau}) ** {n}) - {g} * y(0)]
ts = np.arange(0.0, {t_end} + 1e-9, 10.0)
sol = sympy_dde(f, history=[1.0]).solve({t_end}, t_eval=ts, rtol={rtol}, atol={rtol}, engine="numba")
assert sol.ok, sol.message
np.save(sys.argv[1], sol.y[:, 0])
"""


def _run(code, env, out):
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-c", code, out], env=env, capture_output=True, text=True, cwd=ROOT)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        raise RuntimeError(p.stderr[-2000:])
    return wall


def main(argv=None):
    import numpy as np
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5, help="runs of jitcdde and of warm ecocc (medians)")
    ap.add_argument("--cold-rounds", type=int, default=3, help="runs of each cold ecocc mode")
    ap.add_argument("--t-end", type=float, default=10000.0)
    a = ap.parse_args(argv)
    fmt = dict(b=BETA, tau=TAU, n=N_EXP, g=GAMMA, rtol=RTOL, t_end=a.t_end)
    base = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    base.pop("ECOCC_AOT", None)
    tmp = tempfile.mkdtemp(prefix="ecocc-mg-")
    times = {k: [] for k in ("jitcdde", "ecocc cold (pycc)", "ecocc cold (jit)", "ecocc warm (pycc)",
                             "ecocc warm (jit)")}
    warm_env = {}
    for mode, aot in (("pycc", "1"), ("jit", "0")):
        d = tempfile.mkdtemp(dir=tmp)
        warm_env[mode] = dict(base, ECOCC_CACHE_DIR=d, NUMBA_CACHE_DIR=os.path.join(d, "numba"), ECOCC_AOT=aot)
    outs = {}
    for r in range(max(a.rounds, a.cold_rounds)):
        if r < a.rounds:
            outs["jitcdde"] = os.path.join(tmp, "j.npy")
            times["jitcdde"].append(_run(JITCDDE.format(**fmt), base, outs["jitcdde"]))
        for mode, aot in (("pycc", "1"), ("jit", "0")):
            if r < a.cold_rounds:
                d = tempfile.mkdtemp(dir=tmp)
                env = dict(base, ECOCC_CACHE_DIR=d, NUMBA_CACHE_DIR=os.path.join(d, "numba"), ECOCC_AOT=aot)
                times[f"ecocc cold ({mode})"].append(_run(ECOCC.format(**fmt), env, os.path.join(tmp, "c.npy")))
                if r == 0:
                    warm_env[mode] = env  # its caches serve the warm runs
            if r < a.rounds:
                outs[mode] = os.path.join(tmp, f"w{mode}.npy")
                times[f"ecocc warm ({mode})"].append(_run(ECOCC.format(**fmt), warm_env[mode], outs[mode]))
        print(f"round {r + 1}: " + ", ".join(f"{k} {v[-1]:.2f} s" for k, v in times.items() if len(v) > r),
              flush=True)
    med = {k: float(np.median(v)) for k, v in times.items() if v}
    J = np.load(outs["jitcdde"])
    E = np.load(outs["pycc"])
    k200 = np.arange(0.0, a.t_end + 1e-9, 10.0) <= 200.0
    res = dict(case=dict(equation="Mackey-Glass", tau=TAU, n=N_EXP, beta=BETA, gamma=GAMMA, rtol=RTOL, atol=RTOL,
                         t_end=a.t_end, output_every=10.0),
               machine=dict(python=sys.version.split()[0], platform=platform.platform(), cpus=os.cpu_count(),
                            loadavg_start=os.getloadavg()),
               runs_s=times, median_s=med,
               ratio_vs_jitcdde={k: med[k] / med["jitcdde"] for k in med if k != "jitcdde"},
               max_abs_diff_vs_jitcdde_t_le_200=float(np.abs(E[k200] - J[k200]).max()),
               date_utc=time.strftime("%Y-%m-%d %H:%M", time.gmtime()))
    with open(os.path.join(HERE, "mackey_glass.json"), "w") as fh:
        json.dump(res, fh, indent=1)
    lines = [f"# Mackey-Glass, rtol {RTOL:g}, t in [0, {a.t_end:g}], whole processes ({res['date_utc']} UTC)", "",
             f"Machine: {res['machine']['cpus']} CPUs, load average at start {res['machine']['loadavg_start']}", "",
             "| case | runs | median (s) | / jitcdde |", "|---|---|---|---|"]
    for k, v in times.items():
        if v:
            ratio = "1" if k == "jitcdde" else f"{med[k] / med['jitcdde']:.2f}"
            lines.append(f"| {k} | {len(v)} | {med[k]:.2f} | {ratio} |")
    lines += ["", f"max |ecocc - jitcdde| for t <= 200: {res['max_abs_diff_vs_jitcdde_t_le_200']:.2g}", ""]
    with open(os.path.join(HERE, "mackey_glass.md"), "w") as fh:
        fh.write("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
