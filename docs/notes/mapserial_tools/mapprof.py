"""A 100 x 100 map (benchmarks/map_models.py's settings) measured three ways.

    PYTHONPATH=<tree> TREE=<tree> python mapprof.py MODEL N calls     # the kernel calls against the whole map
    PYTHONPATH=<tree> TREE=<tree> python mapprof.py MODEL N cprofile  # cProfile of the map, by own time
    PYTHONPATH=<tree> TREE=<tree> python mapprof.py MODEL N thread    # the main thread's CPU time (2 maps)
"""
import cProfile
import os
import pstats
import sys
import time

import numpy as np
sys.path.insert(0, os.environ.get("TREE", ".") + "/benchmarks")
from map_models import GAIN, C_PPS  # noqa: E402
from ecocc import dumbbell  # noqa: E402
from ecocc.batch import simulate_map  # noqa: E402
from ecocc.dde import engine  # noqa: E402
from ecocc.models import get_model  # noqa: E402

name, n, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
m = get_model(name)
g0 = getattr(m.make_params(), GAIN[name])
net = dumbbell(C_PPS, [0.05, 0.1, 0.2, 0.4], initial_rate_pps=10.0)
kw = dict(x_name=GAIN[name], y_name="rtt_scale", window_s=10.0, engine="numba", rtol=1e-7)
simulate_map(net, name, x_values=[g0], y_values=[1.0], t_end_s=12.0, **kw)  # compiles (not timed)


def run():
    return simulate_map(net, name, x_values=np.linspace(0.25, 3.0, n) * g0, y_values=np.linspace(0.25, 4.0, n),
                        t_end_s=60.0, **kw)


if mode == "calls":
    orig, T = engine.solve_adaptive_batch, []

    def wrap(*a, **k):
        t0, c0 = time.perf_counter(), time.process_time()
        r = orig(*a, **k)
        T.append((time.perf_counter() - t0, time.process_time() - c0))
        return r
    engine.solve_adaptive_batch = wrap
    t0, c0 = time.perf_counter(), time.process_time()
    run()
    w, c = time.perf_counter() - t0, time.process_time() - c0
    print(f"map wall {w:.2f} s cpu {c:.2f} s; in {len(T)} kernel calls: wall {sum(x[0] for x in T):.2f} s "
          f"cpu {sum(x[1] for x in T):.2f} s")
elif mode == "cprofile":
    pr = cProfile.Profile()
    pr.enable()
    run()
    pr.disable()
    pstats.Stats(pr).sort_stats("tottime").print_stats(25)
else:
    for _ in range(2):
        t0, c0 = time.perf_counter(), time.thread_time()
        run()
        print(f"map wall {time.perf_counter() - t0:.2f} s, main thread cpu {time.thread_time() - c0:.3f} s")
