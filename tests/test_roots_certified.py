"""Certified characteristic roots (issue 13): the argument-principle count against independent counts."""
import math

import numpy as np
import pytest

from ecocc.stability import characteristic_roots, margins
from ecocc.stability.certify import count_zeros


def nyquist_rhp_count(a, bs, taus):
    """Roots with Re s > 0 of the scalar f(s) = s - a - sum_k b_k exp(-s tau_k), counted independently of
    ecocc along the imaginary axis (Mikhailov/Nyquist): around the right half disc of radius W,
    Z = [pi (the arc, where f ~ s) - 2 (arg f(jW) - arg f(0))] / (2 pi).  For W >= 10 R with
    R = |a| + sum |b_k| >= |f(s) - s| on Re s >= 0, arg f(jw) stays within 0.1 rad of pi/2 beyond W,
    so stopping at W errs by < 0.1/pi.  Sampled every 0.01/tau_max rad/s (phase steps << pi)."""
    R = abs(a) + sum(abs(b) for b in bs)
    w_hi = 10 * R + 1
    w = np.linspace(0.0, w_hi, int(w_hi * max(taus) / 0.01) + 1000)
    s = 1j * w
    f = s - a - sum(b * np.exp(-s * t) for b, t in zip(bs, taus))
    ph = np.unwrap(np.angle(f))
    z = 0.5 - (ph[-1] - ph[0]) / math.pi
    assert abs(z - round(z)) < 0.1  # the truncation bound above
    return int(round(z))


def simulate_scalar(bs, taus, t_end, dt=1e-3):
    """x' = sum_k b_k x(t - tau_k), history x = 1, by the method of steps: over a block shorter than the
    smallest delay the right-hand side is known, integrated by the trapezoidal rule (cumulative)."""
    lag = [int(round(t / dt)) for t in taus]
    h = max(lag)
    n = int(round(t_end / dt))
    x = np.ones(h + n + 1)
    blk = min(lag)
    i = h
    while i < h + n:
        j = min(i + blk, h + n)
        idx = np.arange(i, j + 1)
        rhs = sum(b * x[idx - L] for b, L in zip(bs, lag))
        x[i + 1:j + 1] = x[i] + np.cumsum(0.5 * (rhs[1:] + rhs[:-1])) * dt
        i = j
    return np.arange(n + 1) * dt, x[h:]


def test_issue_example_certified_unstable_and_growing():
    # x' = -20 x(t - 0.1) - 0.1 x(t - 10): the old collocation reported -0.511 + 7.267i "stable"
    r = characteristic_roots([[0.0]], [[[-20.0]], [[-0.1]]], [0.1, 10.0])
    assert r.status == "certified" and r.rightmost_certified and not r.stable
    lam = r.rightmost_per_s
    # Newton-refined: the characteristic function vanishes to round-off (|lam| ~ 17, terms ~ 20)
    assert abs(lam + 20 * np.exp(-0.1 * lam) + 0.1 * np.exp(-10 * lam)) < 1e-9
    n_rhp = int(np.sum(r.roots_per_s.real > 0))
    assert n_rhp == nyquist_rhp_count(0.0, [-20.0, -0.1], [0.1, 10.0]) == 2
    # the simulated solution grows at Re(lam): slope of log max|x| over 1 s windows, 5 s .. 15 s
    t, x = simulate_scalar([-20.0, -0.1], [0.1, 10.0], 15.0)
    edges = np.arange(5.0, 15.0 + 1e-9, 1.0)
    peaks = [np.abs(x[(t >= a) & (t < b)]).max() for a, b in zip(edges[:-1], edges[1:])]
    g = np.polyfit(edges[:-1], np.log(peaks), 1)[0]
    # 3 %: windowed peaks of an oscillation of period 0.375 s ripple by < 1 % of the log slope over 10 s;
    # the next root pair (Re -0.38) is 2 /s slower and negligible after 5 s
    assert g == pytest.approx(lam.real, rel=0.03)


