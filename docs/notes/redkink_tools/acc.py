"""tests/test_lanes_models.py::_check_accuracy's computation per member/part; KINKS env (1/0); refs cached."""
import os, sys
import numpy as np
sys.path.insert(0, os.path.join(os.getcwd(), "tests"))
import test_lanes_models as T
from ecocc.dde import engine
from ecocc.dde.adaptive import solve_dde
from ecocc.models import get_model
from ecocc.simulate import output_grid
from ecocc.system import NetworkSystem
kinks = os.environ.get("KINKS", "1") == "1"
for spec in sys.argv[1:]:
    name, scale = spec.split(":"); scale = float(scale)
    t_end, rtol = 5.0, 1e-8
    m = get_model(name)
    net = T._network(name).scaled(rtt_scale=scale)
    base = m.make_params()
    g0 = getattr(base, T.GAIN[name])
    Ps = [m.make_params(base, **{T.GAIN[name]: g0 * f}) for f in (0.5, 1.0, 1.5)]
    sysm = NetworkSystem(m, net, base, t_end)
    te = output_grid(t_end, 0.05)
    atol = sysm.default_atol()
    out, status, counters = engine.solve_adaptive_batch([sysm], [0] * len(Ps), Ps, t_end, rtol=rtol, atol=atol, t_eval=te, kinks=kinks)
    lay = sysm.layout
    iq, qs = lay["queue"].start, lay["queue"].sl
    worst = 0
    for b, P in enumerate(Ps):
        f = f"/tmp/redkink-ref_{name}_{scale}_{b}.npz"
        if not os.path.exists(f):
            prob = NetworkSystem(m, net, P, t_end).problem()
            ref = solve_dde(prob, t_end, rtol=rtol, atol=atol, t_eval=te)
            exact = solve_dde(prob, t_end, rtol=1e-11, atol=atol * 1e-3, t_eval=te)
            np.savez(f, ref=ref.y, exact=exact.y)
        z = np.load(f)
        line = []
        for pn, part, floor in (("flow", np.s_[:, :iq], 10 * rtol), ("queue", np.s_[:, qs], 1e-3), ("counters", np.s_[:, qs.stop:], 10 * rtol)):
            sc = np.maximum(1.0, np.abs(z["exact"][part])) if pn == "counters" else 1.0
            e_lane = float(np.max(np.abs(out[b][part] - z["exact"][part]) / sc))
            e_ref = float(np.max(np.abs(z["ref"][part] - z["exact"][part]) / sc))
            bound = 3 * e_ref + floor
            worst = max(worst, e_lane / bound)
            line.append(f"{pn} {e_lane:.2e}/{e_ref:.2e}/{bound:.2e}")
        print(f"{name} x{scale} kinks={kinks} m{b}: " + "; ".join(line), flush=True)
    print(f"{name} x{scale} kinks={kinks}: steps {counters[0,0]} rej {counters[0,1]} nfev {counters[0,2]} worst ratio {worst:.2f}", flush=True)
