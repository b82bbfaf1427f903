"""Networks: routing matrix, delay placement, cross traffic, builders."""
import math

import numpy as np

from ecocc import CrossTraffic, Flow, Link, Network, dumbbell, parking_lot, random_network
from ecocc.units import mbps_to_pps


def _three_link_net(delay_split):
    links = (Link("a", 100.0, delay_s=0.01), Link("b", 200.0, delay_s=0.02), Link("c", 300.0, delay_s=0.03))
    flows = (Flow("long", ("a", "b", "c"), 0.2), Flow("bc", ("b", "c"), 0.15), Flow("c", ("c",), 0.1))
    return Network(links, flows, delay_split=delay_split)


def test_routing_matrix():
    net = _three_link_net("feedback")
    R = net.arrays.routing.toarray()
    expected = np.array([[1, 0, 0], [1, 1, 0], [1, 1, 1]], dtype=float)  # links x flows
    np.testing.assert_array_equal(R, expected)
    # pairs sorted by flow, then by position on the route
    a = net.arrays
    np.testing.assert_array_equal(a.pair_flow, [0, 0, 0, 1, 1, 2])
    np.testing.assert_array_equal(a.pair_link, [0, 1, 2, 1, 2, 2])
    np.testing.assert_array_equal(a.flow_pair_start, [0, 3, 5, 6])


def test_pair_delays_feedback_split():
    a = _three_link_net("feedback").arrays
    # CLTCP/AECP eq. (6): links see x_p(t), the whole round trip is on the feedback path
    np.testing.assert_array_equal(a.pair_fwd_s, np.zeros(6))
    np.testing.assert_allclose(a.pair_bwd_s, [0.2, 0.2, 0.2, 0.15, 0.15, 0.1], rtol=0, atol=1e-15)


def test_pair_delays_propagation_split():
    a = _three_link_net("propagation").arrays
    # forward delay to link k = sum of one-way delays of the links before it on the route
    # (exact sums of binary floats: tolerance 1e-15 is round-off only)
    np.testing.assert_allclose(a.pair_fwd_s, [0.0, 0.01, 0.03, 0.0, 0.02, 0.0], rtol=0, atol=1e-15)
    np.testing.assert_allclose(a.pair_fwd_s + a.pair_bwd_s, [0.2, 0.2, 0.2, 0.15, 0.15, 0.1], rtol=0, atol=1e-15)


def test_explicit_forward_delays_override():
    links = (Link("a", 100.0, delay_s=0.01), Link("b", 100.0, delay_s=0.01))
    net = Network(links, (Flow("f", ("a", "b"), 0.1, forward_delays_s=(0.005, 0.04)),), delay_split="propagation")
    np.testing.assert_array_equal(net.arrays.pair_fwd_s, [0.005, 0.04])
    np.testing.assert_allclose(net.arrays.pair_bwd_s, [0.095, 0.06], rtol=0, atol=1e-15)  # round-off only


def test_cross_traffic_schedule_piecewise():
    c = CrossTraffic("a", kind="schedule", schedule=((100.0, 5000.0), (150.0, 0.0)))
    times, rates = c.piecewise(300.0)
    np.testing.assert_array_equal(times, [0.0, 100.0, 150.0])
    np.testing.assert_array_equal(rates, [0.0, 5000.0, 0.0])
    c0 = CrossTraffic("a", kind="schedule", schedule=((0.0, 7.0), (10.0, 3.0)))
    times, rates = c0.piecewise(20.0)
    np.testing.assert_array_equal(times, [0.0, 10.0])
    np.testing.assert_array_equal(rates, [7.0, 3.0])
    tc, rc = CrossTraffic("a", rate_pps=42.0).piecewise(10.0)
    np.testing.assert_array_equal(tc, [0.0])
    np.testing.assert_array_equal(rc, [42.0])


def test_cross_traffic_onoff_mean_realization_is_constant():
    times, rates = CrossTraffic("a", kind="onoff", rate_pps=123.0).piecewise(100.0)
    np.testing.assert_array_equal(rates, [123.0])


