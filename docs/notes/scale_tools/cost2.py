"""In-situ cost split: the real kernel vs variants that evaluate every stage's rhs twice, or read every
delayed value twice (scale helper)."""
import sys, time, importlib.util
import numpy as np
from ecocc import random_network
from ecocc.models import get_model
from ecocc.system import NetworkSystem
from ecocc.dde import engine

model = sys.argv[1]; N = int(sys.argv[2]); T = float(sys.argv[3])
net = random_network(N, 1000, max_hops=5, seed=0)
m = get_model(model); sysm = NetworkSystem(m, net, m.Params(), 30.0)
gen, _ = engine.generic_args(sysm, T, rtol=1e-7, atol=sysm.default_atol(), t_eval=np.linspace(0, T, 5))
src0 = gen.source.replace("cache=True", "cache=False")
stage = "            _model_rhs(s_t, nud, yi, sat_lo, sat_hi, K[i], D, Wk, t0, y0, HT, HY, HFA, HFB, m)\n"
assert stage in src0
look = "            if md == 3:\n                lv_r = w0 * HY[k, HC_L0 + l] + w1 * HFA[k, HC_L0 + l] + w2 * HY[k + 1, HC_L0 + l] + w3 * HFB[k, HC_L0 + l]\n"
assert look in src0
variants = {"full": src0, "rhs_x2": src0.replace(stage, stage + stage),
}
for tag, src in variants.items():
    path = f"/tmp/scale/mods/cost2_{tag}_{gen.name}.py"; open(path, "w").write(src)
    spec = importlib.util.spec_from_file_location(f"cost2_{tag}", path)
    mod = importlib.util.module_from_spec(spec); sys.modules[spec.name] = mod; spec.loader.exec_module(mod)
    for tt in (0.02, T):
        _, kw = engine.generic_args(sysm, tt, rtol=1e-7, atol=sysm.default_atol(), t_eval=np.linspace(0, tt, 5))
        t0 = time.perf_counter(); code = mod.adaptive_kernel(*(kw[k] for k in engine.ADAPTIVE_ARGS)); w = time.perf_counter() - t0
    c = kw["counters"]
    print(f"{model} N={N} T={T} [{tag}] wall {w:.2f} s steps {c[0]} rej {c[1]} nfev {c[2]} per-attempt {w/(c[0]+c[1])*1e3:.3f} ms", flush=True)