@pytest.mark.parametrize("bs, taus", [
    ([-20.0, -0.1], [0.1, 10.0]),          # 100x apart, unstable
    ([-100.0, -0.5], [0.01, 10.0]),        # 1000x apart, stable (chains of ~100 roots near Re -0.45)
    ([-50.0, -2.0], [0.02, 20.0]),         # 1000x apart
    ([-10.0, -0.3], [0.001, 1.0]),         # 1000x apart
    ([-60.0, 0.9], [0.01, 10.0]),          # 1000x apart, positive long-delay feedback
    ([-1.0], [8.0]),                        # k tau = 8: two crossings passed, 4 roots in the RHP
])
def test_rhp_count_matches_independent_nyquist_count(bs, taus):
    r = characteristic_roots([[0.0]], [[[b]] for b in bs], taus)
    assert r.status == "certified"
    assert int(np.sum(r.roots_per_s.real > 0)) == nyquist_rhp_count(0.0, bs, taus)
    # every listed root is a root (Newton residual) and none lies right of the certified rightmost one
    assert np.all(r.residuals < 1e-8)
    assert r.rightmost_per_s.real == r.roots_per_s.real.max()


@pytest.mark.parametrize("k_tau", [1.0, 2.0, 8.0, 14.5])
def test_single_delay_rhp_count_analytic(k_tau):
    # x' = -k x(t - tau): roots cross the axis at w = k when k tau = pi/2 + 2 pi j, a pair each time,
    # so the RHP holds 2 ceil((k tau - pi/2) / (2 pi)) roots (0 below pi/2)
    k = 3.0
    r = characteristic_roots([[0.0]], [[[-k]]], [k_tau / k])
    expected = 2 * max(0, math.ceil((k_tau - math.pi / 2) / (2 * math.pi)))
    assert r.status == "certified"
    assert int(np.sum(r.roots_per_s.real > 0)) == expected


@pytest.mark.parametrize("tau", [0.3, 0.9, 5.0, 12.0])
def test_matrix_system_count_matches_d_subdivision(tau):
    # the AECP synchronous loop (3 states): margins() counts RHP roots by D-subdivision crossings, an
    # independent route; collocation alone at N = 8 misses roots at the long delays
    from ecocc.symbolic import synchronous_loop
    rl = synchronous_loop("aecp").rational(rtt_s=tau)
    m = margins(rl, tau)
    r = characteristic_roots(rl.A0, [rl.A1], [tau], n_nodes=8)
    assert r.certified
    assert int(np.sum(r.roots_per_s.real > 0)) == m.n_unstable
    assert r.stable == m.stable


def test_collocation_too_coarse_is_repaired_not_trusted():
    # N = 8 on x' = -20 x(t-0.1) - 0.1 x(t-10) resolves |lam| < 2.6 only; the count finds the rest
    r = characteristic_roots([[0.0]], [[[-20.0]], [[-0.1]]], [0.1, 10.0], n_nodes=8)
    assert r.status == "certified"
    assert r.rightmost_per_s.real > 1.7
    assert any("missed" in m for m in r.messages)
    u = characteristic_roots([[0.0]], [[[-20.0]], [[-0.1]]], [0.1, 10.0], n_nodes=8, certify=False)
    assert u.status == "uncertain" and not u.stable       # without the count no stable verdict is given


def test_count_zeros_of_a_polynomial():
    # (s - 1)(s - 2j)(s + 2j)(s + 3): three zeros with Re > -1, one with Re < -1
    f = lambda s: (s - 1) * (s * s + 4) * (s + 3)  # noqa: E731
    assert count_zeros(f, (-1.0, 5.0, -5.0, 5.0), 0.5)[0] == 3
    assert count_zeros(f, (-4.0, 5.0, -5.0, 5.0), 0.5)[0] == 4
    assert count_zeros(f, (1.0, 5.0, -5.0, 5.0), 0.5)[0] is None   # a zero on the boundary: no count


