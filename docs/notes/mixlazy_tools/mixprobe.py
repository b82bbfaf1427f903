"""Peak RSS of setting up and running a mixed Symbiosis + drop-tail Reno network (docs/notes/mixlazy.md).

    python docs/notes/mixlazy_tools/mixprobe.py N T_END [warm|setup]

Builds ``random_network(N, 1000, max_hops=5, seed=0)`` (benchmarks/scaling.py's network), every other flow
Reno (drop-tail), the others TCP Symbiosis; warms the compiled composite kernel on a small mixed network
(``warm``: only that, then exits); builds the MixedSystem and the compiled kernel's arguments
(``engine.generic_args``, no integration) and reads the peak RSS (``setup``: only that, then exits); then runs ``simulate`` to T_END
(engine="numba", past="steady") and reads the peak again.  Peak RSS: ``resource.getrusage(RUSAGE_SELF).ru_maxrss``
(KiB on Linux) in this fresh process.  Prints one ``RESULT {json}`` line.
"""
import json
import os
import resource
import sys
import time

T0 = time.perf_counter()


def peak_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def load1():
    return os.getloadavg()[0]


def mixed(net):
    import dataclasses

    from ecocc.network import Network
    flows = tuple(dataclasses.replace(f, protocol="reno" if i % 2 else "symbiosis") for i, f in enumerate(net.flows))
    return Network(net.links, flows, net.cross_traffic)


PROT = {"reno": {"model": "reno", "aqm": "droptail"}}


def main():
    N, t_end = int(sys.argv[1]), float(sys.argv[2])
    warm_only = len(sys.argv) > 3 and sys.argv[3] == "warm"
    setup_only = len(sys.argv) > 3 and sys.argv[3] == "setup"
    import numpy as np

    from ecocc import random_network, simulate
    from ecocc.dde import engine
    from ecocc.mixed import Mixed, MixedSystem, resolve_protocols
    l0 = load1()
    small = mixed(random_network(50, 5, max_hops=5, seed=1))
    tr0 = simulate(small, "symbiosis", protocols=PROT, t_end_s=1.0, output_dt_s=0.5, engine="numba", past="steady")
    after_warm = peak_mib()
    if warm_only:
        print("RESULT " + json.dumps(dict(warm=tr0.status.value, kernel=tr0.solver.get("kernel"), peak_mib=after_warm)))
        return
    t1 = time.perf_counter()
    net = mixed(random_network(N, 1000, max_hops=5, seed=0))
    t2 = time.perf_counter()
    members, fm = resolve_protocols(net, "symbiosis", None, PROT, {})
    s = MixedSystem(Mixed(members, fm), net, t_end, past="steady")
    t3 = time.perf_counter()
    gen, args = engine.generic_args(s, t_end, rtol=1e-6, atol=s.default_atol(),
                                           t_eval=np.linspace(0, t_end, 11))
    t4 = time.perf_counter()
    setup_peak = peak_mib()
    if setup_only:
        print("RESULT " + json.dumps(dict(N=N, t_end=t_end, pairs=int(net.arrays.pair_link.size), network_s=t2 - t1,
                                          system_s=t3 - t2, generic_args_s=t4 - t3, setup_peak_mib=setup_peak,
                                          load1_start=l0, load1_end=load1(), cpu_s=time.process_time())), flush=True)
        return
    del gen, args, s
    tr = simulate(net, "symbiosis", protocols=PROT, t_end_s=t_end, output_dt_s=t_end / 10, engine="numba",
                  past="steady")
    t5 = time.perf_counter()
    print("RESULT " + json.dumps(dict(
        N=N, t_end=t_end, pairs=int(net.arrays.pair_link.size), warm_peak_mib=after_warm, network_s=t2 - t1,
        system_s=t3 - t2, generic_args_s=t4 - t3, setup_peak_mib=setup_peak, simulate_s=t5 - t4,
        run_peak_mib=peak_mib(), status=tr.status.value, message=tr.message, n_steps=int(tr.solver["n_steps"]),
        kernel=tr.solver.get("kernel"), load1_start=l0, load1_end=load1(), cpu_s=time.process_time(),
        process_s=time.perf_counter() - T0)), flush=True)


if __name__ == "__main__":
    main()