def test_cross_traffic_onoff_random_reproducible_and_mean():
    kw = dict(kind="onoff", rate_pps=1000.0, n_sources=100, mean_on_s=1.0, mean_off_s=1.0,
              realization="random", bin_s=0.1)
    T = 2000.0
    t1, r1 = CrossTraffic("a", seed=7, **kw).piecewise(T)
    t2, r2 = CrossTraffic("a", seed=7, **kw).piecewise(T)
    np.testing.assert_array_equal(r1, r2)  # same seed, same sample path
    _, r3 = CrossTraffic("a", seed=8, **kw).piecewise(T)
    assert not np.array_equal(r1, r3)
    np.testing.assert_allclose(np.diff(t1), 0.1, rtol=1e-9)
    assert np.all(r1 >= 0)
    # peak: all 100 sources on gives 2 * rate (p_on = 1/2)
    assert r1.max() <= 2000.0 * (1 + 1e-12)
    mean = np.sum(r1[t1 < T]) * 0.1 / T
    # The on-indicator of one exponential on/off source has autocovariance p(1-p) e^{-2|t|} = 0.25 e^{-2|t|},
    # so the time average over T has variance 0.25/T and relative std 1/sqrt(T); over 100 independent
    # sources 1/sqrt(100 T) = 0.22 %.  5 standard deviations: 1.1 %.
    assert abs(mean / 1000.0 - 1.0) < 5 / math.sqrt(100 * T)


def test_dumbbell_builder():
    net = dumbbell(1000.0, [0.05, 0.1, 0.2], starts_s=[0, 20, 40], stops_s=[math.inf, math.inf, 60.0],
                   initial_rate_pps=[1, 2, 3], buffer_pkts=500.0)
    assert net.n_links == 1 and net.n_flows == 3
    a = net.arrays
    np.testing.assert_array_equal(a.rtt_s, [0.05, 0.1, 0.2])
    np.testing.assert_array_equal(a.start_s, [0, 20, 40])
    np.testing.assert_array_equal(a.stop_s, [math.inf, math.inf, 60.0])
    np.testing.assert_array_equal(a.initial_rate_pps, [1, 2, 3])
    np.testing.assert_array_equal(a.buffer_pkts, [500.0])
    np.testing.assert_array_equal(a.physical_bw_pps, [1000.0] * 3)
    np.testing.assert_array_equal(a.routing.toarray(), np.ones((1, 3)))


def test_parking_lot_builder():
    caps = [mbps_to_pps(m, 1000) for m in (500, 250, 500)]
    net = parking_lot(caps, 0.02)
    # Mbps * 1e6 / (8 * 1000 bytes): exact in floating point up to one rounding
    np.testing.assert_allclose(net.arrays.capacity_pps, [62500.0, 31250.0, 62500.0], rtol=1e-15)
    assert [f.name for f in net.flows] == ["f1", "f2", "f3", "f4"]
    np.testing.assert_array_equal(net.arrays.routing.toarray(), [[1, 1, 0, 0], [1, 0, 1, 0], [1, 0, 0, 1]])
    # RTT = 2 x one-way delays of the links crossed (20 ms each); round-off only
    np.testing.assert_allclose(net.arrays.rtt_s, [0.12, 0.04, 0.04, 0.04], rtol=1e-14)
    # physical bandwidth K_i = smallest capacity on the route
    np.testing.assert_allclose(net.arrays.physical_bw_pps, [31250.0, 62500.0, 31250.0, 62500.0], rtol=1e-15)


def test_random_network_builder():
    n1 = random_network(50, 10, max_hops=4, seed=3)
    n2 = random_network(50, 10, max_hops=4, seed=3)
    assert [f.route for f in n1.flows] == [f.route for f in n2.flows]
    np.testing.assert_array_equal(n1.arrays.rtt_s, n2.arrays.rtt_s)
    hops = np.asarray(n1.arrays.routing.sum(axis=0)).ravel()
    assert hops.min() >= 1 and hops.max() <= 4
    assert np.all((n1.arrays.capacity_pps >= 1e4) & (n1.arrays.capacity_pps <= 1e5))
    assert np.all((n1.arrays.rtt_s >= 0.01) & (n1.arrays.rtt_s <= 0.5))
    n3 = random_network(50, 10, max_hops=4, seed=4)
    assert [f.route for f in n1.flows] != [f.route for f in n3.flows]
