"""Case 52 (seed 2), b = 0.1897: how far the tight run moves for a capacity 1e-9, 1e-8, 1e-7 (relative) larger.
PYTHONPATH=. python docs/notes/fuzz52_tools/sensitivity.py"""
import sys, numpy as np
sys.path.insert(0, "benchmarks")
import engines_fuzz as ef
from ecocc import simulate
from ecocc.models import get_model
c = ef.draw_case(2, 52); m = get_model("stcp")
P = m.make_params(None, aqm="droptail", b=0.1897)
r0 = simulate(ef.build_network(c["topo"]), m, P, t_end_s=11.8, engine="auto", rtol=1e-11, past="silent").to_xarray()["rate"].values[:, 0]
for d in (1e-9, 1e-8, 1e-7):
    topo = dict(c["topo"]); topo["capacity_pps"] = topo["capacity_pps"] * (1 + d)
    r = simulate(ef.build_network(topo), m, P, t_end_s=11.8, engine="auto", rtol=1e-11, past="silent").to_xarray()["rate"].values[:, 0]
    print("capacity +%g relative: rate moves by %.3g pps at most" % (d, np.abs(r - r0).max()))
