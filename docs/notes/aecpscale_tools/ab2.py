"""A/B in one process: main's generated AECP module (row-major history) against this tree's (column-major,
interleaved), alternately; process CPU time and wall; outputs compared bitwise.  usage: ab2.py N T reps BASE_MODULE_FILE"""
import sys, time, importlib.util, os, numpy as np
from ecocc import random_network
from ecocc.models import get_model
from ecocc.system import NetworkSystem
from ecocc.dde import engine
N = int(sys.argv[1]); T = float(sys.argv[2]); reps = int(sys.argv[3]); base_file = sys.argv[4]
net = random_network(N, 1000, max_hops=5, seed=0)
m = get_model("aecp"); sysm = NetworkSystem(m, net, m.Params(), T)
gen, kw = engine.generic_args(sysm, T, rtol=1e-7, atol=sysm.default_atol(), t_eval=np.linspace(0, T, int(T) + 1))
mods = {}
for variant, path in (("main", base_file), ("new", None)):
    if path is None:
        path = f"/tmp/aecpscale/mods/ab2_new_{gen.name}.py"
        if not os.path.exists(path) or open(path).read() != gen.source:
            open(path, "w").write(gen.source)
    spec = importlib.util.spec_from_file_location(f"ab2_{variant}", path)
    mod = importlib.util.module_from_spec(spec); sys.modules[spec.name] = mod; spec.loader.exec_module(mod)
    mods[variant] = mod
res = {v: [] for v in mods}; outs = {}
for r in range(reps + 1):
    for v, mod in mods.items():
        gen, kw = engine.generic_args(sysm, T, rtol=1e-7, atol=sysm.default_atol(), t_eval=np.linspace(0, T, int(T) + 1))
        args = [kw[k] for k in engine.ADAPTIVE_ARGS]
        c0 = time.process_time(); w0 = time.perf_counter(); code = mod.adaptive_kernel(*args)
        cpu = time.process_time() - c0; w = time.perf_counter() - w0
        outs[v] = kw["out_y"].copy()
        if r > 0:
            res[v].append((cpu, w))
        print(v, N, T, "rep", r, "code", code, "cpu", round(cpu, 3), "wall", round(w, 3), "steps", kw["counters"][0], "nfev", kw["counters"][2],
              "load", round(os.getloadavg()[0], 2), flush=True)
    print("  outputs bitwise equal:", np.array_equal(outs["main"], outs["new"]), flush=True)
for v in res:
    c = sorted(x[0] for x in res[v]); w = sorted(x[1] for x in res[v])
    print(v, "cpu runs", [round(x[0], 2) for x in res[v]], "median cpu", round(c[len(c) // 2], 3), "median wall", round(w[len(w) // 2], 3))
