import sys, numpy as np
sys.path.insert(0, "."); sys.path.insert(0, "tests")
import test_lanes_models as T
from ecocc.models import get_model
from ecocc.system import NetworkSystem
from ecocc.dde import engine
from ecocc.dde.adaptive import solve_dde
from ecocc.simulate import output_grid
name, scale, kinks = sys.argv[1], float(sys.argv[2]), sys.argv[3] == "1"
t_end, rtol = 5.0, 1e-8
m = get_model(name); net = T._network(name).scaled(rtt_scale=scale)
base = m.make_params(); g0 = getattr(base, T.GAIN[name])
Ps = [m.make_params(base, **{T.GAIN[name]: g0 * f}) for f in (0.5, 1.0, 1.5)]
sysm = NetworkSystem(m, net, base, t_end); te = output_grid(t_end, 0.05); atol = sysm.default_atol()
out, status, counters = engine.solve_adaptive_batch([sysm], [0] * 3, Ps, t_end, rtol=rtol, atol=atol, t_eval=te, kinks=kinks)
lay = sysm.layout; iq = lay["queue"].start; qs = lay["queue"].sl
logc = np.zeros(sysm.n, bool)
for b in lay.values():
    if b.log: logc[b.sl] = True
for b, P in enumerate(Ps):
    prob = NetworkSystem(m, net, P, t_end).problem()
    ref = solve_dde(prob, t_end, rtol=rtol, atol=atol, t_eval=te)
    exact = solve_dde(prob, t_end, rtol=1e-11, atol=atol * 1e-3, t_eval=te)
    f = np.s_[:, :iq]
    # relative error of the flow states: |err| in ln x for a log state, |err| / max(1, |x|) for a natural one
    scl = np.where(logc[:iq], 1.0, np.maximum(1.0, np.abs(exact.y[f])))
    el_abs = np.max(np.abs(out[b][f] - exact.y[f])); er_abs = np.max(np.abs(ref.y[f] - exact.y[f]))
    el = np.max(np.abs(out[b][f] - exact.y[f]) / scl); er = np.max(np.abs(ref.y[f] - exact.y[f]) / scl)
    eq_l = np.max(np.abs(out[b][:, qs] - exact.y[:, qs])); eq_r = np.max(np.abs(ref.y[:, qs] - exact.y[:, qs]))
    c = np.s_[:, iq + sysm.n_links:]; sc_c = np.maximum(1.0, np.abs(exact.y[c]))
    cl = np.max(np.abs(out[b][c] - exact.y[c]) / sc_c); cr = np.max(np.abs(ref.y[c] - exact.y[c]) / sc_c)
    print(f"{name} x{scale} kinks={kinks} member {b} log={bool(logc[:iq].any())}: flows abs lane {el_abs:.3g} numpy {er_abs:.3g} | rel lane {el:.3g} numpy {er:.3g} | queue lane {eq_l:.3g} numpy {eq_r:.3g} | counters lane {cl:.3g} numpy {cr:.3g}", flush=True)
    names = np.empty(sysm.n, dtype=object)
    for k, bl in lay.items():
        for i in range(bl.start, bl.start + bl.size): names[i] = f"{k}[{i-bl.start}]"
    e = np.abs(out[b][c] - exact.y[c]) / sc_c
    i, j = np.unravel_index(np.argmax(e), e.shape)
    jj = iq + sysm.n_links + j
    print("   worst counter", names[jj], "t", te[i], "lane", out[b][i, jj], "numpy", ref.y[i, jj], "exact", exact.y[i, jj])
    if b == 0:
        for tt in range(0, len(te), 10):
            print("     t", te[tt], "lane-exact", out[b][tt, jj] - exact.y[tt, jj], "numpy-exact", ref.y[tt, jj] - exact.y[tt, jj], "q", exact.y[tt, iq])
