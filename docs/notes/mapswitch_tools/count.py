"""Right-hand sides, steps and rejections per lock-step group of a map with benchmarks/map_models.py's settings.

    PYTHONPATH=<tree> TREE=<tree> python count.py MODEL N [T_END_S]

Wraps ``ecocc.dde.engine.solve_adaptive_batch`` and averages its ``counters`` (steps, rejected, right-hand sides:
each its group's) over the groups of one ``simulate_map`` call; prints the map's wall and CPU time too (those
move with the machine's load, the counts do not).
"""
import os
import sys
import time

import numpy as np
sys.path.insert(0, os.environ.get("TREE", ".") + "/benchmarks")
from map_models import GAIN, C_PPS  # noqa: E402
from ecocc import dumbbell  # noqa: E402
from ecocc.batch import simulate_map  # noqa: E402
from ecocc.dde import engine  # noqa: E402
from ecocc.models import get_model  # noqa: E402

name, n = sys.argv[1], int(sys.argv[2])
t_end = float(sys.argv[3]) if len(sys.argv) > 3 else 60.0
g0 = getattr(get_model(name).make_params(), GAIN[name])
net = dumbbell(C_PPS, [0.05, 0.1, 0.2, 0.4], initial_rate_pps=10.0)
kw = dict(x_name=GAIN[name], y_name="rtt_scale", window_s=min(10.0, t_end / 2), engine="numba", rtol=1e-7)
simulate_map(net, name, x_values=[g0], y_values=[1.0], t_end_s=12.0, **kw)  # builds or loads the kernel
orig, C = engine.solve_adaptive_batch, []


def wrap(*a, **k):
    r = orig(*a, **k)
    C.append(np.array(r[2]))
    return r


engine.solve_adaptive_batch = wrap
t0, c0 = time.perf_counter(), time.process_time()
simulate_map(net, name, x_values=np.linspace(0.25, 3.0, n) * g0, y_values=np.linspace(0.25, 4.0, n), t_end_s=t_end,
             **kw)
w, c = time.perf_counter() - t0, time.process_time() - c0
k = np.concatenate(C)
print(f"{name} {n} x {n}, {t_end:g} s: wall {w:.2f} s, CPU {c:.2f} s; per group: steps {k[:, 0].mean():.1f}, "
      f"rejected {k[:, 1].mean():.1f}, right-hand sides {k[:, 2].mean():.1f}")
