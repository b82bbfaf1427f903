import dataclasses, numpy as np, time
from ecocc import dumbbell, simulate
net = dumbbell(2000.0, [0.004, 0.008, 0.012], buffer_pkts=100, initial_rate_pps=100.0, starts_s=[0.0, 0.5, 1.0])
for label, kw, nn in (("sdd", dict(rtt_includes_queueing=True), net),
                      ("fwd", {}, dataclasses.replace(net, flows=tuple(dataclasses.replace(f, forward_delays_s=(0.002,)) for f in net.flows)))):
    out = {}
    for ov in (False, True):
        tr = simulate(nn, "reno", t_end_s=10.0, engine="numba", overlap=ov, rtol=1e-9, **kw)
        out[ov] = tr
        print(label, ov, tr.status, tr.solver["n_steps"], tr.solver["nfev"], flush=True)
    ref = simulate(nn, "reno", t_end_s=10.0, engine="numba", rtol=1e-11, **kw)
    for ov in (False, True):
        print(label, ov, "max |dq| vs rtol 1e-11 capped:", float(np.max(np.abs(out[ov].queue_pkts - ref.queue_pkts))), "max |dw|:", float(np.max(np.abs(out[ov].rate_pps - ref.rate_pps))))
