"""History nodes m and capacity at every accepted step (aecpscale helper); usage: mlog.py N T"""
import sys, time, importlib.util, os, numpy as np
from ecocc import random_network
from ecocc.models import get_model
from ecocc.system import NetworkSystem
from ecocc.dde import engine
N = int(sys.argv[1]); T = float(sys.argv[2])
net = random_network(N, 1000, max_hops=5, seed=0)
m = get_model("aecp"); sysm = NetworkSystem(m, net, m.Params(), T)
gen, kw = engine.generic_args(sysm, T, rtol=1e-7, atol=sysm.default_atol(), t_eval=np.linspace(0, T, int(T) + 1))
src = gen.source.replace("cache=True", "cache=False")
src = src.replace("max_hist_bytes, dcomp, hsrc, iq, L, buf, D, Wk, counters,\n                    reals):",
                  "max_hist_bytes, dcomp, hsrc, iq, L, buf, D, Wk, counters,\n                    reals, MLOG):")
old = "        HT[m] = t + h\n        m += 1\n"
assert old in src
src = src.replace(old, old + "        if n_steps < MLOG.shape[0]:\n            MLOG[n_steps, 0] = t + h\n            MLOG[n_steps, 1] = m\n            MLOG[n_steps, 2] = HT.size\n            MLOG[n_steps, 3] = nfev\n            MLOG[n_steps, 4] = n_rej\n")
path = f"/tmp/aecpscale/mods/ml_{os.getpid()}.py"; open(path, "w").write(src)
spec = importlib.util.spec_from_file_location("ml", path)
mod = importlib.util.module_from_spec(spec); sys.modules[spec.name] = mod; spec.loader.exec_module(mod)
MLOG = np.lib.format.open_memmap(f'/tmp/aecpscale/mlog_{N}_{T:g}.npy', mode='w+', dtype=float, shape=(200000, 5))
t0 = time.perf_counter(); print('start', flush=True)
code = mod.adaptive_kernel(*[kw[k] for k in engine.ADAPTIVE_ARGS], MLOG)
ns = kw["counters"][0]; Lg = MLOG[:ns]; print('wall', time.perf_counter() - t0, 'nfev', kw['counters'][2], 'rej', kw['counters'][1])
print(N, T, "steps", ns, "keep_s", kw["keep_s"])
for a in range(0, int(T)):
    s = (Lg[:, 0] > a) & (Lg[:, 0] <= a + 1)
    if s.any():
        print(f"t {a}-{a+1}: nodes m median {np.median(Lg[s,1]):.0f} max {Lg[s,1].max():.0f}, capacity max {Lg[s,2].max():.0f}, "
              f"history MiB (3 x capacity x {kw['hsrc'].size} cols) {Lg[s,2].max() * kw['hsrc'].size * 24 / 2**20:.0f}")
