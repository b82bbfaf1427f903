"""Accuracy of the default run against a tight reference (rtol 1e-10), same engine (scale helper).
usage: acc.py model N tag [rtol]  -> saves /tmp/scale/acc_{model}_{N}_{tag}.npz"""
import sys, time
import numpy as np
from ecocc import random_network, simulate
model, N, tag = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rtol = float(sys.argv[4]) if len(sys.argv) > 4 else 1e-7
net = random_network(N, 1000, max_hops=5, seed=0)
atol = None
if len(sys.argv) > 5:
    from ecocc.models import get_model
    from ecocc.system import NetworkSystem
    mm = get_model(model)
    atol = NetworkSystem(mm, net, mm.Params(), 30.0).default_atol() * float(sys.argv[5])
t0 = time.perf_counter()
tr = simulate(net, model, t_end_s=30.0, output_dt_s=0.5, engine="numba", rtol=rtol, atol=atol)
w = time.perf_counter() - t0
arrs = dict(rate=tr.rate_pps, queue=tr.queue_pkts, lost=tr.lost_pkts, sent=tr.sent_pkts)
np.savez(f"/tmp/scale/acc_{model}_{N}_{tag}.npz", **arrs)
print(tag, model, N, rtol, tr.status, "wall", round(w, 2), "steps", tr.solver["n_steps"], "keys", list(arrs))
