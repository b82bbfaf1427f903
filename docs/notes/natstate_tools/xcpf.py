import time, numpy as np
from ecocc import simulate, random_network
for n, seed, T in [(30, 2, 10.0), (100, 6, 10.0), (300, 1, 10.0)]:
    net = random_network(n, n, max_hops=5, seed=seed)
    for eng in ("numba", "numpy") if n <= 30 else ("numba",):
        t0 = time.perf_counter()
        tr = simulate(net, "xcp", t_end_s=T, engine=eng)
        print(n, seed, eng, tr.status, f"{time.perf_counter()-t0:.1f}s", "max queue", float(np.max(tr.queue_pkts)), "min rate", float(np.min(tr.rate_pps[-1])), flush=True)
