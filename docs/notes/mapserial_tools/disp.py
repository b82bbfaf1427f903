import sys, time, os, numpy as np
sys.path.insert(0, os.environ.get("TREE", ".") + "/benchmarks")
from map_models import GAIN, C_PPS
from ecocc import dumbbell
from ecocc.batch import simulate_map
from ecocc.dde import engine
from ecocc.models import get_model
cap = {}
orig = engine._run_groups
def grab(run, G, args):
    cap["x"] = (run, G, args); orig(run, G, args)
engine._run_groups = grab
name = "xcp"; m = get_model(name); g0 = getattr(m.make_params(), GAIN[name])
net = dumbbell(C_PPS, [0.05, 0.1, 0.2, 0.4], initial_rate_pps=10.0)
simulate_map(net, name, x_values=np.linspace(0.5,1.5,8)*g0, y_values=[1.0,2.0], t_end_s=12.0, x_name=GAIN[name], y_name="rtt_scale", window_s=10.0, engine="numba", rtol=1e-7)
run, G, args = cap["x"]
for _ in range(3):
    t0 = time.perf_counter()
    for i in range(2000):
        run(G, G, *args)
    print(f"empty call: {(time.perf_counter()-t0)/2000*1e6:.1f} us")
