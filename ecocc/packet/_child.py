"""Child process of a packet-level run: ``python -m ecocc.packet._child SPEC.json OUT.npz``.

Run from a clean temporary working directory (the ns-3 wheel searches the working directory for
its libraries) and one simulation per process (ns-3 has one simulator per process).  Prints
``ECOCC_PROGRESS <simulated seconds>`` lines on stdout; writes the sampled counters to OUT.npz.
"""
from __future__ import annotations

import json
import sys
import time
from importlib import resources

import numpy as np


def _cpp_source() -> str:
    return resources.files("ecocc.packet").joinpath("cpp", "ecocc_ns3.cc").read_text()


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    spec = json.loads(open(argv[0]).read())
    out = argv[1]
    t0 = time.perf_counter()
    from ns import ns  # noqa: F401  (12-17 s: loads the ns-3 libraries and headers)
    import cppyy
    t_import = time.perf_counter() - t0
    cppyy.cppdef(_cpp_source())
    g = cppyy.gbl.ns3
    for cls in ("EcoStampTag", "EcoHeader", "EcoQueueDisc", "EcoSender", "EcoReceiver", "EcoCbr"):
        getattr(g, cls).GetTypeId()  # register the TypeIds (static initialisers are unreliable under cppyy)
    t_compile = time.perf_counter() - t0 - t_import
    d = g.EcoDriver()
    d.packetBytes = float(spec["packet_bytes"])
    d.sampleDt = float(spec["bin_s"])
    d.accessFactor = float(spec["access_factor"])
    d.seed = int(spec["seed"])
    d.protocol = spec["driver_protocol"]
    P = spec["params"]
    d.alpha = float(P.get("alpha_per_s", 2.0))
    d.beta = float(P.get("beta_per_s", 1.0))
    d.Tq = float(P.get("T_s", 2.0)) if spec["protocol"] == "aecp" else 2.0
    d.T2 = float(spec.get("router_period_s", 0.1))
    d.peA = float(P.get("a_pps2", 125.0))
    d.peB = float(P.get("b_per_s", 1.0))
    d.peT = float(P.get("T_s", 0.01)) if spec["protocol"] == "petcp" else 0.01
    d.eps = float(P.get("epsilon_per_s", 1.95))
    d.gamma = float(P.get("gamma", 0.9))
    d.symbGivenTau = spec.get("symbiosis_tau", "measured") == "propagation"
    if spec.get("red"):
        d.red = True
        d.redMin = float(spec["red"]["min_th_pkts"])
        d.redMax = float(spec["red"]["max_th_pkts"])
        d.redPmax = float(spec["red"]["p_max"])
    for lk in spec["links"]:
        d.AddLink(float(lk["capacity_pps"]), float(lk["delay_s"]), float(lk["buffer_pkts"]), float(lk["q0_pkts"]),
                  float(lk["r0_pps"]))
    IntVec = cppyy.gbl.std.vector[int]
    DblVec = cppyy.gbl.std.vector[float]
    for f in spec["flows"]:
        stop = float("inf") if f["stop_s"] is None else float(f["stop_s"])
        add = d.AddReverseFlow if f.get("reverse") else d.AddFlow
        add(IntVec(f["route"]), float(f["rtt_s"]), float(f["start_s"]), stop, float(f["initial_rate_pps"]),
            float(f["physical_bw_pps"]))
    for c in spec["cross"]:
        if c["kind"] == "cbr":
            d.AddCbr(int(c["link"]), DblVec(c["times"]), DblVec(c["rates"]))
        else:
            d.AddOnOff(int(c["link"]), int(c["n"]), float(c["mean_on_s"]), float(c["mean_off_s"]), float(c["peak_pps"]))
    if not d.Build():
        print(f"ECOCC_ERROR {d.error}", flush=True)
        return 2
    t_run0 = time.perf_counter()
    t_end = float(spec["t_end_s"])
    d.Run(t_end, max(t_end / 100.0, float(spec["bin_s"])))
    d.Finish()
    t_run = time.perf_counter() - t_run0
    P_, L_ = len(spec["flows"]), len(spec["links"])

    def arr(v, width):
        a = np.array(list(v), dtype=float)
        return a.reshape(-1, width) if width else a

    np.savez(out, t=arr(d.t, 0), sent=arr(d.flowSent, P_), recv=arr(d.flowRecv, P_), ctrl=arr(d.flowCtrl, P_),
             offered=arr(d.linkOffered, L_), dropped=arr(d.linkDropped, L_), departed=arr(d.linkDeparted, L_),
             queue=arr(d.linkQueue, L_), area=arr(d.linkArea, L_), signal=arr(d.linkSignal, L_),
             updates=arr(d.flowUpdates, 0), min_rtt=arr(d.flowMinRtt, 0),
             timing=np.array([t_import, t_compile, t_run]),
             rev_offered=arr(d.revOffered, L_), rev_dropped=arr(d.revDropped, L_),
             rev_departed=arr(d.revDeparted, L_), rev_area=arr(d.revArea, L_))
    print("ECOCC_DONE", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
