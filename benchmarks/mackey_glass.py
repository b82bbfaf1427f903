"""Mackey--Glass at rtol 1e-10 through the SymPy interface, whole processes: ecocc against jitcdde.

The equation is jitcdde's documented example (tau = 15, n = 10, beta = 0.25, gamma = 0.1, constant past 1,
t from 0 to 10000, outputs every 10), at rtol = atol = 1e-10.  Each run is a fresh Python process timed
by this script from spawn to exit (interpreter start-up, imports, building the equation, code generation,
compilation or loading of a cached kernel, integration, writing the result):

* ``jitcdde``: ``jitcdde(f)``, ``constant_past``, ``adjust_diff``, ``integrate`` at each output time (it
  compiles its C module in every process: it keeps no cache unless asked to save it);
* ``ecocc``, :func:`ecocc.dde.user.sympy_dde` with ``kernel="auto"`` (the default), in the states a
  machine can be in (``ECOCC_CACHE_DIR`` and ``NUMBA_CACHE_DIR`` in a temporary directory):

  - ``first use after install``: empty caches, the shared integrator built at install time
    (``ecocc.dde.shipped._userint_aot``, :mod:`ecocc.dde.userint`; this script builds it into the checkout
    first if it is missing, and times that build: ``install-time build of the shared integrator``):
    compiles this DDE's right-hand side only;
  - ``first use, no install-time build``: empty caches and ``ECOCC_AOT=0``: numba's JIT compiles the shared
    integrator (once per machine, for every user DDE, into numba's cache) and this DDE's right-hand side;
  - ``new DDE, no install-time build``: ``ECOCC_AOT=0``, the JIT integrator cached (another DDE ran before),
    this DDE's right-hand side not (its files are deleted after each such run);
  - ``same DDE again (installed integrator)``: the right-hand side cached;
  - ``same DDE again (inline built)``: the DDE's whole kernel built once by ``numba.pycc``
    (``kernel="inline"``; that build is timed once, ``inline build``), which ``"auto"`` then loads
    without importing numba.

Each ecocc process also reports the wall time of its ``solve`` call (right-hand side loaded or compiled,
integration); the pair ``same DDE again`` installed/inline shows the cost of calling the right-hand side
through a function pointer instead of inlining it.

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
print(sol.settings["kernel"], sol.settings["kernel_variant"], sol.settings.get("compiled"), sol.wall_s)
"""


def _run(code, env, out, expect=None, compiled=None):
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
        name, variant, how, solve_s = p.stdout.split()[-4:]
        if variant != expect:
            raise RuntimeError(f"expected the {expect} kernel, ran {variant}")
        if compiled is not None and how != compiled:
            raise RuntimeError(f"expected the {compiled} shared integrator, ran {how}")
        SOLVE_S.setdefault(_CASE[0], []).append(float(solve_s))
        return wall, name
    return wall


