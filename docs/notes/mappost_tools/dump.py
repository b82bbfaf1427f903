"""One N x N map (benchmarks/map_models.py settings), every data variable saved to OUT.npz (to compare two trees bit for bit).

    PYTHONPATH=<tree> TREE=<tree> python dump.py MODEL N OUT.npz
"""
import os, sys
import numpy as np
sys.path.insert(0, os.environ.get("TREE", ".") + "/benchmarks")
from map_models import GAIN, C_PPS
from ecocc import dumbbell
from ecocc.batch import simulate_map
from ecocc.models import get_model
name, n, outp = sys.argv[1], int(sys.argv[2]), sys.argv[3]
g0 = getattr(get_model(name).make_params(), GAIN[name])
net = dumbbell(C_PPS, [0.05, 0.1, 0.2, 0.4], initial_rate_pps=10.0)
ds = simulate_map(net, name, x_name=GAIN[name], y_name="rtt_scale", window_s=10.0, engine="numba", rtol=1e-7,
                  x_values=np.linspace(0.25, 3.0, n) * g0, y_values=np.linspace(0.25, 4.0, n), t_end_s=60.0)
np.savez(outp, **{k: ds[k].values for k in ds.data_vars})
