import sys, time, numpy as np
from ecocc import random_network
from ecocc.models import get_model
from ecocc.system import NetworkSystem
from ecocc.dde import engine
N = int(sys.argv[1]); T = float(sys.argv[2])
net = random_network(N, 1000, max_hops=5, seed=0)
m = get_model("aecp"); sysm = NetworkSystem(m, net, m.Params(), T)
sol = engine.solve_adaptive(sysm, T, rtol=1e-7, atol=sysm.default_atol(), t_eval=np.linspace(0, T, int(T) + 1))
t0 = time.perf_counter()
sol = engine.solve_adaptive(sysm, T, rtol=1e-7, atol=sysm.default_atol(), t_eval=np.linspace(0, T, int(T) + 1))
print(N, T, "wall", round(time.perf_counter() - t0, 3), "steps", sol.n_steps, "rej", sol.n_rejected, "nfev", sol.nfev, sol.status, flush=True)
np.save(f"/tmp/aecpscale/y_{N}_{T:g}_{sys.argv[3] if len(sys.argv)>3 else 'x'}.npy", sol.y)
