"""Anatomy: lock-step group of 8 neighbouring gains (map settings: kinks on, overlap, rtol 1e-7, 60 s) vs each
point alone (8 identical lanes, same kernel) vs the single compiled kernel (engine.solve_adaptive)."""
import sys, time
import numpy as np
from ecocc import dumbbell
from ecocc.dde import engine
from ecocc.models import get_model
from ecocc.system import NetworkSystem
sys.path.insert(0, "benchmarks")
from map_models import GAIN
name = sys.argv[1]
scales = [float(s) for s in sys.argv[2].split(",")] if len(sys.argv) > 2 else [0.25, 1.0, 4.0]
kinks = (sys.argv[3] != "0") if len(sys.argv) > 3 else True
m = get_model(name)
g0 = getattr(m.make_params(), GAIN[name])
gains = np.linspace(0.25, 3.0, 100)[40:48] * g0
for sc in scales:
    net = dumbbell(15000.0, [0.05, 0.1, 0.2, 0.4], initial_rate_pps=10.0).scaled(rtt_scale=sc)
    sysm = NetworkSystem(m, net, m.make_params(), 60.0)
    iq = sysm.layout["queue"].start
    kw = dict(rtol=1e-7, t_eval=np.arange(50.0, 60.0 + 1e-9, 0.01), dynamics_only=True, overlap=True,
              components=[iq], kinks=kinks)
    Ps = [m.make_params(**{GAIN[name]: g}) for g in gains]
    t0 = time.perf_counter()
    _, _, cnt = engine.solve_adaptive_batch([sysm], [0] * 8, Ps, 60.0, **kw)
    wg = time.perf_counter() - t0
    _, _, cnt4 = engine.solve_adaptive_batch([sysm], [0] * 4, Ps[:4], 60.0, **kw)
    _, _, cnt4b = engine.solve_adaptive_batch([sysm], [0] * 4, Ps[4:], 60.0, **kw)
    own = []
    t0 = time.perf_counter()
    for P in Ps:
        _, _, c = engine.solve_adaptive_batch([sysm], [0] * 8, [P] * 8, 60.0, **kw)
        own.append((int(c[0, 0]), int(c[0, 1]), int(c[0, 2])))
    wo = (time.perf_counter() - t0) / 8
    print(f"{name} x{sc} kinks={kinks}: group {cnt[0,0]} steps {cnt[0,1]} rej {cnt[0,2]} nfev {wg*1e3:.1f} ms | alone mean "
          f"{np.mean([o[0] for o in own]):.0f} steps {np.mean([o[1] for o in own]):.0f} rej, {wo*1e3:.1f} ms/point; "
          f"ratio {cnt[0,0]/np.mean([o[0] for o in own]):.2f}; groups of 4 distinct: {cnt4[0,0]} / {cnt4b[0,0]} steps, {cnt4[0,1]} / {cnt4b[0,1]} rej", flush=True)
    # single compiled kernel (no overlap, whole state), first gain of the group (skipped with ANAT_NO_SINGLE=1)
    import os
    if os.environ.get("ANAT_NO_SINGLE"):
        continue
    sysP = NetworkSystem(m, net, Ps[0], 60.0)
    t0 = time.perf_counter()
    sol = engine.solve_adaptive(sysP, 60.0, rtol=1e-7, atol=sysP.default_atol(), t_eval=np.arange(50.0, 60.0 + 1e-9, 0.01))
    ws = time.perf_counter() - t0
    print(f"   single kernel (point 0): {sol.n_steps} steps {sol.n_rejected if hasattr(sol,'n_rejected') else ''} rej, {ws*1e3:.1f} ms (incl. first compile if any)", flush=True)
