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
a, b = src.split("def _model_rhs(", 1)
b1, b2 = b.split("\n\n\n", 1)
old = """                    while k < m - 2 and HT[k + 1] <= tsel:
                        k += 1
                    while k > 0 and HT[k] > tsel:
                        k -= 1
"""
new = """                    kw0 = k
                    while k < m - 2 and HT[k + 1] <= tsel:
                        k += 1
                    while k > 0 and HT[k] > tsel:
                        k -= 1
                    kown[0] += abs(k - kw0)
                    kown[1] += 1
                    if abs(k - kw0) > 8:
                        kown[2] += 1
                    kown[3] = max(kown[3], m)
"""
assert old in b1
src = a + "def _model_rhs(" + b1.replace(old, new) + "\n\n\n" + b2
path = f"/tmp/aecpscale/mods/wc_{os.getpid()}.py"; open(path, "w").write(src)
spec = importlib.util.spec_from_file_location("wc", path)
mod = importlib.util.module_from_spec(spec); sys.modules[spec.name] = mod; spec.loader.exec_module(mod)
kown = kw["Wk"][4]; kown[:] = 0
code = mod.adaptive_kernel(*[kw[k] for k in engine.ADAPTIVE_ARGS])
c = kw["counters"]
print(N, T, "nfev", c[2], "lookups", kown[1], "nodes walked", kown[0], "per lookup", kown[0] / max(kown[1], 1),
      "walks > 8 nodes", kown[2], "max m", kown[3])
