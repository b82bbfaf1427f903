import sys, numpy as np
sys.path.insert(0, sys.argv[1] + "/tests")
import test_lanes_models as T
from ecocc.dde import engine
from ecocc.models import get_model
from ecocc.system import NetworkSystem
from ecocc.dde.adaptive import solve_dde
from ecocc.simulate import output_grid
name = "xcp"
for scale in (1.0, 0.5):
    t_end, rtol = 5.0, 1e-8
    m = get_model(name); net = T._network(name).scaled(rtt_scale=scale); base = m.make_params()
    g0 = getattr(base, T.GAIN[name]); Ps = [m.make_params(base, **{T.GAIN[name]: g0 * f}) for f in (0.5, 1.0, 1.5)]
    sysm = NetworkSystem(m, net, base, t_end); te = output_grid(t_end, 0.05); atol = sysm.default_atol()
    out, status, cnt = engine.solve_adaptive_batch([sysm], [0]*3, Ps, t_end, rtol=rtol, atol=atol, t_eval=te, kinks=False)
    iq = sysm.layout["queue"].start
    for b, P in enumerate(Ps):
        prob = NetworkSystem(m, net, P, t_end).problem()
        ref = solve_dde(prob, t_end, rtol=rtol, atol=atol, t_eval=te)
        ex = solve_dde(prob, t_end, rtol=1e-11, atol=atol * 1e-3, t_eval=te)
        el = np.abs(out[b][:, :iq] - ex.y[:, :iq]); er = np.abs(ref.y[:, :iq] - ex.y[:, :iq])
        i = np.unravel_index(el.argmax(), el.shape)
        print(f"scale {scale} member {b}: lanes {el.max():.3e} at t={te[i[0]]:.2f} comp {i[1]}  numpy {er.max():.3e}  steps {cnt[b,0]} rej {cnt[b,1]}")
