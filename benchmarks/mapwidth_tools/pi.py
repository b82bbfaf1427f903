"""PI step-size control in the lock-step kernel (ecocc/dde/lanes.py ``PI_BETA``) against the elementary one.

``python benchmarks/mapwidth_tools/pi.py MODEL BETAS count [SCALES]``: one group of 8 neighbouring gains (the
100 x 100 map's x indices 40..47) per RTT scale, map settings, t_end 20 / 40 / 60 s: steps, rejected attempts,
right-hand sides per beta (rejections still growing once the system has settled: a step at the method's
stability limit).
``python benchmarks/mapwidth_tools/pi.py MODEL BETAS map N ROUNDS``: CPU time of an N x N map per beta, the betas
interleaved round by round, median; verdicts (stable, regime, status) against the first beta.
Sets ``ecocc.dde.aot.LANES_MODEL[MODEL]['pi_beta']`` per beta (the on-disk index bypassed: use a separate ``ECOCC_CACHE_DIR``).
Width: the model's (``aot.LANES_MODEL``; ``MAPWIDTH_W`` overrides)."""
import os, sys, time
import numpy as np
sys.path.insert(0, os.path.join(os.getcwd(), "benchmarks"))
from map_models import GAIN, C_PPS
from ecocc import dumbbell
from ecocc.dde import aot, codegen, engine
from ecocc.models import get_model
from ecocc.system import NetworkSystem

name, betas, mode = sys.argv[1], [float(b) for b in sys.argv[2].split(",")], sys.argv[3]
if os.environ.get("MAPWIDTH_W"):
    aot.LANES_MODEL[name] = dict(aot.LANES_MODEL.get(name, {}), width=int(os.environ["MAPWIDTH_W"]))
codegen.indexed = lambda *a, **k: None


def use(b):
    aot.LANES_MODEL[name] = dict(aot.LANES_MODEL.get(name, {}), pi_beta=b)
    codegen._gen_cache.clear()


m = get_model(name)
g0 = getattr(m.make_params(), GAIN[name])
if mode == "count":
    scales = [float(s) for s in sys.argv[4].split(",")] if len(sys.argv) > 4 else [0.25, 1.0, 4.0]
    gains = np.linspace(0.25, 3.0, 100)[40:48] * g0
    Ps = [m.make_params(**{GAIN[name]: g}) for g in gains]
    for sc in scales:
        net = dumbbell(C_PPS, [0.05, 0.1, 0.2, 0.4], initial_rate_pps=10.0).scaled(rtt_scale=sc)
        for b in betas:
            use(b)
            row = []
            for te in (20.0, 40.0, 60.0):
                sysm = NetworkSystem(m, net, m.make_params(), te)
                iq = sysm.layout["queue"].start
                kw = dict(rtol=1e-7, t_eval=np.arange(te - 10.0, te + 1e-9, 0.01), dynamics_only=True, overlap=True,
                          components=[iq], kinks=True)
                _, _, cnt = engine.solve_adaptive_batch([sysm], [0] * 8, Ps, te, **kw)
                row.append(f"t_end {te:g}: {cnt[0, 0]} steps {cnt[0, 1]} rej {cnt[0, 2]} nfev (group 0)")
            print(f"{name} x{sc} beta {b}: " + " | ".join(row), flush=True)
else:
    from ecocc.batch import simulate_map
    n, rounds = int(sys.argv[4]), int(sys.argv[5])
    net = dumbbell(C_PPS, [0.05, 0.1, 0.2, 0.4], initial_rate_pps=10.0)
    kw = dict(x_name=GAIN[name], y_name="rtt_scale", window_s=10.0, engine="numba", rtol=1e-7)
    for b in betas:
        use(b)
        simulate_map(net, name, x_values=[g0], y_values=[1.0], t_end_s=12.0, **kw)
        simulate_map(net, name, x_values=np.linspace(0.25, 3.0, 8) * g0, y_values=np.linspace(0.25, 4.0, 8),
                     t_end_s=60.0, **kw)  # (a first map of many groups: not timed)
    res = {b: [] for b in betas}
    ref = None
    for r in range(rounds):
        for b in betas:
            use(b)
            l0 = os.getloadavg()[0]
            t0 = time.perf_counter(); c0 = time.process_time()
            ds = simulate_map(net, name, x_values=np.linspace(0.25, 3.0, n) * g0,
                              y_values=np.linspace(0.25, 4.0, n), t_end_s=60.0, **kw)
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
            res[b].append(cpu)
            v = (ds.stable.values, ds.regime.values.astype(str), ds.status.values.astype(str))
            if ref is None:
                ref = v
            print(f"{name} n={n} round {r} beta {b}: cpu {cpu:.2f} s wall {wall:.2f} s load {l0:.2f} steps/group "
                  f"{ds.n_steps.values.mean():.0f} settled {int(v[0].sum())} diff vs beta {betas[0]}: stable "
                  f"{int((v[0] != ref[0]).sum())} regime {int((v[1] != ref[1]).sum())} status "
                  f"{int((v[2] != ref[2]).sum())} | {ds.attrs['solver'][:60]}", flush=True)
    print(name, "median CPU s:", {b: round(float(np.median(v)), 2) for b, v in res.items()},
          "all:", {b: [round(x, 2) for x in v] for b, v in res.items()}, flush=True)
