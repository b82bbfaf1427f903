"""Lock-step group width by measurement: CPU time of an n x n map (benchmarks/map_models.py's settings) for each
width, in one process, the widths interleaved round by round (A/B back to back), median of the rounds.

``python benchmarks/mapwidth_tools/widths.py MODEL WIDTHS [N] [ROUNDS]``, e.g. ``hstcp 1,2,4 32 3``.
Sets ``ecocc.dde.aot.LANES_MODEL[MODEL]`` per width and bypasses the on-disk index of generated modules (use a
separate ``ECOCC_CACHE_DIR``: the modules generated here are written to its index)."""
import os, sys, time
import numpy as np
sys.path.insert(0, os.path.join(os.getcwd(), "benchmarks"))
from map_models import GAIN, C_PPS
from ecocc import dumbbell
from ecocc.batch import simulate_map
from ecocc.dde import aot, codegen
from ecocc.models import get_model

name, widths = sys.argv[1], [int(w) for w in sys.argv[2].split(",")]
n = int(sys.argv[3]) if len(sys.argv) > 3 else 32
rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 3
codegen.indexed = lambda *a, **k: None
m = get_model(name)
g0 = getattr(m.make_params(), GAIN[name])
net = dumbbell(C_PPS, [0.05, 0.1, 0.2, 0.4], initial_rate_pps=10.0)
kw = dict(x_name=GAIN[name], y_name="rtt_scale", window_s=10.0, engine="numba", rtol=1e-7)


def use(w):
    aot.LANES_MODEL[name] = w
    codegen._gen_cache.clear()


for w in widths:  # build (or load) each width's kernel first
    use(w)
    t0 = time.perf_counter()
    ds = simulate_map(net, name, x_values=[g0], y_values=[1.0], t_end_s=12.0, **kw)
    simulate_map(net, name, x_values=np.linspace(0.25, 3.0, 8) * g0, y_values=np.linspace(0.25, 4.0, 8),
                 t_end_s=60.0, **kw)  # (a first map of many groups: not timed)
    print(f"{name} width {w}: kernel ready in {time.perf_counter() - t0:.1f} s ({ds.attrs['solver']})", flush=True)
res = {w: [] for w in widths}
ref = {}
for r in range(rounds):
    for w in widths:
        use(w)
        l0 = os.getloadavg()[0]
        t0 = time.perf_counter(); c0 = time.process_time()
        ds = simulate_map(net, name, x_values=np.linspace(0.25, 3.0, n) * g0, y_values=np.linspace(0.25, 4.0, n),
                          t_end_s=60.0, **kw)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        res[w].append(cpu)
        st, rg = ds.stable.values, ds.regime.values.astype(str)
        if w not in ref:
            ref[w] = (st, rg)
        d0 = ref[widths[0]]
        print(f"{name} n={n} round {r} width {w}: cpu {cpu:.2f} s wall {wall:.2f} s load {l0:.2f} steps/group "
              f"{ds.n_steps.values.mean():.0f} settled {int(st.sum())} stable-diff-vs-w{widths[0]} "
              f"{int((st != d0[0]).sum())} regime-diff {int((rg != d0[1]).sum())}", flush=True)
print(name, "median CPU s:", {w: round(float(np.median(v)), 2) for w, v in res.items()},
      "all:", {w: [round(x, 2) for x in v] for w, v in res.items()}, flush=True)
