"""Per-rhs cost of the generated kernel at a realistic history size, split: full / no history reads /
no history reads and no exp (aecpscale helper).  usage: cost3.py MODEL N [M rows] [window s]"""
import sys, time, importlib.util, os
import numpy as np
from numba import njit
from ecocc import random_network
from ecocc.models import get_model
from ecocc.system import NetworkSystem
from ecocc.dde import engine

model = sys.argv[1]; N = int(sys.argv[2])
M = int(sys.argv[3]) if len(sys.argv) > 3 else 400
win = float(sys.argv[4]) if len(sys.argv) > 4 else 1.2
net = random_network(N, 1000, max_hops=5, seed=0)
m = get_model(model); sysm = NetworkSystem(m, net, m.Params(), 30.0)
gen, kw = engine.generic_args(sysm, 30.0, rtol=1e-7, atol=sysm.default_atol(), t_eval=np.linspace(0, 30, 31))
src0 = gen.source.replace("cache=True", "cache=False")
variants = {"full": src0,
            "nohist": src0.replace("            if dd <= 0.0:\n                md = 0", "            if True:\n                md = 0")}
d = "/tmp/aecpscale/mods"; os.makedirs(d, exist_ok=True)
mods = {}
for tag, src in variants.items():
    assert tag == "full" or src != src0
    path = f"{d}/cost3_{tag}_{gen.name}_{os.getpid()}.py"; open(path, "w").write(src)
    spec = importlib.util.spec_from_file_location(f"cost3_{tag}", path)
    mod = importlib.util.module_from_spec(spec); sys.modules[spec.name] = mod; spec.loader.exec_module(mod)
    mods[tag] = mod
y0 = kw["y0"]; hsrc = kw["hsrc"]; n = y0.size
HT = np.linspace(0.0, win, M)
HY = np.tile(y0[hsrc], (M, 1)) + 1e-3 * np.random.default_rng(0).standard_normal((M, hsrc.size))
HFA = np.zeros((M, hsrc.size)); HFB = np.zeros((M, hsrc.size))
D, Wk = kw["D"], kw["Wk"]
L = kw["L"]
sat = np.zeros(L, dtype=np.bool_)
out = np.empty(n)
dt_step = win / M
for tag, mod in mods.items():
    rhs = mod._model_rhs
    @njit
    def loop(k, s0, ds, y, sat, out, D, Wk, y0, HT, HY, HFA, HFB, m):
        for i in range(k):
            rhs(s0 + ds * (i % 200) / 7.0, 0.0, y, sat, sat, out, D, Wk, 0.0, y0, HT, HY, HFA, HFB, m)
    loop(2, win - 0.2, dt_step, y0, sat, out, D, Wk, y0, HT, HY, HFA, HFB, M)
    best = []
    for r in range(3):
        k = 300 if N <= 10000 else 40
        t0 = time.perf_counter(); loop(k, win - 0.2, dt_step, y0, sat, out, D, Wk, y0, HT, HY, HFA, HFB, M)
        best.append((time.perf_counter() - t0) / k)
    dt = min(best)
    print(f"{model} N={N} M={M} rhs[{tag}] {dt*1e6:.1f} us per call (min of 3), n={n}, pairs={D[3].size}, "
          f"per pair {dt*1e9/D[3].size:.1f} ns", flush=True)
