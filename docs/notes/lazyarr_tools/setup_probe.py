"""Peak RSS of each set-up stage of a compiled run (docs/notes/lazyarr.md).

    python docs/notes/lazyarr_tools/setup_probe.py MODEL N [PAST]

Stages: random_network(N, 1000, max_hops=5, seed=0); NetworkSystem(...) as simulate() builds it;
engine.generic_args (the compiled adaptive kernel's arguments, no integration).  Before each stage the
process's peak RSS (VmHWM) is reset (``echo 5 > /proc/self/clear_refs``), so each stage's row is its own peak.
Also lists the system's largest NumPy arrays (attributes, lookups) after the set-up.
"""
import json, os, sys, time
import numpy as np


def status(key):
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024.0
    return -1.0


def reset_peak():
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")


model, N = sys.argv[1], int(float(sys.argv[2]))
past = sys.argv[3] if len(sys.argv) > 3 else "silent"
from ecocc import random_network, simulate  # noqa: E402
from ecocc.models import REGISTRY  # noqa: E402
from ecocc.system import NetworkSystem  # noqa: E402
from ecocc.dde import engine  # noqa: E402
rows = []


def stage(name, fn):
    reset_peak()
    r0 = status("VmRSS")
    t = time.perf_counter()
    out = fn()
    w = time.perf_counter() - t
    rows.append(dict(stage=name, wall_s=round(w, 2), rss_before_mib=round(r0), rss_after_mib=round(status("VmRSS")),
                     peak_mib=round(status("VmHWM")), load1=round(os.getloadavg()[0], 2)))
    print(json.dumps(rows[-1]), flush=True)
    return out


stage("import", lambda: None)
net = stage("random_network", lambda: random_network(N, 1000, max_hops=5, seed=0))
m = REGISTRY[model]()
P = m.make_params(None)
sysm = stage("NetworkSystem", lambda: NetworkSystem(m, net, P, 30.0, past=past))
t_eval = np.linspace(0, 30.0, 31)
ga = stage("generic_args", lambda: engine.generic_args(sysm, 30.0, rtol=1e-7, atol=sysm.default_atol(), t_eval=t_eval))
sizes = []
for k, v in vars(sysm).items():
    if isinstance(v, np.ndarray):
        sizes.append((v.nbytes / 2**20, f"sysm.{k}"))
for i, lk in enumerate(sysm.__dict__.get("lookups", [])):
    d = getattr(lk, "__dict__", {})
    for nm in ("comps", "delays"):
        v = d.get(nm)
        if isinstance(v, np.ndarray):
            sizes.append((v.nbytes / 2**20, f"lookup[{i}].{nm}"))
D, Wk = ga[1]["D"], ga[1]["Wk"]
for j, v in enumerate(D):
    if isinstance(v, np.ndarray):
        sizes.append((v.nbytes / 2**20, f"D[{j}]"))
for k, v in ga[1].items():
    if isinstance(v, np.ndarray):
        sizes.append((v.nbytes / 2**20, f"args.{k}"))
for k, v in vars(net.arrays).items() if hasattr(net.arrays, "__dict__") else []:
    if isinstance(v, np.ndarray):
        sizes.append((v.nbytes / 2**20, f"net.arrays.{k}"))
sizes.sort(reverse=True)
print("largest arrays (MiB):", json.dumps([(round(s, 1), n) for s, n in sizes[:15]]))
print("lk_index", getattr(sysm, "lk_index", None))
