"""Stability map of Scalable TCP on case 52's drop-tail network (b x RTT scale, 30 s, window 5 s); NPTS=4 for the 4 x 4 subgrid.
PYTHONPATH=. python docs/notes/fuzz52_tools/map.py stcp numba out.nc   (or numpy)"""
import sys, json, time, numpy as np
import os
sys.path.insert(0, "benchmarks")
import engines_fuzz as ef
from ecocc.batch import simulate_map
c = ef.draw_case(2, 52)
net = ef.build_network(c["topo"])
model = sys.argv[1]; eng = sys.argv[2]; out = sys.argv[3]
n = int(os.environ.get("NPTS", "10")); xs = np.round(np.geomspace(0.05, 0.5, 10), 4)[::10 // n][:n]
xn = "b"
ys = np.round(np.geomspace(0.5, 4.0, 10), 4)[::10 // n][:n]
t0 = time.perf_counter()
ds = simulate_map(net, model, xn, xs, "rtt_scale", ys, t_end_s=30.0, window_s=5.0, engine=eng, aqm="droptail")
wall = time.perf_counter() - t0
ds.to_netcdf(out)
print(eng, "wall", round(wall, 1), {k: int(v) for k, v in zip(*np.unique(ds["regime"].values.astype(str), return_counts=True))})
