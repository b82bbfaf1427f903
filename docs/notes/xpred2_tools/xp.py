"""Counts and CPU of the single-run adaptive kernel on the scaling benchmark's network (docs/notes/xpred2.md).

Usage: ``PYTHONPATH=<tree> python xp.py MODEL N T_END [RTOL] [--save FILE] [--repeat K]``

Builds ``random_network(N, 1000)`` (seed 0, as benchmarks/scaling.py), the model at its default parameters, the
default atol, output every 1 s, and runs the compiled adaptive kernel (warm-up on a small network first, so the
timed runs load the compiled kernel), ``K`` times.  Prints, per run, the accepted steps, the rejected attempts,
the right-hand sides and, from the template's counters 6-10 (``<tree>``'s kernel writes them when passed 11
counters; a tree whose kernel does not leaves them 0), the attempts, the retakes at a located event (of them at a
release), the predicted attempts and those retaken; then the CPU seconds (``time.process_time``) and the load.
``--save FILE`` keeps the samples of the full state (``.npz``) for ``cmp.py``.
"""
import argparse
import os
import time

import numpy as np

from ecocc import random_network
from ecocc.dde import codegen, engine
from ecocc.models import get_model
from ecocc.simulate import output_grid
from ecocc.system import NetworkSystem


def run(model, n, t_end, rtol, links=1000):
    m = get_model(model)
    sysm = NetworkSystem(m, random_network(n, links, max_hops=5, seed=0), m.make_params(), t_end)
    te = output_grid(t_end, 1.0)
    gen, kw = engine.generic_args(sysm, t_end, rtol=rtol, atol=sysm.default_atol(), t_eval=te)
    fn, _ = codegen.kernel(gen, kw)
    kw["counters"] = np.zeros(11, dtype=np.int64)
    cpu0 = time.process_time()
    code = fn(*(kw[k] for k in engine.ADAPTIVE_ARGS))
    cpu = time.process_time() - cpu0
    return code, kw["counters"].copy(), cpu, te, kw["out_y"].copy()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("n", type=int)
    ap.add_argument("t_end", type=float)
    ap.add_argument("rtol", type=float, nargs="?", default=1e-7)
    ap.add_argument("--save")
    ap.add_argument("--repeat", type=int, default=1)
    a = ap.parse_args()
    run(a.model, 50, 1.0, a.rtol, links=5)  # warm-up: load (or compile) the kernel
    for _ in range(a.repeat):
        code, c, cpu, te, out = run(a.model, a.n, a.t_end, a.rtol)
        print(f"{a.model} N={a.n} T={a.t_end:g} rtol={a.rtol:g} code={code} steps={c[0]} rejected={c[1]} nfev={c[2]} "
              f"attempts={c[6]} retakes={c[7]} (release {c[8]}) predicted={c[9]} predicted_retaken={c[10]} "
              f"cpu={cpu:.2f} load={os.getloadavg()[0]:.2f}", flush=True)
    if a.save:
        np.savez(a.save, t=te, y=out)


if __name__ == "__main__":
    main()
