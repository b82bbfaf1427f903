import sys, time
import numpy as np
sys.path.insert(0, __import__("os").environ.get("TREE","/work/main")); sys.path.insert(0, __import__("os").environ.get("TREE","/work/main")+"/benchmarks")
from ecocc import dumbbell
from ecocc.dde import engine
from ecocc.models import get_model
from ecocc.system import NetworkSystem
from map_models import GAIN
name = sys.argv[1]; sc = float(sys.argv[2]); alone = len(sys.argv) > 3
m = get_model(name)
g0 = getattr(m.make_params(), GAIN[name])
gains = np.linspace(0.25, 3.0, 100)[40:48] * g0
if alone: gains = [gains[0]] * 8
net = dumbbell(15000.0, [0.05, 0.1, 0.2, 0.4], initial_rate_pps=10.0).scaled(rtt_scale=sc)
Ps = [m.make_params(**{GAIN[name]: g}) for g in gains]
prev = np.zeros(3)
for T in [0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0, 1.2, 1.5, 2.0, 3.0, 5.0]:
    sysm = NetworkSystem(m, net, m.make_params(), float(T))
    iq = sysm.layout["queue"].start
    kw = dict(rtol=1e-7, t_eval=np.array([float(T)]), dynamics_only=True, overlap=True, components=[iq], kinks=True)
    _, _, cnt = engine.solve_adaptive_batch([sysm], [0] * 8, Ps, float(T), **kw)
    c = cnt[0, :3].astype(float)
    print(f"t<= {T:5.2f}: steps {c[0]:5.0f} (+{c[0]-prev[0]:4.0f}) rej +{c[1]-prev[1]:4.0f} nfev +{c[2]-prev[2]:5.0f}", flush=True)
    prev = c
