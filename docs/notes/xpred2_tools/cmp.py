"""Errors of saved runs against a tight one, in tolerance units, per state group (docs/notes/xpred2.md).

Usage: ``PYTHONPATH=<tree> python cmp.py MODEL N T_END TIGHT.npz RUN.npz [RUN.npz ...]`` (files from ``xp.py --save``):
prints, per run and per group of :attr:`ecocc.system.NetworkSystem.layout`, the largest
``|y - y_tight| / (atol + 1e-7 |y_tight|)`` over the samples (``atol``: the model's default), and the median.
"""
import sys

import numpy as np

from ecocc import random_network
from ecocc.models import get_model
from ecocc.system import NetworkSystem

model, n, t_end = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
m = get_model(model)
sysm = NetworkSystem(m, random_network(n, 1000, max_hops=5, seed=0), m.make_params(), t_end)
atol = sysm.default_atol()
tight = np.load(sys.argv[4])["y"]
for f in sys.argv[5:]:
    y = np.load(f)["y"]
    e = np.abs(y - tight) / (atol + 1e-7 * np.abs(tight))
    groups = " ".join(f"{name}={float(np.max(e[:, g.sl])):.3g}" for name, g in sysm.layout.items())
    print(f"{f}: {groups} median={float(np.median(e)):.2g}")
