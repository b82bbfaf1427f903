"""One numba-engine case in a fresh process (run by ``run.py``): prints a JSON line.

Wall time is measured from the start of this script (before ``import ecocc``)
so that a cold run (empty ``NUMBA_CACHE_DIR``) includes numba's compilation and
a warm run the loading of the cached kernels, as jitcdde's subprocess includes
its C compilation.  Peak memory: ``ru_maxrss`` of this process.

Usage: ``python numba_case.py '{"kind": "dumbbell", ...}'``
"""
import time

T_START = time.perf_counter()

import json  # noqa: E402
import os  # noqa: E402
import resource  # noqa: E402
import sys  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402


def _peak_rss_mib():
    """Peak resident set of this process (VmHWM; ``ru_maxrss`` on Linux keeps the parent's peak across fork+exec)."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main():
    args = json.loads(sys.argv[1])
    from ecocc import dumbbell, random_network, simulate
    t_import = time.perf_counter()
    if args["kind"] == "dumbbell":
        net = dumbbell(15000.0, args["rtts"], starts_s=args.get("starts", 0.0), initial_rate_pps=10.0)
    else:
        net = random_network(args["n_flows"], args["n_links"], max_hops=5, seed=args.get("seed", 0))
    t_net = time.perf_counter()
    model = args.get("model", "aecp")
    extra = dict(r0_pps=10.0) if model in ("aecp", "cltcp") else {}
    tr = simulate(net, model, t_end_s=args["t_end"], output_dt_s=args.get("output_dt", 0.05),
                  engine=args.get("engine", "numba"), **extra, **args.get("kw", {}))
    t_done = time.perf_counter()
    out = dict(status=tr.status.value, wall_s=t_done - T_START, import_s=t_import - T_START,
               build_network_s=t_net - t_import, simulate_s=t_done - t_net, solver_wall_s=tr.solver["wall_s"],
               n_steps=tr.solver["n_steps"], max_rss_mib=_peak_rss_mib(),
               ru_maxrss_mib=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
               kernel=tr.solver.get("compiled"), kernel_installed=bool(tr.solver.get("installed")),
               kernel_built_now=bool(tr.solver.get("built_now")), numba_imported="numba" in sys.modules)
    if args.get("save"):
        np.savez(args["save"], t=tr.t_s, S=tr.rate_pps.sum(axis=1), q=tr.queue_pkts[:, 0])
    print("RESULT " + json.dumps(out))


if __name__ == "__main__":
    main()
