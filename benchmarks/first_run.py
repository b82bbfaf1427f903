"""The first run after installing: N = 4 AECP dumbbell, 60 s, whole processes, ecocc against jitcdde.

ecocc: ``numba_case.py`` (the N4 case of ``run.py``: RTTs 50/100/200/400 ms, C = 15000 packets/s,
default rtol) in a fresh process with an empty kernel cache (``ECOCC_CACHE_DIR``, ``NUMBA_CACHE_DIR``:
a fresh temporary directory per run), so the kernel comes from the module ``setup.py build_ext``
compiled at install time (``ecocc/dde/shipped``), else it is generated and compiled now (which the
printed ``kernel_installed`` and ``numba_imported`` tell).  jitcdde: ``external.py`` (the same model,
rtol = atol = 1e-6, its C compilation included), each run a fresh process.  Both timed by this script from
spawn to exit; rounds interleaved; medians.

Usage: ``python benchmarks/first_run.py [--rounds 5]``; writes ``first_run.json`` and ``first_run.md``.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
RTTS = [0.05, 0.1, 0.2, 0.4]


def _timed(cmd, env, cwd=None):
    t0 = time.perf_counter()
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=cwd)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        raise RuntimeError(p.stderr[-2000:])
    return wall, p.stdout


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args(argv)
    tmp = tempfile.mkdtemp(prefix="ecocc-first-")
    ours, jit, infos = [], [], []
    for r in range(a.rounds):
        d = tempfile.mkdtemp(dir=tmp)
        env = dict(os.environ, ECOCC_CACHE_DIR=d, NUMBA_CACHE_DIR=os.path.join(d, "numba"))
        env.pop("ECOCC_AOT", None)
        w, out = _timed([sys.executable, os.path.join(HERE, "numba_case.py"),
                         json.dumps(dict(kind="dumbbell", rtts=RTTS, t_end=60.0))], env)
        info = json.loads(out.split("RESULT ", 1)[1])
        ours.append(w)
        infos.append(info)
        w, _ = _timed([sys.executable, os.path.join(HERE, "external.py"),
                       json.dumps(dict(rtts=RTTS, starts=[0.0] * 4, t_end=60.0,
                                       t_out=list(np.arange(0.0, 60.0 + 1e-9, 0.05)), rtol=1e-6, atol=1e-6,
                                       out=os.path.join(tmp, "j.npz")))], dict(os.environ), cwd=tmp)
        # (jitcdde builds its C module with setuptools in the working directory: not the checkout, whose
        # pyproject.toml is not for this setuptools)
        jit.append(w)
        print(f"round {r + 1}: ecocc {ours[-1]:.3f} s (installed kernel: {info['kernel_installed']}, numba imported: "
              f"{info['numba_imported']}), jitcdde {jit[-1]:.3f} s", flush=True)
    res = dict(case="N4 AECP dumbbell, 60 s, whole process, empty kernel caches", ecocc_s=ours, jitcdde_s=jit,
               median_ecocc_s=float(np.median(ours)), median_jitcdde_s=float(np.median(jit)),
               speedup=float(np.median(jit) / np.median(ours)), ecocc_runs=infos, loadavg=os.getloadavg(),
               date_utc=time.strftime("%Y-%m-%d %H:%M", time.gmtime()))
    with open(os.path.join(HERE, "first_run.json"), "w") as fh:
        json.dump(res, fh, indent=1)
    text = (f"# First run after installing: N4 dumbbell, 60 s, whole processes ({res['date_utc']} UTC)\n\n"
            f"ecocc (empty caches) median {res['median_ecocc_s']:.3f} s over {len(ours)} runs "
            f"(installed kernel: {sorted({i['kernel_installed'] for i in infos})}, numba imported: "
            f"{sorted({i['numba_imported'] for i in infos})}); jitcdde median {res['median_jitcdde_s']:.3f} s; "
            f"speedup {res['speedup']:.2f}x (target >= 3x).  Load average at the end: {res['loadavg']}.\n")
    with open(os.path.join(HERE, "first_run.md"), "w") as fh:
        fh.write(text)
    print(text)


if __name__ == "__main__":
    main()
