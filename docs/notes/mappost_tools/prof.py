"""cProfile of the main thread of one N x N map (benchmarks/map_models.py settings); the kernel threads show as lock waits.

    PYTHONPATH=<tree> TREE=<tree> python prof.py MODEL N
"""
import os, sys, time, cProfile, pstats
import numpy as np
sys.path.insert(0, os.environ.get("TREE", ".") + "/benchmarks")
from map_models import GAIN, C_PPS
from ecocc import dumbbell
from ecocc.batch import simulate_map
from ecocc.models import get_model
name, n = sys.argv[1], int(sys.argv[2])
g0 = getattr(get_model(name).make_params(), GAIN[name])
net = dumbbell(C_PPS, [0.05, 0.1, 0.2, 0.4], initial_rate_pps=10.0)
kw = dict(x_name=GAIN[name], y_name="rtt_scale", window_s=10.0, engine="numba", rtol=1e-7)
simulate_map(net, name, x_values=[g0], y_values=[1.0], t_end_s=12.0, **kw)
cProfile.run("simulate_map(net, name, x_values=np.linspace(0.25, 3.0, n) * g0, y_values=np.linspace(0.25, 4.0, n), t_end_s=60.0, **kw)", "/tmp/mappost_prof.out")
p = pstats.Stats("/tmp/mappost_prof.out"); p.sort_stats("tottime").print_stats(25)
