"""Wall time of one 100 x 100 map (benchmarks/map_models.py settings) split into the lock-step kernels (engine._run_groups),
the rest of solve_adaptive_batch, and the Python work outside the calls (window statistics, held-queue rates).

    PYTHONPATH=<tree> TREE=<tree> python split.py MODEL N [--profile]

With ``--profile``: instead, cProfile of the main thread (the kernel threads show as lock waits), top 25 by own time.
"""
import os, sys, time
import numpy as np
sys.path.insert(0, os.environ.get("TREE", ".") + "/benchmarks")
from map_models import GAIN, C_PPS
from ecocc import dumbbell
from ecocc.batch import simulate_map
from ecocc.dde import engine
from ecocc.models import get_model
name, n = sys.argv[1], int(sys.argv[2])
g0 = getattr(get_model(name).make_params(), GAIN[name])
net = dumbbell(C_PPS, [0.05, 0.1, 0.2, 0.4], initial_rate_pps=10.0)
kw = dict(x_name=GAIN[name], y_name="rtt_scale", window_s=10.0, engine="numba", rtol=1e-7)
simulate_map(net, name, x_values=[g0], y_values=[1.0], t_end_s=12.0, **kw)
if "--profile" in sys.argv:
    import cProfile
    import pstats
    cProfile.run("simulate_map(net, name, x_values=np.linspace(0.25, 3.0, n) * g0, "
                 "y_values=np.linspace(0.25, 4.0, n), t_end_s=60.0, **kw)", "/tmp/mappost_prof.out")
    pstats.Stats("/tmp/mappost_prof.out").sort_stats("tottime").print_stats(25)
    sys.exit()
orig = engine._run_groups; T = []; B=[]
def wrap(run, G, args):
    t = time.perf_counter(); orig(run, G, args); T.append(time.perf_counter() - t)
engine._run_groups = wrap
ob = engine.solve_adaptive_batch
def wb(*a, **k):
    t = time.perf_counter(); r = ob(*a, **k); B.append(time.perf_counter() - t); return r
engine.solve_adaptive_batch = wb
t0, c0 = time.perf_counter(), time.process_time()
simulate_map(net, name, x_values=np.linspace(0.25, 3.0, n) * g0, y_values=np.linspace(0.25, 4.0, n), t_end_s=60.0, **kw)
w, c = time.perf_counter() - t0, time.process_time() - c0
print(f"{name}: wall {w:.2f} CPU {c:.2f}; calls {len(T)}; in kernels {sum(T):.2f}; in solve_adaptive_batch {sum(B):.2f}; outside {w-sum(B):.2f}")
