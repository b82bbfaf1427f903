"""rhs microbench: history layout variants (base row-major 3 arrays / 'il4' interleaved [y_k, fa_k, fb_k, y_k+1]
per (row, column)), steps advancing one row per 7 calls; usage: cost6.py N M win"""
import sys, time, importlib.util, os, re
import numpy as np
from numba import njit
from ecocc import random_network
from ecocc.models import get_model
from ecocc.system import NetworkSystem
from ecocc.dde import engine
N = int(sys.argv[1]); M = int(sys.argv[2]); win = float(sys.argv[3])
net = random_network(N, 1000, max_hops=5, seed=0)
m = get_model("aecp"); sysm = NetworkSystem(m, net, m.Params(), 30.0)
gen, kw = engine.generic_args(sysm, 30.0, rtol=1e-7, atol=sysm.default_atol(), t_eval=np.linspace(0, 30, 31))
src0 = gen.source.replace("cache=True", "cache=False")
def il4(src):
    a, b = src.split("def _model_rhs(", 1); b1, b2 = b.split("\n\n\n", 1)
    old = "lv_r = w0 * HY[k, HC_L0 + l] + w1 * HFA[k, HC_L0 + l] + w2 * HY[k + 1, HC_L0 + l] + w3 * HFB[k, HC_L0 + l]"
    assert old in b1
    b1 = b1.replace(old, "lv_r = w0 * HY[k, HC_L0 + l, 0] + w1 * HY[k, HC_L0 + l, 1] + w2 * HY[k, HC_L0 + l, 3] + w3 * HY[k, HC_L0 + l, 2]")
    b1 = b1.replace("lv_r = HY[0, HC_L0 + l]", "lv_r = HY[0, HC_L0 + l, 0]")
    return a + "def _model_rhs(" + b1 + "\n\n\n" + b2
variants = {"base": src0, "il4": il4(src0), "cm3": src0}
y0 = kw["y0"]; hsrc = kw["hsrc"]; n = y0.size
HT = np.linspace(0.0, win, M)
rng = np.random.default_rng(0)
HY = np.tile(y0[hsrc], (M, 1)) + 1e-3 * rng.standard_normal((M, hsrc.size))
HFA = 1e-2 * rng.standard_normal((M, hsrc.size)); HFB = 1e-2 * rng.standard_normal((M, hsrc.size))
H4 = np.zeros((M, hsrc.size, 4)); H4[:, :, 0] = HY; H4[:, :, 1] = HFA; H4[:, :, 2] = HFB; H4[:-1, :, 3] = HY[1:]
B = np.zeros((M, hsrc.size, 4)); B[:, :, 0] = HY; B[:, :, 1] = HFA; B[:, :, 2] = HFB
BC = np.zeros((hsrc.size, M, 3)); BC[:, :, 0] = HY.T; BC[:, :, 1] = HFA.T; BC[:, :, 2] = HFB.T
arrs = {"base": (HY, HFA, HFB), "il4": (H4, HFA, HFB), "cm3": (BC[:, :, 0].T, BC[:, :, 1].T, BC[:, :, 2].T)}
D, Wk = kw["D"], kw["Wk"]; L = kw["L"]
sat = np.zeros(L, dtype=np.bool_); out = np.empty(n)
dt_step = win / M
C = np.array([0, 0.2, 0.3, 0.8, 8 / 9, 1.0, 1.0])
loops = {}; outs = {}
for tag, src in variants.items():
    path = f"/tmp/aecpscale/mods/c6_{tag}_{os.getpid()}.py"; open(path, "w").write(src)
    spec = importlib.util.spec_from_file_location(f"c6_{tag}", path)
    mod = importlib.util.module_from_spec(spec); sys.modules[spec.name] = mod; spec.loader.exec_module(mod)
    rhs = mod._model_rhs
    @njit
    def loop(k, s0, ds, y, sat, out, D, Wk, y0, HT, HY, HFA, HFB, m, C):
        for i in range(k):
            rhs(s0 + ds * ((i // 7) + C[i % 7]), 0.0, y, sat, sat, out, D, Wk, 0.0, y0, HT, HY, HFA, HFB, m, )
    a1, a2, a3 = arrs[tag]
    loop(3, win - 0.2, dt_step, y0, sat, out, D, Wk, y0, HT, a1, a2, a3, M, C)
    outs[tag] = out.copy()
    loops[tag] = loop
print("same output:", np.array_equal(outs["base"], outs["il4"]), np.array_equal(outs["base"], outs["cm3"]))
res = {t: [] for t in loops}
for r in range(5):
    for tag, loop in loops.items():
        k = 280
        a1, a2, a3 = arrs[tag]
        t0 = time.perf_counter(); loop(k, win - 0.2, dt_step, y0, sat, out, D, Wk, y0, HT, a1, a2, a3, M, C)
        res[tag].append((time.perf_counter() - t0) / k)
for tag in res:
    print(f"N={N} M={M} {tag}: min {min(res[tag])*1e6:.1f} us median {sorted(res[tag])[2]*1e6:.1f} us per rhs", flush=True)