SOLVE_S: dict = {}
_CASE = [""]


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
    load_start = os.getloadavg()

    def cache_env():
        d = tempfile.mkdtemp(dir=tmp)
        return d, dict(base, ECOCC_CACHE_DIR=d, NUMBA_CACHE_DIR=os.path.join(d, "numba"))

    code = {k: ECOCC.format(kernel=k, **fmt) for k in ("auto", "inline")}
    keys = ("jitcdde", "ecocc: first use after install", "ecocc: first use, no install-time build",
            "ecocc: new DDE, no install-time build", "ecocc: same DDE again (installed integrator)",
            "ecocc: same DDE again (inline built)", "ecocc: inline build",
            "install-time build of the shared integrator")
    times = {k: [] for k in keys}
    jit = dict(ECOCC_AOT="0")
    # the install-time module of the shared integrator (built into the checkout if missing: timed)
    probe = subprocess.run([sys.executable, "-c", "from ecocc.dde import userint; print(userint.installed()[0] is not None)"],
                           env=base, capture_output=True, text=True, cwd=tmp)
    if probe.stdout.strip() != "True":
        bdir, benv = cache_env()
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "from pathlib import Path; import ecocc.dde.userint as u; "
                        f"u.compile_installed(Path({os.path.join(ROOT, 'ecocc', 'dde', 'shipped')!r}), quiet=True)"],
                       env=benv, check=True, cwd=tmp)
        times["install-time build of the shared integrator"].append(time.perf_counter() - t0)

    def run(case, *args, **kw):
        _CASE[0] = case
        return _run(*args, **kw)

    # a machine where another DDE ran without the install-time module: the JIT integrator is cached
    shared_dir, shared_env = cache_env()
    jit_env = dict(shared_env, **jit)
    other = dict(fmt, g=0.11)
    run("warm-up", ECOCC.format(kernel="auto", **other), jit_env, os.path.join(tmp, "o.npy"), "shared", "jit")
    # the inline kernel, built once (timed)
    inline_dir, inline_env = cache_env()
    w, _ = run("ecocc: inline build", code["inline"], inline_env, os.path.join(tmp, "i.npy"), "inline")
    times["ecocc: inline build"].append(w)
    inst_dir, inst_env = cache_env()
    outs = {}
    for r in range(max(a.rounds, a.cold_rounds)):
        if r < a.cold_rounds:
            _, env = cache_env()
            k = "ecocc: first use, no install-time build"
            times[k].append(run(k, code["auto"], dict(env, **jit), os.path.join(tmp, "c.npy"), "shared", "jit")[0])
        if r < a.rounds:
            outs["jitcdde"] = os.path.join(tmp, "j.npy")
            times["jitcdde"].append(_run(JITCDDE.format(**fmt), base, outs["jitcdde"]))
            _, env = cache_env()
            k = "ecocc: first use after install"
            times[k].append(run(k, code["auto"], env, os.path.join(tmp, "f.npy"), "shared", "installed")[0])
            k = "ecocc: new DDE, no install-time build"
            w, name = run(k, code["auto"], jit_env, os.path.join(tmp, "n.npy"), "shared", "jit")
            times[k].append(w)
            _forget(shared_dir, name)
            outs["ecocc"] = os.path.join(tmp, "s.npy")
            k = "ecocc: same DDE again (installed integrator)"
            if r == 0:  # its right-hand side into this cache
                run("warm-up", code["auto"], inst_env, outs["ecocc"], "shared", "installed")
            times[k].append(run(k, code["auto"], inst_env, outs["ecocc"], "shared", "installed")[0])
            k = "ecocc: same DDE again (inline built)"
            times[k].append(run(k, code["auto"], inline_env, os.path.join(tmp, "w.npy"), "inline")[0])
        print(f"round {r + 1}: " + ", ".join(f"{k} {v[-1]:.2f} s" for k, v in times.items() if len(v) > r),
              flush=True)
    med = {k: float(np.median(v)) for k, v in times.items() if v}
    J = np.load(outs["jitcdde"])
    E = np.load(outs["ecocc"])
    k200 = np.arange(0.0, a.t_end + 1e-9, 10.0) <= 200.0
    res = dict(case=dict(equation="Mackey-Glass", tau=TAU, n=N_EXP, beta=BETA, gamma=GAMMA, rtol=RTOL, atol=RTOL,
                         t_end=a.t_end, output_every=10.0),
               machine=dict(python=sys.version.split()[0], platform=platform.platform(), cpus=os.cpu_count(),
                            loadavg_start=load_start, loadavg_end=os.getloadavg()),
               runs_s=times, median_s=med, solve_call_s={k: v for k, v in SOLVE_S.items() if k != "warm-up"},
               solve_call_median_s={k: float(np.median(v)) for k, v in SOLVE_S.items() if k != "warm-up"},
               ratio_vs_jitcdde={k: med[k] / med["jitcdde"] for k in med if k != "jitcdde"},
               max_abs_diff_vs_jitcdde_t_le_200=float(np.abs(E[k200] - J[k200]).max()),
               date_utc=time.strftime("%Y-%m-%d %H:%M", time.gmtime()))
    with open(os.path.join(HERE, "mackey_glass.json"), "w") as fh:
        json.dump(res, fh, indent=1)
    lines = [f"# Mackey-Glass, rtol {RTOL:g}, t in [0, {a.t_end:g}], whole processes ({res['date_utc']} UTC)", "",
             f"Machine: {res['machine']['cpus']} CPUs, load average at start {res['machine']['loadavg_start']}", "",
             "| case | runs | median (s) | / jitcdde | median of solve() in the process (s) |",
             "|---|---|---|---|---|"]
    for k, v in times.items():
        if v:
            ratio = "1" if k == "jitcdde" else f"{med[k] / med['jitcdde']:.2f}"
            sc = f"{res['solve_call_median_s'][k]:.2f}" if k in res["solve_call_median_s"] else ""
            lines.append(f"| {k} | {len(v)} | {med[k]:.2f} | {ratio} | {sc} |")
    lines += ["", f"Load average at the end {res['machine']['loadavg_end']}.", "",
              f"max |ecocc - jitcdde| for t <= 200: {res['max_abs_diff_vs_jitcdde_t_le_200']:.2g}", ""]
    with open(os.path.join(HERE, "mackey_glass.md"), "w") as fh:
        fh.write("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
