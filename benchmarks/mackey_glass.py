"""Mackey--Glass at rtol 1e-10 through the SymPy interface, whole processes: ecocc against jitcdde.

The equation is jitcdde's documented example (tau = 15, n = 10, beta = 0.25, gamma = 0.1, constant past 1,
t from 0 to 10000, outputs every 10), at rtol = atol = 1e-10.  Each run is a fresh Python process timed
by this script from spawn to exit (interpreter start-up, imports, building the equation, code generation,
compilation or loading of a cached kernel, integration, writing the result):

* ``jitcdde``: ``jitcdde(f)``, ``constant_past``, ``adjust_diff``, ``integrate`` at each output time (it
  compiles its C module in every process: it keeps no cache unless asked to save it);
* ``ecocc``, :func:`ecocc.dde.user.sympy_dde` with ``kernel="auto"`` (the default), in the states a
  machine can be in (``ECOCC_CACHE_DIR`` and ``NUMBA_CACHE_DIR`` in a temporary directory):

  - ``first use on the machine``: empty caches: compiles the shared integrator (once per machine, for
    every user DDE) and this DDE's right-hand side;
  - ``new DDE``: the shared integrator cached (another DDE ran before), this DDE's right-hand side not:
    compiles the right-hand side only (its files are deleted after each such run);
  - ``same DDE again (shared)``: both cached;
  - ``same DDE again (inline built)``: the DDE's whole kernel built once by ``numba.pycc``
    (``kernel="inline"``; that build is timed once, ``inline build``), which ``"auto"`` then loads
    without importing numba.

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
from ecocc.dde.user import sympy_dde, t, y
f = [{b} * y(0, t - {tau}) / (1 + y(0, t - {tau}) ** {n}) - {g} * y(0)]
ts = np.arange(0.0, {t_end} + 1e-9, 10.0)
sol = sympy_dde(f, history=[1.0]).solve({t_end}, t_eval=ts, rtol={rtol}, atol={rtol}, engine="numba",
                                        kernel="{kernel}")
assert sol.ok, sol.message
np.save(sys.argv[1], sol.y[:, 0])
print(sol.settings["kernel"], sol.settings["kernel_variant"])
"""


def _run(code, env, out, expect=None):
    """Wall time (s) of one process from spawn to exit; checks which kernel variant ran.  Run in a temporary
    directory: jitcdde builds its C module with setuptools in the working directory (the checkout's
    pyproject.toml is not for every setuptools)."""
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-c", code, out], env=env, capture_output=True, text=True,
                       cwd=os.path.dirname(out))
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        raise RuntimeError(p.stderr[-2000:])
    if expect is not None:
        name, variant = p.stdout.split()[-2:]
        if variant != expect:
            raise RuntimeError(f"expected the {expect} kernel, ran {variant}")
        return wall, name
    return wall


def _forget(cache, name):
    """Delete a generated module and numba's cache files of it under ``cache``."""
    import glob
    for f in glob.glob(os.path.join(cache, "**", f"{name}*"), recursive=True):
        os.remove(f)


def main(argv=None):
    import numpy as np
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5, help="runs of jitcdde and of each ecocc case (medians)")
    ap.add_argument("--cold-rounds", type=int, default=2, help="runs with empty caches")
    ap.add_argument("--t-end", type=float, default=10000.0)
    a = ap.parse_args(argv)
    fmt = dict(b=BETA, tau=TAU, n=N_EXP, g=GAMMA, rtol=RTOL, t_end=a.t_end)
    base = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    base.pop("ECOCC_AOT", None)
    tmp = tempfile.mkdtemp(prefix="ecocc-mg-")

    def cache_env():
        d = tempfile.mkdtemp(dir=tmp)
        return d, dict(base, ECOCC_CACHE_DIR=d, NUMBA_CACHE_DIR=os.path.join(d, "numba"))

    code = {k: ECOCC.format(kernel=k, **fmt) for k in ("auto", "inline")}
    keys = ("jitcdde", "ecocc: first use on the machine", "ecocc: new DDE", "ecocc: same DDE again (shared)",
            "ecocc: same DDE again (inline built)", "ecocc: inline build")
    times = {k: [] for k in keys}
    # a machine where another DDE ran: the shared integrator is cached
    shared_dir, shared_env = cache_env()
    other = dict(fmt, g=0.11)
    _run(ECOCC.format(kernel="auto", **other), shared_env, os.path.join(tmp, "o.npy"), "shared")
    # the inline kernel, built once (timed)
    inline_dir, inline_env = cache_env()
    w, _ = _run(code["inline"], inline_env, os.path.join(tmp, "i.npy"), "inline")
    times["ecocc: inline build"].append(w)
    outs = {}
    for r in range(max(a.rounds, a.cold_rounds)):
        if r < a.cold_rounds:
            _, env = cache_env()
            times["ecocc: first use on the machine"].append(
                _run(code["auto"], env, os.path.join(tmp, "c.npy"), "shared")[0])
        if r < a.rounds:
            outs["jitcdde"] = os.path.join(tmp, "j.npy")
            times["jitcdde"].append(_run(JITCDDE.format(**fmt), base, outs["jitcdde"]))
            w, name = _run(code["auto"], shared_env, os.path.join(tmp, "n.npy"), "shared")
            times["ecocc: new DDE"].append(w)
            outs["ecocc"] = os.path.join(tmp, "s.npy")
            times["ecocc: same DDE again (shared)"].append(_run(code["auto"], shared_env, outs["ecocc"], "shared")[0])
            _forget(shared_dir, name)
            times["ecocc: same DDE again (inline built)"].append(
                _run(code["auto"], inline_env, os.path.join(tmp, "w.npy"), "inline")[0])
        print(f"round {r + 1}: " + ", ".join(f"{k} {v[-1]:.2f} s" for k, v in times.items() if len(v) > r),
              flush=True)
    med = {k: float(np.median(v)) for k, v in times.items() if v}
    J = np.load(outs["jitcdde"])
    E = np.load(outs["ecocc"])
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
