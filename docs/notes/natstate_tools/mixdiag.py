import sys, math, numpy as np
sys.path.insert(0, ".")
sys.path.insert(0, "tests")
import test_mixed_compiled as T
from ecocc.dde.adaptive import solve_dde
from ecocc.dde import engine
from ecocc.simulate import output_grid
from ecocc.network import Link, Flow, Network, CrossTraffic
b = float(sys.argv[1])
links = (Link("a", 1000.0, delay_s=0.004, buffer_pkts=b), Link("b", 1500.0, delay_s=0.006, buffer_pkts=b),
         Link("c", 1200.0, delay_s=0.005, buffer_pkts=b))
spec = [("f1", ("a", "b", "c"), 0.13, 0.0, math.inf, "symbiosis"), ("f2", ("a",), 0.041, 0.7, math.inf, "reno"),
        ("f3", ("b", "c"), 0.087, 1.3, 6.13, "symbiosis"), ("f4", ("c",), 0.29, 0.0, 7.31, "reno"),
        ("f5", ("a", "b"), 0.062, 2.1, math.inf, "reno"), ("f6", ("b",), 0.18, 3.37, math.inf, "symbiosis"),
        ("f7", ("a",), 0.11, 0.0, math.inf, "symbiosis")]
flows = tuple(Flow(n, r, rtt, start_s=s0, stop_s=s1, initial_rate_pps=100.0, protocol=pr) for n, r, rtt, s0, s1, pr in spec)
ct = (CrossTraffic("b", kind="schedule", schedule=((4.0, 300.0), (5.2, 0.0))),)
net = Network(links, flows, cross_traffic=ct)
sysm = T._system(net, 10.0, model="symbiosis", reno__aqm="droptail")
te = output_grid(10.0, 0.05); atol = sysm.default_atol(); rtol = T.RTOL
ref = solve_dde(sysm.problem(), 10.0, rtol=rtol, atol=atol, t_eval=te)
lost = ref.y[:, sysm.layout["lost"].sl].max(axis=1)
until = float(ref.t[np.argmax(lost > 1e-6)]) + 0.4
got = engine.solve_adaptive(sysm, 10.0, rtol=rtol, atol=atol, t_eval=te)
tight = solve_dde(sysm.problem(), 10.0, rtol=rtol * 1e-3, atol=atol * 1e-3, t_eval=te)
lay = sysm.layout
names = np.empty(sysm.n, dtype=object)
for k, bl in lay.items():
    for i in range(bl.start, bl.start + bl.size): names[i] = f"{k}[{i-bl.start}]{'(log)' if bl.log else ''}"
cols = np.ones(sysm.n, bool); cols[lay["lost"].sl] = cols[lay["departed"].sl] = False
keep = te <= until
sc = (atol + rtol * np.abs(ref.y))[keep]
d = (np.abs(got.y - ref.y)[keep] / sc); d[:, ~cols] = 0
i, j = np.unravel_index(np.argmax(d), d.shape)
print("until", until, "RTOL", rtol, "max scaled", d[i, j], "at t", te[keep][i], names[j], "got", got.y[keep][i, j], "ref", ref.y[keep][i, j], "tight", tight.y[keep][i, j])
sct = (atol + rtol * np.abs(tight.y))[keep]
for nm, y in (("got", got.y), ("ref", ref.y)):
    e = np.abs(y - tight.y)[keep] / sct; e[:, ~cols] = 0
    i, j = np.unravel_index(np.argmax(e), e.shape)
    print(nm, "vs tight max", e[i, j], "at", te[keep][i], names[j])
