"""Errors of the xp.py runs against a tight run, in tolerance units (atol + rtol |y_ref|), by state group.

    python cmp.py MODEL NET T    (reads /tmp/xpredict/y_<MODEL>_<NET>_<T>_{1e-10_off, 1e-07_off, 1e-07_on}.npy)
"""
import sys

import numpy as np

from ecocc import dumbbell, random_network
from ecocc.models import get_model
from ecocc.system import NetworkSystem

model, netspec, T = sys.argv[1], sys.argv[2], float(sys.argv[3])
net = dumbbell(15000.0, [0.05, 0.1, 0.2, 0.4], initial_rate_pps=10.0) if netspec == "db" else \
    random_network(int(netspec), 1000, max_hops=5, seed=0)
m = get_model(model)
sysm = NetworkSystem(m, net, m.Params(), T)
atol = sysm.default_atol()
tag = f"/tmp/xpredict/y_{model}_{netspec}_{T:g}"
ref = np.load(f"{tag}_1e-10_off.npy")
sc = atol + 1e-7 * np.abs(ref)
for v in ("off", "on"):
    y = np.load(f"{tag}_1e-07_{v}.npy")
    e = np.abs(y - ref) / sc
    parts = []
    for name, b in sysm.layout.items():
        parts.append(f"{name} {e[:, b.sl].max():.3g}")
    print(f"{model} {netspec} {v}: max {e.max():.3g} (median {np.median(e):.3g}) | " + ", ".join(parts))
