"""Shipped scenarios load, validate and describe their source."""
import math

import pytest

from ecocc import scenarios


@pytest.mark.parametrize("name", scenarios.shipped())
def test_shipped_scenarios_load(name):
    sc = scenarios.load(name)
    assert sc.name == name
    assert sc.source, "every shipped scenario cites where it comes from"
    assert sc.duration_s > 0
    assert sc.network.n_flows >= 1


def test_count_expands_and_staggers():
    sc = scenarios.load("aecp-robustness")
    starts = [f.start_s for f in sc.network.flows]
    assert starts == [5.0 * k for k in range(10)]
    assert sc.network.arrays.capacity_pps[0] == pytest.approx(500e6 / 8000)  # 500 Mbps, 1000-byte packets


def test_schedule_in_mbps_is_converted_with_packet_size():
    sc = scenarios.load("petcp-robustness")
    burst = [c for c in sc.network.cross_traffic if c.kind == "schedule"][0]
    times, rates = burst.piecewise(300)
    # 40 Mbps with 1000-byte packets = 5000 packets/s, between 100 s and 200 s
    assert list(times) == [0.0, 100.0, 200.0]
    assert list(rates) == [0.0, 5000.0, 0.0]


def test_aecp_dumbbell_start_stop():
    net = scenarios.load("aecp-dumbbell").network
    assert [f.start_s for f in net.flows] == [0, 50, 100, 150]
    assert [f.stop_s for f in net.flows] == [400, 350, 300, 250]
    assert not math.isinf(net.flows[0].stop_s)
