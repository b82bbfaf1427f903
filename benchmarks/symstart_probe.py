import sys, time, json, resource
import numpy as np
from ecocc import random_network, simulate
from ecocc.system import NetworkSystem
N = int(sys.argv[1]); T = float(sys.argv[2]); past = sys.argv[3]; forced = sys.argv[4] == "1"
gib = float(sys.argv[5]) if len(sys.argv) > 5 else 2.0
if not forced:
    NetworkSystem.startup_jumps = lambda self, t_end=None: np.zeros(0)
small = random_network(50, 5, max_hops=5, seed=1)
simulate(small, "symbiosis", t_end_s=1.0, output_dt_s=0.5, engine="numba", past=past)
net = random_network(N, 1000, max_hops=5, seed=0)
t0 = time.perf_counter()
tr = simulate(net, "symbiosis", t_end_s=T, output_dt_s=min(1.0, T / 4), engine="numba", past=past, max_history_gib=gib)
w = time.perf_counter() - t0
print(json.dumps(dict(N=N, T=T, past=past, forced=forced, status=tr.status.value, steps=int(tr.solver["n_steps"]),
      rej=int(tr.solver["n_rejected"]), nbp=tr.solver.get("n_breakpoints"), wall=round(w, 2), t_reached=tr.solver["t_reached_s"],
      peak_mib=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, msg=tr.message[:600])))
