"""A/B in one process: the base and the patched generated module alternately (process CPU time and wall)."""
import sys, time, importlib.util, os, numpy as np
sys.path.insert(0, "/tmp/aecpscale")
from gallop import patch
from ecocc import random_network
from ecocc.models import get_model
from ecocc.system import NetworkSystem
from ecocc.dde import engine
N = int(sys.argv[1]); T = float(sys.argv[2]); reps = int(sys.argv[3])
net = random_network(N, 1000, max_hops=5, seed=0)
m = get_model("aecp"); sysm = NetworkSystem(m, net, m.Params(), T)
gen, kw = engine.generic_args(sysm, T, rtol=1e-7, atol=sysm.default_atol(), t_eval=np.linspace(0, T, int(T) + 1))
mods = {}
for variant in ("base", "gallop"):
    src = gen.source
    if variant == "gallop":
        src, n = patch(src)
    path = f"/tmp/aecpscale/mods/rp_{variant}_{gen.name}.py"
    if not os.path.exists(path) or open(path).read() != src:
        open(path, "w").write(src)
    spec = importlib.util.spec_from_file_location(f"rp_{variant}", path)
    mod = importlib.util.module_from_spec(spec); sys.modules[spec.name] = mod; spec.loader.exec_module(mod)
    mods[variant] = mod
res = {v: [] for v in mods}
for r in range(reps + 1):
    for v, mod in mods.items():
        gen, kw = engine.generic_args(sysm, T, rtol=1e-7, atol=sysm.default_atol(), t_eval=np.linspace(0, T, int(T) + 1))
        args = [kw[k] for k in engine.ADAPTIVE_ARGS]
        c0 = time.process_time(); w0 = time.perf_counter(); code = mod.adaptive_kernel(*args)
        cpu = time.process_time() - c0; w = time.perf_counter() - w0
        if r > 0:
            res[v].append((cpu, w))
        print(v, N, T, "rep", r, "cpu", round(cpu, 3), "wall", round(w, 3), "nfev", kw["counters"][2], "load", os.getloadavg()[0], flush=True)
for v in res:
    c = sorted(x[0] for x in res[v]); w = sorted(x[1] for x in res[v])
    print(v, "median cpu", c[len(c) // 2], "median wall", w[len(w) // 2])
