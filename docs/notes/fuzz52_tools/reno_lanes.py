"""The lock-step windows on drop-tail Reno (tests/test_hold_images.py's case) against rtol = atol = 1e-12, and the single-run kernel's.
PYTHONPATH=. python docs/notes/fuzz52_tools/reno_lanes.py"""
import numpy as np, sys
from ecocc import dumbbell
from ecocc.dde import engine
from ecocc.dde.engine import solve_adaptive_batch
from ecocc.models import get_model
from ecocc.system import NetworkSystem
T_END = 60.0; T_OUT = np.linspace(1.0, T_END, 600)
m = get_model("reno")
def S(): return NetworkSystem(m, dumbbell(15000.0, [0.05, 0.1, 0.2, 0.4], buffer_pkts=100.0), m.Params(aqm="droptail"), T_END)
s = S(); b = s.layout["flow:W"]
W = lambda y: np.exp(y[:, b.sl]) if b.log else y[:, b.sl]
ref = engine.solve_adaptive(s, T_END, rtol=1e-12, atol=np.full(s.n, 1e-12), t_eval=T_OUT)
Wr = W(ref.y)
nq = s.layout["queue"].sl.stop
for rtol in (1e-7, 1e-8):
    P = m.Params(aqm="droptail")
    for ov, kk in ((True, True), (False, False)):
        out, st, cnt = solve_adaptive_batch([s], np.zeros(1, dtype=np.int64), [P], T_END, rtol=rtol, t_eval=T_OUT, components=np.arange(nq), dynamics_only=True, overlap=ov, kinks=kk)
        print(rtol, ov, kk, st[0].value, "lanes", np.max(np.abs(W(out[0]) - Wr) / Wr), flush=True)
    got = engine.solve_adaptive(S(), T_END, rtol=rtol, atol=s.default_atol(), t_eval=T_OUT)
    print(rtol, "single", np.max(np.abs(W(got.y) - Wr) / Wr), flush=True)
