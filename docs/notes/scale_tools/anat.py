"""Instrumented copy of the generated adaptive kernel: logs every attempt (scale helper)."""
import sys, time, json, importlib.util, math, os
import numpy as np
from ecocc import random_network
from ecocc.models import get_model
from ecocc.system import NetworkSystem
from ecocc.dde import engine, codegen

model = sys.argv[1]; N = int(sys.argv[2]); t_end = float(sys.argv[3]) if len(sys.argv) > 3 else 30.0
net = random_network(N, 1000, max_hops=5, seed=0)
m = get_model(model)
P = m.Params()
sysm = NetworkSystem(m, net, P, t_end)
atol = sysm.default_atol()
t_eval = np.linspace(0, t_end, int(t_end) + 1)
gen, kw = engine.generic_args(sysm, t_end, rtol=1e-7, atol=atol, t_eval=t_eval)
import os as _o
if _o.environ.get("NOQ"):
    qs = sysm.layout["queue"].start
    kw["dcomp"] = np.ascontiguousarray(kw["dcomp"][(kw["dcomp"] < qs) | (kw["dcomp"] >= qs + sysm.n_links)])
if _o.environ.get("TAG"):
    model_tag = _o.environ["TAG"]
else:
    model_tag = ""
src = gen.source
# --- patch the kernel
src = src.replace("max_hist_bytes, dcomp, hsrc, iq, L, buf, D, Wk, counters,\n                    reals):",
                  "max_hist_bytes, dcomp, hsrc, iq, L, buf, D, Wk, counters,\n                    reals, LOG, NLOG):")
assert "LOG, NLOG" in src
src = src.replace("""            if e > err:
                err = e""", """            if e > err:
                err = e
                qmax = q""")
src = src.replace("""        for jj in range(dcomp.size):
            q = dcomp[jj]""", """        err_n = err
        qmax_n = qmax
        for jj in range(dcomp.size):
            q = dcomp[jj]""")
src = src.replace("""        err = 0.0
        for q in range(n):""", """        err = 0.0
        qmax = -1
        for q in range(n):""")
src = src.replace("""            n_rej += 1
            rej_step = True
            h *= max(0.2, 0.9 * err ** expo)""", """            n_rej += 1
            rej_step = True
            if NLOG[0] < LOG.shape[0]:
                r_ = NLOG[0]; LOG[r_, 0] = t; LOG[r_, 1] = h; LOG[r_, 2] = 1; LOG[r_, 3] = err_n; LOG[r_, 4] = err
                LOG[r_, 5] = qmax; LOG[r_, 6] = qmax_n; NLOG[0] += 1
            h *= max(0.2, 0.9 * err ** expo)""")
src = src.replace("""                h = s_star * h
                retake = True""", """                if NLOG[0] < LOG.shape[0]:
                    r_ = NLOG[0]; LOG[r_, 0] = t; LOG[r_, 1] = h; LOG[r_, 2] = 3; LOG[r_, 3] = err_n; LOG[r_, 4] = err
                    LOG[r_, 5] = s_star; LOG[r_, 6] = qmax_n; NLOG[0] += 1
                h = s_star * h
                retake = True""")
src = src.replace("""        was_retake = retake
        retake = False""", """        was_retake = retake
        retake = False
        if NLOG[0] < LOG.shape[0]:
            r_ = NLOG[0]; LOG[r_, 0] = t; LOG[r_, 1] = h; LOG[r_, 2] = 0; LOG[r_, 3] = err_n; LOG[r_, 4] = err
            LOG[r_, 5] = qmax; LOG[r_, 6] = qmax_n; LOG[r_, 7] = (1 if hit_bp else 0) + (2 if was_retake else 0) + (4 if any_viol else 0); NLOG[0] += 1""")
src = src.replace("@njit(cache=True, nogil=True)\ndef adaptive_kernel", "@njit(cache=False, nogil=True)\ndef adaptive_kernel")
src = src.replace("cache=True", "cache=False")
d = "/tmp/scale/mods"; os.makedirs(d, exist_ok=True)
path = f"{d}/instr_{gen.name}.py"
if os.environ.get("HWANT"):
    src = src.replace("""        h = min(h, max_step, dmin)
        hit_bp = False""", """        h = min(h, max_step, dmin)
        h_want = h
        hit_bp = False""")
    src = src.replace("""        gmax = 1.0 if rej_step else 5.0  # no growth right after a rejected attempt
        rej_step = False""", """        gmax = 1.0 if rej_step else 5.0  # no growth right after a rejected attempt
        trunc = (hit_bp or was_retake) and not rej_step
        rej_step = False""")
    src = src.replace("""            h = (t - t_prev) * gmax
        if n_steps >= max_steps:""", """            h = (t - t_prev) * gmax
        if trunc and h < h_want:
            h = h_want
        if n_steps >= max_steps:""")
    assert "h_want = h" in src and "h = h_want" in src
if os.environ.get("XFIRST"):
    old = """        if err > 1.0 and not retake:
            if h <= hmin * 4:"""
    new = """        if err > 1.0 and not retake:
            # experiment: a crossing inside the failed step is located first (the retake is error-checked below)
            s_x = 1.0
            for l in range(L):
                qv = y_new[iq + l]
                if not (sat_lo[l] or sat_hi[l]) and (qv < 0.0 or qv > buf[l]):
                    level = 0.0 if qv < 0.0 else buf[l]
                    s_cross[l] = _first_crossing(y[iq + l], y_new[iq + l], f[iq + l], K[n_st, iq + l], h, level)
                    s_x = min(s_x, s_cross[l])
                else:
                    s_cross[l] = 1.0
            if s_x * h > 4 * hmin and s_x < 1.0 - 1e-9:
                for l in range(L):
                    located = s_cross[l] <= s_x * (1 + 1e-9)
                    loc_lo[l] = located and y_new[iq + l] < 0.0
                    loc_hi[l] = located and y_new[iq + l] > buf[l]
                h = s_x * h
                retake = True
                n_rej += 1
                continue
        if err > 1.0:
            retake = False
            if h <= hmin * 4:"""
    assert old in src
    src = src.replace(old, new)
open(path, "w").write(src)
spec = importlib.util.spec_from_file_location("instr_" + gen.name, path)
mod = importlib.util.module_from_spec(spec); sys.modules[spec.name] = mod; spec.loader.exec_module(mod)
LOG = np.zeros((3_000_000, 8)); NLOG = np.zeros(1, dtype=np.int64)
args = [kw[k] for k in engine.ADAPTIVE_ARGS] + [LOG, NLOG]
t0 = time.perf_counter()
code = mod.adaptive_kernel(*args)
wall = time.perf_counter() - t0
c = kw["counters"]
print("code", code, "wall(incl compile)", wall, "steps", c[0], "rej", c[1], "nfev", c[2], "nclamp", c[3], "dmin", kw["dmin"],
      "n", sysm.n, "nbps", kw["bps"].size, "ndcomp", kw["dcomp"].size)
np.save(f"/tmp/scale/outy_{model}{model_tag}_{N}.npy", kw["out_y"])
np.save(f"/tmp/scale/log_{model}{model_tag}_{N}.npy", LOG[:NLOG[0]])
json.dump(dict(layout={k: [v.start, v.start + v.size] for k, v in sysm.layout.items()}, bps=kw["bps"].tolist(), dmin=kw["dmin"],
               n=sysm.n, nfev=int(c[2]), dcomp=kw["dcomp"].tolist()), open(f"/tmp/scale/meta_{model}{model_tag}_{N}.json", "w"))
