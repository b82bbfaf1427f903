"""XCP at RTT x 0.5 (tests/test_lanes_models.py's case): members grouped as given (gain factors, comma-separated) against rtol 1e-11.
PYTHONPATH=. python docs/notes/fuzz52_tools/xcp_groups.py xcp 0.5 0.5,1.0,1.5"""
import sys, numpy as np
sys.path.insert(0, "tests")
import test_lanes_models as T
from ecocc.dde import engine
from ecocc.dde.adaptive import solve_dde
from ecocc.models import get_model
from ecocc.simulate import output_grid
from ecocc.system import NetworkSystem
name, scale = sys.argv[1], float(sys.argv[2])
t_end, rtol = 5.0, 1e-8
m = get_model(name); net = T._network(name).scaled(rtt_scale=scale); base = m.make_params()
g0 = getattr(base, T.GAIN[name]); fs = [float(x) for x in sys.argv[3].split(",")]
Ps = [m.make_params(base, **{T.GAIN[name]: g0 * f}) for f in fs]
sysm = NetworkSystem(m, net, base, t_end); te = output_grid(t_end, 0.05); atol = sysm.default_atol()
iq = sysm.layout["queue"].start
for kinks in (False, True):
    out, status, cnt = engine.solve_adaptive_batch([sysm], [0] * len(Ps), Ps, t_end, rtol=rtol, atol=atol, t_eval=te, kinks=kinks)
    for b, P in enumerate(Ps):
        prob = NetworkSystem(m, net, P, t_end).problem()
        ex = solve_dde(prob, t_end, rtol=1e-11, atol=atol * 1e-3, t_eval=te)
        el = np.abs(out[b][:, :iq] - ex.y[:, :iq])
        print(kinks, fs[b], "steps", cnt[b][:2], "lane err %.3g" % el.max(), flush=True)
