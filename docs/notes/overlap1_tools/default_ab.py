"""Default mode (overlap off) before and after this branch: the same steps, and the cost of the new arguments
and the lookup's extra branch.  Run once per code tree (PYTHONPATH selects it), alternating trees:

    for i in 1 2 3; do PYTHONPATH=/tmp/base python docs/notes/overlap1_tools/default_ab.py base; \
                       PYTHONPATH=. python docs/notes/overlap1_tools/default_ab.py new; done

Prints one JSON line: steps, nfev, median of 5 in-process runs (after a warm-up), the 1-min load."""
import json
import os
import statistics
import sys
import time

from ecocc import dumbbell, random_network, simulate

tag = sys.argv[1]
case = sys.argv[2] if len(sys.argv) > 2 else "dumbbell"
if case == "dumbbell":
    net, model, t_end, reps = dumbbell(12500.0, [0.001] * 4), "aecp", 60.0, 5
else:  # net-N
    net, model, t_end, reps = random_network(int(case.split("-")[1]), 1000, max_hops=5, seed=0), "aecp", 5.0, 3
simulate(net, model, t_end_s=0.05, engine="numba")
walls = []
for _ in range(reps):
    t0 = time.perf_counter()
    tr = simulate(net, model, t_end_s=t_end, engine="numba")
    walls.append(time.perf_counter() - t0)
print(json.dumps(dict(tree=tag, case=case, steps=tr.solver["n_steps"], nfev=tr.solver["nfev"],
                      kernel=tr.solver["kernel"], compiled=tr.solver.get("compiled"),
                      wall_median_s=statistics.median(walls), walls=[round(w, 4) for w in walls],
                      load1=os.getloadavg()[0], queue_end=float(tr.queue_pkts[-1].sum()))))
