"""A/B of the single-run adaptive kernel's crossing prediction, in one process (helper xpredict).

    python xp.py MODEL NET T VARIANTS [RTOL]

NET: an integer N (random_network(N, 1000, max_hops=5, seed=0)) or "db" (dumbbell 15,000 pkt/s, RTTs
50/100/200/400 ms, 4 flows, initial rate 10 pkt/s).  VARIANTS: comma list of "off" (predict = False, the
template's default: the kernel of main, step for step) and "on" (the prediction switched on), run in that order, alternating if repeated
(e.g. off,on,off,on).  Prints attempts, accepted, rejected, retakes (crossing / release), predictions, nfev and
process CPU time per run; saves each run's out_y to /tmp/xpredict/y_<tag>.npy.
"""
import importlib.util
import os
import sys
import time

import numpy as np

from ecocc import dumbbell, random_network
from ecocc.dde import engine
from ecocc.models import get_model
from ecocc.system import NetworkSystem

model, netspec, T, variants = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4].split(",")
rtol = float(sys.argv[5]) if len(sys.argv) > 5 else 1e-7
if netspec == "db":
    net = dumbbell(15000.0, [0.05, 0.1, 0.2, 0.4], initial_rate_pps=10.0)
else:
    net = random_network(int(netspec), 1000, max_hops=5, seed=0)
m = get_model(model)
P = m.Params()
sysm = NetworkSystem(m, net, P, T)
atol = sysm.default_atol()
t_eval = np.linspace(0, T, int(T) * 10 + 1) if netspec == "db" else np.linspace(0, T, int(T) + 1)
mods = {}
for v in sorted(set(variants)):
    v0 = v
    gen, _ = engine.generic_args(sysm, T, rtol=rtol, atol=atol, t_eval=t_eval)
    src = gen.source
    assert src.count("    predict = False\n") + src.count("    predict = True\n") == 1
    src = src.replace("    predict = False\n", "    predict = True\n")  # the template's default is off
    if v == "off":
        src = src.replace("    predict = True\n", "    predict = False\n")
    if v == "quad":  # the release prediction quadratic (3 points) instead of cubic
        src = src.replace("    rel_cubic = True\n", "    rel_cubic = False\n")
    if v == "cross":  # the crossing prediction only
        src = src.replace("    predict_rel = True\n", "    predict_rel = False\n")
    if os.environ.get("XPLOG"):  # log each predicted attempt's landing offset (tolerance units) into reals[10:]
        old = """        # bound crossings of free queues inside the step
"""
        new = """        if predicted:
            for l in range(L):
                if loc_lo[l] or loc_hi[l]:
                    ci = iq + l
                    k_ = int(reals[9])
                    if 10 + 2 * k_ + 1 < reals.size:
                        reals[10 + 2 * k_] = (y_new[ci] - (0.0 if loc_lo[l] else buf[l])) / atol_v[ci]
                        reals[11 + 2 * k_] = 1.0 if loc_lo[l] else 2.0
                        reals[9] += 1
        # bound crossings of free queues inside the step
"""
        assert src.count(old) == 1
        src = src.replace(old, new)
        v = v + "log"
    if os.environ.get("XPLOGREL"):  # log each accepted release prediction's landing: outward raw derivative / dlt
        old = """                        if lo_s / h < s_p:
                            s_p = lo_s / h
                            rel_p = True
"""
        new = old + """                            rel_l = l
                            rel_d = dlt
"""
        assert src.count(old) == 1
        src = src.replace(old, new)
        src = src.replace("            rel_p = False\n", "            rel_p = False\n            rel_l = -1\n            rel_d = 1.0\n")
        old = """        if changed:
            # counters that depend"""
        new = """        if was_pred and rel_l >= 0 and not predicted:
            k_ = int(reals[9])
            if 10 + 2 * k_ + 1 < reals.size:
                reals[10 + 2 * k_] = f_raw[iq + rel_l] * (-1.0 if used_lo[rel_l] else 1.0) / rel_d
                reals[11 + 2 * k_] = 1.0 if used_lo[rel_l] else 2.0
                reals[9] += 1
""" + old
        assert src.count(old) == 1
        src = src.replace(old, new)
        v = v + "lr"
    if os.environ.get("XPMARGIN"):
        src = src.replace("    pred_margin = 3.0\n", f"    pred_margin = {float(os.environ['XPMARGIN'])}\n")
        v = v + "m" + os.environ["XPMARGIN"]
    path = f"/tmp/xpredict/mods/xp_{v}_{gen.name}.py"
    if not os.path.exists(path) or open(path).read() != src:
        open(path, "w").write(src)
    spec = importlib.util.spec_from_file_location(f"xp_{v}_{gen.name}", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    mods[v0] = mod
for i, v in enumerate(variants):
    _, kw = engine.generic_args(sysm, T, rtol=rtol, atol=atol, t_eval=t_eval)
    kw["counters"] = np.zeros(13, dtype=np.int64)
    if os.environ.get("XPLOG") or os.environ.get("XPLOGREL"):
        kw["reals"] = np.zeros(10 + 2 * 200000)
    args = [kw[k] for k in engine.ADAPTIVE_ARGS]
    c0, w0 = time.process_time(), time.perf_counter()
    code = mods[v].adaptive_kernel(*args)
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    c = kw["counters"]
    la = os.getloadavg()[0]
    print(f"{model} {netspec} T={T:g} rtol={rtol:g} {v}: code {code} attempts {c[6]} accepted {c[0]} rejected {c[1]} "
          f"retake_cross {c[7]} retake_release {c[8]} pred {c[9]} pred_held {c[10]} pred_over {c[11]} pred_rel {c[12]} nfev {c[2]} "
          f"clamp {c[3]} cpu {cpu:.2f} wall {wall:.2f} load {la:.1f}", flush=True)
    tag = f"{model}_{netspec}_{T:g}_{rtol:g}_{v}"
    np.save(f"/tmp/xpredict/y_{tag}.npy", kw["out_y"][: c[5]])
    if os.environ.get("XPLOG") or os.environ.get("XPLOGREL"):
        r = kw["reals"]
        k = int(r[9])
        np.save(f"/tmp/xpredict/log_{tag}.npy", r[10:10 + 2 * k].reshape(k, 2))
