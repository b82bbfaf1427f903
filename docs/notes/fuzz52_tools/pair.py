"""Case 52 (seed 2): members of one lock-step group (comma-separated b values) against the compiled single run at rtol 1e-11,
then where member I (argv 3) first departs.  PYTHONPATH=. python docs/notes/fuzz52_tools/pair.py 0.1082,0.1897 1e-7 1 1e-6"""
import sys, numpy as np
sys.path.insert(0, "benchmarks")
import engines_fuzz as ef
from ecocc import simulate
from ecocc.dde.engine import solve_adaptive_batch
from ecocc.models import get_model
from ecocc.results import active_mask, flow_rates, flow_values
from ecocc.simulate import output_grid
from ecocc.system import NetworkSystem
c = ef.draw_case(2, 52)
net = ef.build_network(c["topo"]); m = get_model("stcp")
t_end = c["t_end_s"]; bs = [float(x) for x in sys.argv[1].split(",")]; rtol = float(sys.argv[2])
Ps = [m.make_params(None, aqm="droptail", b=b) for b in bs]
sysm = NetworkSystem(m, net, m.make_params(None, aqm="droptail"), t_end, past="silent")
te = output_grid(t_end, None); act = active_mask(sysm.a, te)
out, st, cnt = solve_adaptive_batch([sysm], np.zeros(len(bs), dtype=np.int64), Ps, t_end, rtol=rtol, t_eval=te, components=np.r_[0, 1], dynamics_only=True, overlap=True, kinks=True)
for i, (b, P) in enumerate(zip(bs, Ps)):
    ref = simulate(net, m, P, t_end_s=t_end, engine="auto", rtol=1e-11, past="silent").to_xarray()["rate"].values[:, 0]
    Y = out[i]; full = np.zeros((Y.shape[0], sysm.n)); full[:, :1] = Y[:, :1]
    r = flow_rates(sysm, flow_values(sysm, full), Y[:, 1:], act, P)[:, 0]
    e = np.abs(r - ref); j = e.argmax()
    print(bs, b, "err %.3g pps at t=%.3f" % (e.max(), te[j]), "first >0.5 at", te[np.flatnonzero(e > 0.5)[0]] if (e > 0.5).any() else None)
i = int(sys.argv[3]); P = Ps[i]
dt = 0.0005; te2 = np.arange(0, t_end + dt / 2, dt); act2 = active_mask(sysm.a, te2)
out, st, cnt = solve_adaptive_batch([sysm], np.zeros(len(bs), dtype=np.int64), Ps, t_end, rtol=rtol, t_eval=te2, components=np.r_[0, 1], dynamics_only=True, overlap=True, kinks=True)
rx = simulate(net, m, P, t_end_s=t_end, engine="auto", rtol=1e-11, past="silent", output_dt_s=dt).to_xarray()
ref = rx["rate"].values[:, 0]; rq = rx["queue"].values[:, 0]
Y = out[i]; full = np.zeros((Y.shape[0], sysm.n)); full[:, :1] = Y[:, :1]
r = flow_rates(sysm, flow_values(sysm, full), Y[:, 1:], act2, P)[:, 0]
e = np.abs(r - ref) / ref
for thr in (1e-7, 1e-6, 1e-5, 1e-4):
    j = np.flatnonzero(e > thr); print(thr, te2[j[0]] if len(j) else None)
j = np.flatnonzero(e > float(sys.argv[4]))[0]
for k in range(max(0, j - 6), j + 6): print("%.4f r %.9g %.9g q %.9g %.9g rel %.2g" % (te2[k], ref[k], r[k], rq[k], Y[k, 1], e[k]))
# the other lane's queue near there
o = out[1 - i]
print("other lane q:", [("%.4f" % te2[k], round(float(o[k, 1]), 5)) for k in range(max(0, j - 40), j + 2, 4)])
