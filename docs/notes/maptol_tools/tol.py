"""A model's N x N map (benchmarks/map_models.py's grid, 60 s per point) at several rtols: steps, time, verdicts
against the tightest (docs/notes/maptol.md).

    python docs/notes/maptol_tools/tol.py petcp 30 1e-9,1e-7,1e-5,1e-4
"""
import sys, time, json, numpy as np
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))
from map_models import GAIN, C_PPS
from ecocc import dumbbell
from ecocc.batch import simulate_map
from ecocc.models import get_model
name, n = sys.argv[1], int(sys.argv[2]); rtols = [float(r) for r in sys.argv[3].split(",")]
m = get_model(name); g0 = getattr(m.make_params(), GAIN[name])
net = dumbbell(C_PPS, [0.05, 0.1, 0.2, 0.4], initial_rate_pps=10.0)
kw = dict(x_name=GAIN[name], y_name="rtt_scale", window_s=10.0, engine="numba")
simulate_map(net, name, x_values=[g0], y_values=[1.0], t_end_s=12.0, rtol=1e-7, **kw)
out = {}
for r in rtols:
    t0 = time.perf_counter(); c0 = time.process_time()
    ds = simulate_map(net, name, x_values=np.linspace(0.25, 3.0, n) * g0, y_values=np.linspace(0.25, 4.0, n), t_end_s=60.0, rtol=r, **kw)
    w = time.perf_counter() - t0; c = time.process_time() - c0
    out[r] = ds
    print(f"{name} rtol {r:g}: wall {w:.1f} cpu {c:.1f} mean steps {ds.n_steps.values.mean():.0f} stable {int(ds.stable.values.sum())} regimes {np.unique(ds.regime.values, return_counts=True)}", flush=True)
print(list(out[rtols[0]].data_vars))
ref = out[min(rtols)]
for r, ds in out.items():
    dif = (ds.regime.values != ref.regime.values).sum(); dst = (ds.stable.values != ref.stable.values).sum()
    vs = [v for v in ds.data_vars if "swing" in v]
    sw = {v: float(np.nanmax(np.abs(ds[v].values - ref[v].values))) for v in vs}
    print(f"rtol {r:g} vs {min(rtols):g}: regime differs at {dif}, stable differs at {dst}, swing max abs diff {sw}")
