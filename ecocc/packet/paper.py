"""The papers' own numbers for the scenarios that reproduce a paper experiment (ns-2 results).

Keyed by scenario name.  Rates in Mbps as printed (converted with the scenario's packet size
at the edge), queues in packets, utilization and loss as fractions.  ``where`` says which part of
the paper's run the number describes: a number that averages the whole ns-2 run is not the same
quantity as our final-window mean, and the table says so.
"""
from __future__ import annotations

PAPER = {
    "aecp-parking-lot": {
        "source": "004 Section 6.3: 'the throughputs of flow 1 and flow 3 both achieve 125 Mbps and the throughput "
                  "of flow 2 and flow 4 are 375 Mbps in steady state'",
        "where": "steady state",
        "rate_mbps": {"f1": 125.0, "f2": 375.0, "f3": 125.0, "f4": 375.0},
    },
    "aecp-robustness": {
        "source": "004 Section 6.2 (S2) and Table 1: flows converge to 42 Mbps with web traffic (26 Mbps during the "
                  "burst); utilization 98.64 %, loss ratio 6.75e-4, queue 1358 packets averaged over the whole run",
        "where": "rates: steady state with web traffic; utilization, loss, queue: whole-run averages (Table 1)",
        "rate_mbps": {f"f_{k}": 42.0 for k in range(1, 11)},
        "utilization": {"bottleneck": 0.9864}, "loss_ratio": {"bottleneck": 6.75e-4},
        "queue_pkts": {"bottleneck": 1358.0},
    },
    "petcp-robustness": {
        "source": "000 Section 5.3: 'each flow gets 20 Mbps', 10 Mbps during the 40 Mbps burst",
        "where": "steady state outside the burst",
        "rate_mbps": {f"f_{k}": 20.0 for k in range(1, 5)},
    },
    "petcp-dumbbell": {
        "source": "000 Section 5.1.1 (Fig. 3(b)): 'the average queue length remains at 7 packets, which is close to "
                  "the theoretical value of 6.25 packets' (a sweep over bandwidths; 5 flows, RTT 50 ms)",
        "where": "average over the ns-2 run, bandwidth sweep",
        "queue_pkts": {"bottleneck": 7.0},
    },
}
