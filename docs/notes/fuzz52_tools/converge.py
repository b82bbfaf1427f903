"""Case 52 (seed 2), one member alone: the lock-step kernel (overlap+kinks, and neither) and the NumPy solver at rtol 1e-6..1e-10
against the compiled single run at rtol 1e-11 (the largest rate error, packets/s).  From the repository root:
PYTHONPATH=. python docs/notes/fuzz52_tools/converge.py 0.1045"""
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
t_end = c["t_end_s"]; b = float(sys.argv[1])
P = m.make_params(None, aqm="droptail", b=b)
sysm = NetworkSystem(m, net, m.make_params(None, aqm="droptail"), t_end, past="silent")
comps = np.r_[0, 1]
te = output_grid(t_end, None)
d = dict(t_r=simulate(net, m, P, t_end_s=t_end, engine="auto", rtol=1e-11, past="silent").to_xarray()["rate"].values[:,0])
act = active_mask(sysm.a, te)
for rtol in (1e-6, 1e-7, 1e-8, 1e-9, 1e-10):
  for ov, kk in ((True, True), (False, False)):
    out, st, cnt = solve_adaptive_batch([sysm], np.zeros(1, dtype=np.int64), [P], t_end, rtol=rtol, t_eval=te, components=comps, dynamics_only=True, overlap=ov, kinks=kk)
    Y = out[0]; full = np.zeros((Y.shape[0], sysm.n)); full[:, :1] = Y[:, :1]
    r = flow_rates(sysm, flow_values(sysm, full), Y[:, 1:], act, P)[:, 0]
    tr = simulate(net, m, P, t_end_s=t_end, engine="numpy", rtol=rtol, past="silent").to_xarray()["rate"].values[:,0] if ov else None
    print(rtol, ov, kk, st[0].value, cnt[0][:3], "lanes err", np.abs(r - d["t_r"]).max(), "numpy err", None if tr is None else np.abs(tr - d["t_r"]).max(), flush=True)
