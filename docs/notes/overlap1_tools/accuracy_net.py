"""Accuracy at simulate's defaults (rtol 1e-7, default atol) with and without overlap on a random network, against
a tight reference: the compiled kernel without overlap (the method of steps, which matches the NumPy solver to
round-off on the same mesh: tests/test_codegen.py) at rtol 1e-10, atol / 1000.  The error rule of
docs/notes/overlap1_tools/accuracy.py (tolerance units, max over samples and components).

    PYTHONPATH=. python docs/notes/overlap1_tools/accuracy_net.py N T MODEL [--out FILE]"""
import argparse
import json
import os
import time

import numpy as np

from ecocc import random_network
from ecocc.dde import engine
from ecocc.models import get_model
from ecocc.simulate import output_grid
from ecocc.system import NetworkSystem

ap = argparse.ArgumentParser()
ap.add_argument("n", type=int)
ap.add_argument("t", type=float)
ap.add_argument("model")
ap.add_argument("--out", default=None)
a = ap.parse_args()
net = random_network(a.n, min(1000, a.n // 3), max_hops=5, seed=0)
m = get_model(a.model)
sysm = NetworkSystem(m, net, m.make_params(), a.t)
te = output_grid(a.t, a.t / 200)
atol = sysm.default_atol()
t0 = time.perf_counter()
tight = engine.solve_adaptive(sysm, a.t, rtol=1e-10, atol=atol * 1e-3, t_eval=te)
res = dict(n=a.n, t_end=a.t, model=a.model, tight=dict(steps=tight.n_steps, nfev=tight.nfev, status=str(tight.status),
                                                        wall_s=time.perf_counter() - t0))
sc = atol + 1e-7 * np.abs(tight.y)
for ov in (False, True):
    t0 = time.perf_counter()
    got = engine.solve_adaptive(sysm, a.t, rtol=1e-7, atol=atol, t_eval=te, overlap=ov)
    e = np.abs(got.y - tight.y) / sc
    i, j = np.unravel_index(int(np.argmax(e)), e.shape)
    res["on" if ov else "off"] = dict(steps=got.n_steps, rejected=got.n_rejected, nfev=got.nfev,
                                      wall_s=time.perf_counter() - t0, err=float(e.max()),
                                      err_q99=float(np.quantile(e.max(axis=0), 0.99)), worst_t=float(te[i]),
                                      worst_comp=int(j), status=str(got.status))
res["load1"] = os.getloadavg()[0]
print(json.dumps(res))
if a.out:
    with open(a.out, "w") as f:
        json.dump(res, f, indent=1)