def test_network_three_second_rtt_beside_50ms_matches_simulation():
    # AECP dumbbell, RTTs 50 ms, 50 ms, 3 s: certified rightmost root vs the simulated decay of the
    # queue swing between 120-140 s and 160-180 s (ln ratio / 40 s)
    from ecocc import dumbbell, simulate
    from ecocc.stability.network_linear import network_jacobians
    net = dumbbell(1000.0, [0.05, 0.05, 3.0])
    lin = network_jacobians("aecp", net)
    assert lin.residual < 1e-9   # linearized at the equilibrium (delayed arrivals see every flow)
    r = characteristic_roots(lin.A0, list(lin.A_delayed), lin.delays_s)
    assert r.status == "certified" and r.stable
    tr = simulate(net, "aecp", t_end_s=180.0, output_dt_s=0.01)
    q, t = tr.queue_pkts[:, 0], tr.t_s
    s1, s2 = (np.ptp(q[(t >= a) & (t < a + 20)]) for a in (120.0, 160.0))
    g = math.log(s2 / s1) / 40.0
    # 10 %: a nonlinear run's swing (queue clamped near 0 early on) against the linear rate
    assert g == pytest.approx(r.rightmost_per_s.real, rel=0.1)


@pytest.mark.slow
def test_petcp_network_3s_rtt_unstable_and_oscillates():
    # the issue's case: PE-TCP dumbbell, one RTT of 3 s beside 50 ms ones (old roots map: "stable")
    from ecocc import dumbbell, simulate
    from ecocc.stability.network_linear import roots_map
    net = dumbbell(1000.0, [0.05, 0.05, 3.0])
    ds = roots_map("petcp", net, "a_pps2", [125.0], [1.0])
    assert str(ds["root_status"].item()) == "certified" and not bool(ds["stable"].item())
    assert float(ds["rightmost_real_per_s"].item()) > 0.5
    tr = simulate(net, "petcp", t_end_s=120.0, output_dt_s=0.01)
    q, t = tr.queue_pkts[:, 0], tr.t_s
    s1, s2 = (np.ptp(q[(t >= a) & (t < a + 10)]) for a in (80.0, 110.0))
    assert s1 > 10 and s2 > 10 and abs(s2 / s1 - 1) < 0.01   # a limit cycle: > 10 packets, not decaying


def test_margins_marginal_delay_free_loop_counts_axis_roots_once():
    # L(s) = (6 s + 12) / (s^3 + 2 s^2) = 6 / s^2 after cancelling (s + 2).  Delay-free closed loop:
    # D + N = (s + 2)(s^2 + 6), roots -2 and +-j sqrt(6): marginal.  By hand (Nyquist): at w = sqrt(6),
    # L(jw) = -6 / w^2 = -1 exactly; a delay tau adds phase lag -w tau, so for small tau > 0 the pair
    # moves right (d(Re s)/d tau = Re(s N e / (D' + N' e - tau N e)) > 0 at s = j sqrt 6, tau = 0);
    # the next crossing is at tau = 2 pi / sqrt(6) = 2.565 s.  So at tau = 0.2 s: 2 roots in the RHP.
    m = margins(([6, 12], [1, 2, 0, 0]), 0.2)
    assert m.n_unstable == 2 and not m.stable
    assert m.critical_delay_s == 0.0
    # independently: certified roots of s^2 + 6 exp(-0.2 s) (the cancelled factor s + 2 is stable)
    r = characteristic_roots([[0.0, 1.0], [0.0, 0.0]], [[[0.0, 0.0], [-6.0, 0.0]]], [0.2])
    assert r.certified and int(np.sum(r.roots_per_s.real > 0)) == 2
    assert margins(([6], [1, 0, 0]), 0.2).n_unstable == 2
    # beyond the second crossing 2.565 s: 4
    assert margins(([6, 12], [1, 2, 0, 0]), 3.0).n_unstable == 4
    r3 = characteristic_roots([[0.0, 1.0], [0.0, 0.0]], [[[0.0, 0.0], [-6.0, 0.0]]], [3.0])
    assert r3.certified and int(np.sum(r3.roots_per_s.real > 0)) == 4
    # at delay 0 the pair is on the axis: marginal, none in the RHP, not called stable
    m0 = margins(([6, 12], [1, 2, 0, 0]), 0.0)
    assert m0.n_unstable == 0 and not m0.stable and m0.status == "marginal"
