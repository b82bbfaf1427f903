"""benchmarks/mapsfast_tools/vmap.py + rejected attempts and rhs evaluations (group counters, mean over points)."""
import sys, time, os
import numpy as np
sys.path.insert(0, os.path.join(os.getcwd(), "benchmarks"))
from map_models import GAIN, C_PPS
from ecocc import dumbbell
import ecocc.batch as B
from ecocc.models import get_model
REC = []
import ecocc.dde.engine as E
_orig = E.solve_adaptive_batch
def wrap(*a, **k):
    out, st, cnt = _orig(*a, **k)
    REC.append(np.array(cnt, copy=True))
    return out, st, cnt
E.solve_adaptive_batch = wrap
name, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
m = get_model(name)
g0 = getattr(m.make_params(), GAIN[name])
net = dumbbell(C_PPS, [0.05, 0.1, 0.2, 0.4], initial_rate_pps=10.0)
kw = dict(x_name=GAIN[name], y_name="rtt_scale", window_s=10.0, engine="numba", rtol=1e-7,
          kinks=os.environ.get("KINKS", "1") == "1")
B.simulate_map(net, name, x_values=[g0], y_values=[1.0], t_end_s=12.0, **kw)
REC.clear()
l0 = os.getloadavg()[0]
t0 = time.perf_counter(); c0 = time.process_time()
ds = B.simulate_map(net, name, x_values=np.linspace(0.25, 3.0, n) * g0, y_values=np.linspace(0.25, 4.0, n), t_end_s=60.0, **kw)
w = time.perf_counter() - t0; c = time.process_time() - c0
cnt = np.concatenate(REC)
np.savez(out, **{k: ds[k].values for k in ds.data_vars})
print(f"{name} n={n}: wall {w:.2f} s cpu {c:.2f} s steps {ds.n_steps.values.mean():.0f} rej {cnt[:,1].mean():.0f} "
      f"nfev {cnt[:,2].mean():.0f} settled {int(ds.stable.values.sum())} "
      f"failed {int((ds.status.values.astype(str)=='failed').sum())} load {l0:.2f}", flush=True)
