"""The install-time kernel against numba's JIT of the same generated source, and the overlap option.

Why: the kernels compiled at install time (``numba.pycc``, :mod:`ecocc.dde.aot`) and numba's JIT compile the
same Python function, but LLVM's inlining decisions can differ between the two builds.  After the single
kernel's overlap mode was merged, ``numba.pycc`` stopped inlining the generated right-hand side into the
adaptive kernel and the install-time module ran 2.4x slower than the JIT (0.174 s of CPU against 0.073 s on the
case below) while every test passed; the right-hand side is now ``forceinline``.  This benchmark guards it.

Case: AECP on a dumbbell of 1,000 packets/s with 4 flows of RTT 1 ms, 60 s, ``simulate(engine="numba")`` at the
defaults (rtol 1e-7): 60,002 steps capped by the smallest delay, about 360,000 right-hand sides, where the cost
of a call between the kernel and its right-hand side shows; and the same with ``overlap=True``.

Each configuration (``ECOCC_AOT=1``: the install-time module where its stamp matches, else one built by
``numba.pycc`` on first use -- both ``numba.pycc`` builds; ``ECOCC_AOT=0``: numba's JIT; overlap off and on) runs in a fresh child process with its own kernel cache (a warm-up run that builds the
kernel, then ``--repeats`` timed runs: thread CPU time of the ``simulate`` call, so another process's load
inflates it less than wall time); ``--rounds`` rounds alternate the configurations.  Reported: the median over
all timed runs of a configuration and the ratio AOT / JIT from the same invocation.

Usage: ``python benchmarks/aot_vs_jit.py [--rounds 2] [--repeats 9] [--out benchmarks/aot_vs_jit]``; writes
``OUT.json`` and ``OUT.md``.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CONFIGS = [(aot, ov) for ov in (False, True) for aot in ("1", "0")]


def child(repeats: int, overlap: bool) -> None:
    """One configuration in this process: a warm-up run, then ``repeats`` timed runs; prints JSON."""
    import ecocc
    from ecocc.network import dumbbell
    net = dumbbell(1000.0, [0.001] * 4)

    def run():
        t = time.thread_time()
        tr = ecocc.simulate(net, "aecp", t_end_s=60.0, engine="numba", overlap=overlap)
        return time.thread_time() - t, tr

    run()
    times = []
    for _ in range(repeats):
        dt, tr = run()
        times.append(dt)
    print(json.dumps({"cpu_s": times, "steps": tr.solver["n_steps"], "nfev": tr.solver["nfev"],
                      "kernel": tr.solver.get("kernel"), "status": tr.status.value}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=9)
    ap.add_argument("--out", default=os.path.join(HERE, "aot_vs_jit"))
    ap.add_argument("--child", nargs=2, metavar=("REPEATS", "OVERLAP"), help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        child(int(a.child[0]), a.child[1] == "1")
        return
    caches = {c: tempfile.mkdtemp(prefix="ecocc-aotjit-") for c in CONFIGS}
    res = {c: dict(cpu_s=[]) for c in CONFIGS}
    load0 = os.getloadavg()[0]
    for _ in range(a.rounds):
        for c in CONFIGS:
            aot, ov = c
            env = dict(os.environ, ECOCC_AOT=aot, ECOCC_CACHE_DIR=caches[c], NUMBA_CACHE_DIR=caches[c] + "/numba",
                       PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
            p = subprocess.run([sys.executable, __file__, "--child", str(a.repeats), "1" if ov else "0"], env=env,
                               capture_output=True, text=True, check=True)
            d = json.loads(p.stdout.strip().splitlines()[-1])
            res[c]["cpu_s"] += d.pop("cpu_s")
            res[c].update(d)
    load1 = os.getloadavg()[0]
    rows = []
    for ov in (False, True):
        med = {aot: statistics.median(res[(aot, ov)]["cpu_s"]) for aot in ("1", "0")}
        r = res[("1", ov)]
        rows.append(dict(overlap=ov, aot_cpu_s=med["1"], jit_cpu_s=med["0"], ratio_aot_jit=med["1"] / med["0"],
                         steps=r["steps"], nfev=r["nfev"], kernel=r["kernel"], status=r["status"],
                         n_runs=len(r["cpu_s"])))
    meta = dict(when=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), python=platform.python_version(),
                cpus=os.cpu_count(), load1_start=load0, load1_end=load1, rounds=a.rounds, repeats=a.repeats,
                command="python benchmarks/aot_vs_jit.py " + " ".join(sys.argv[1:]))
    with open(a.out + ".json", "w") as fh:
        json.dump(dict(meta=meta, rows=rows), fh, indent=1)
    lines = [f"# Install-time kernel (numba.pycc) against numba's JIT, AECP dumbbell at RTT 1 ms, 60 s ({meta['when']})", "",
             f"`{meta['command']}`; Python {meta['python']}, {meta['cpus']} CPUs, load average (1 min) "
             f"{load0:.2f} at the start, {load1:.2f} at the end.  Thread CPU time of the `simulate` call, medians "
             f"of {a.rounds} x {a.repeats} runs per configuration after a warm-up run in each child process.", "",
             "| overlap | steps | rhs evaluations | AOT (s) | JIT (s) | AOT / JIT |", "|---|---|---|---|---|---|"]
    lines += [f"| {r['overlap']} | {r['steps']:,} | {r['nfev']:,} | {r['aot_cpu_s']:.4f} | {r['jit_cpu_s']:.4f} | "
              f"{r['ratio_aot_jit']:.2f} |" for r in rows]
    with open(a.out + ".md", "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
