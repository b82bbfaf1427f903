"""Discrete-time controllers and their stability (issue #3): ecocc/discrete.py.

Every verdict of a linearization is checked against an event-driven run on
both sides of the boundary.  Runs start near the equilibrium so that the
linear analysis applies; "decays" / "does not decay" compare the envelope of
|ln x - ln x*| early and late in the run.
"""
import math

import numpy as np
import pytest

import ecocc
from ecocc.discrete import (
    _FluidQueue, aecp_critical_alpha, aecp_discrete_charpoly, aecp_discrete_matrix, aecp_discrete_stability,
    aecp_source_stability, log_deviation_envelope, logistic_discrete_stability, petcp_discrete_stability,
    simulate_aecp_discrete, simulate_petcp_discrete, simulate_symbiosis_discrete, symbiosis_discrete_stability,
    symbiosis_window_update)
from ecocc.errors import InputError
from ecocc.models.ecology import discrete_logistic

C = 12500.0          # 100 Mbps at 1000-byte packets (the Huang et al. papers)
TAU_CONT = 0.6435011087932843   # continuous critical delay of AECP at alpha=2, beta=1, T=2 (ecocc margins aecp)


# ---------------------------------------------------------------------------
# exact fluid queue
# ---------------------------------------------------------------------------

def test_fluid_queue_exact_piecewise_linear():
    q = _FluidQueue(100.0, math.inf, 0.0, 0.0)
    q.advance(1.0, 110.0)           # +10 packets/s for 1 s
    q.advance(2.0, 80.0)            # -20 packets/s: empties after 0.5 s
    assert q.q == 0.0
    # integral = 5 (triangle 0..10 over 1 s) + 2.5 (triangle 10..0 over 0.5 s); exact arithmetic up to round-off
    assert q.q_integral == pytest.approx(7.5, rel=1e-14)
    assert q.arrived == pytest.approx(190.0, rel=1e-14)


# ---------------------------------------------------------------------------
# AECP / CLTCP, eq. (46)-(49) of 001/004
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("tau", [0.95, 1.05])
def test_aecp_source_only_condition_alpha_T1_below_2(tau):
    """beta = 0 freezes the router: ln x - ln r is multiplied by (1 - alpha tau) per RTT, exactly."""
    alpha = 2.0
    net = ecocc.dumbbell(C, [tau], initial_rate_pps=C * 1.1)
    res = simulate_aecp_discrete(net, 30.0, alpha_per_s=alpha, beta_per_s=0.0, r0_pps=C)
    st = aecp_source_stability(alpha, tau)
    assert st.boundary["T1_max_s"] == 2.0 / alpha
    assert st.stable == (tau < 1.0)
    k = res.n_updates
    dev_end = abs(math.log(res.rate_pps[-1, 0] / C))
    # the log-map is linear with a frozen router: the run equals the prediction up to round-off
    assert dev_end == pytest.approx(math.log(1.1) * abs(1 - alpha * tau) ** k, rel=1e-9)
    if tau < 1.0:
        assert dev_end < 0.1 * math.log(1.1)      # 31 updates of |1 - 1.9| = 0.9: 0.9^31 = 0.038 of the gap
    else:
        assert dev_end > 10 * math.log(1.1)       # 28 updates of |1 - 2.1| = 1.1: 1.1^28 = 14.4 times the gap


def test_aecp_charpoly_matches_matrix():
    import sympy as sp
    poly, lam = aecp_discrete_charpoly(1)
    al, be, T, T2 = sp.symbols("alpha beta T T_2", positive=True)
    P = aecp_discrete_matrix(2.0, 1.0, 2.0, 0.1, 0.1)
    num = sp.Poly(sp.numer(sp.together(poly.subs({al: 2, be: 1, T: 2, T2: sp.Rational(1, 10)}))), lam)
    roots = np.sort_complex(np.array([complex(r) for r in num.nroots()]))
    assert np.allclose(roots, np.sort_complex(np.linalg.eigvals(P)), atol=1e-10)   # same polynomial, two routes


def test_aecp_coupled_boundary_in_rtt_bracketed_by_runs():
    """alpha = 2, beta = 1, T = 2, T2 = 0.1 s: the sampled loop is stable at tau = 0.8 s, not at 0.9 s."""
    st = aecp_discrete_stability(2.0, 1.0, 2.0, 0.1, 0.1, n_flows=5)
    # first RTT on the grid of multiples of T2 = 0.1 s whose spectral radius exceeds 1 (the runs below
    # bracket it independently); approx only absorbs the float product 9 * 0.1
    assert st.boundary["tau_crit_multiple_s"] == pytest.approx(0.9)
    inside = aecp_discrete_stability(2.0, 1.0, 2.0, 0.8, 0.1, n_flows=5)
    outside = aecp_discrete_stability(2.0, 1.0, 2.0, 0.9, 0.1, n_flows=5)
    assert inside.spectral_radius < 0.97 and outside.spectral_radius > 1.03   # measured 0.959 and 1.042
    for tau, decays in ((0.8, True), (0.9, False)):
        net = ecocc.dumbbell(C, [tau] * 5, initial_rate_pps=C / 5 * 1.05)
        res = simulate_aecp_discrete(net, 80.0, initial_queue_pkts=100.0)
        early, late = log_deviation_envelope(res, C / 5, [(5, 15), (70, 80)])
        if decays:
            # rho = 0.959 per 0.8 s: ~0.07 per 55 s; a factor 10 leaves room for transients
            assert late < early / 10
        else:
            assert late > early        # rho = 1.042 per RTT: grows until the queue clamp bounds it
    # the sampled loop (T1 = tau) is stable beyond the continuous critical delay 0.6435 s
    assert inside.stable and 0.8 > TAU_CONT


def test_aecp_discrete_vs_continuous_critical_delay():
    from ecocc.stability import analyze
    a = analyze("aecp", rtt_s=0.7)
    assert not a.margins.stable                          # continuous DDE: unstable at 0.7 s
    assert a.margins.critical_delay_s == pytest.approx(TAU_CONT, abs=1e-9)
    assert aecp_discrete_stability(2.0, 1.0, 2.0, 0.7, 0.1, n_flows=5).stable    # sampled map: stable
    net = ecocc.dumbbell(C, [0.7] * 5, initial_rate_pps=C / 5 * 1.05)
    res = simulate_aecp_discrete(net, 80.0, initial_queue_pkts=100.0)
    early, late = log_deviation_envelope(res, C / 5, [(5, 15), (70, 80)])
    assert late < early / 100       # rho = 0.897 per 0.7 s: ~1e-4 over 60 s; 1e-2 leaves room


def test_aecp_alpha_boundary_bracketed_by_runs():
    """tau = 0.5 s, beta = 1, T = 2: alpha below ~1.010 /s is unstable (loop tends to a triple integrator)."""
    lo, hi = aecp_critical_alpha(1.0, 2.0, 0.5, 0.1)
    assert lo == pytest.approx(1.0101, abs=1e-3)        # spectral radius crosses 1 between 1.010 and 1.011
    assert hi == 4.0                                     # = 2/tau (differential modes)
    for alpha, decays in ((1.15, True), (0.9, False)):
        net = ecocc.dumbbell(C, [0.5] * 5, initial_rate_pps=C / 5 * 1.01)
        res = simulate_aecp_discrete(net, 300.0, alpha_per_s=alpha, initial_queue_pkts=100.0)
        early, late = log_deviation_envelope(res, C / 5, [(0, 20), (280, 300)])
        if decays:
            assert late < early / 100   # rho = 0.981 per 0.5 s: ~1e-15 after 280 s; 1e-2 is loose on purpose
        else:
            assert late > early         # rho = 1.014: a growing oscillation, bounded by the empty-queue clamp


# ---------------------------------------------------------------------------
# PE-TCP, eq. (6)-(11) of 000
# ---------------------------------------------------------------------------

def test_petcp_linear_boundary_bracketed_by_runs():
    st = petcp_discrete_stability(rtt_s=0.05)
    assert st.boundary["q_star_pkts"] == pytest.approx(125 * 0.01 * 5 / 1.0)  # Theorem 1: a T N / b
    assert st.details["rho_symmetric"] > 1.1              # measured 1.1055: unstable at the paper's 50 ms
    crit = st.boundary["rtt_crit_s"]
    assert 0.0098 < crit < 0.0100                        # measured 9.89 ms (continuous model: ~10 ms)
    for rtt, decays in ((0.009, True), (0.011, False)):
        net = ecocc.dumbbell(C, [rtt] * 5, initial_rate_pps=C / 5 * (1 + 1e-4))
        res = simulate_petcp_discrete(net, 60.0, initial_queue_pkts=6.25, t_avg_from_s=50.0)
        early, late = log_deviation_envelope(res, C / 5, [(0, 5), (50, 60)])
        if decays:
            assert late < early        # rho = 0.9996 per round (~9.5 ms): slow decay, but a decay
        else:
            assert late > 10 * early   # rho = 1.0007: grows to a limit cycle with an emptying queue


def test_petcp_paper_dumbbell_mean_queue_is_not_theorem1():
    """5 flows, 100 Mbps, RTT 50 ms, x0 = 12.5 packets/s: the measured law oscillates.

    Theorem 1 predicts q* = aTN/b = 6.25 packets (the ns-2 runs: 7).  The
    per-RTT fluid run of eq. (11) never settles: the queue swings between 0
    and ~156 packets and its mean is ~45 packets (measured 45.01).
    """
    net = ecocc.dumbbell(C, [0.05] * 5, initial_rate_pps=12.5)
    res = simulate_petcp_discrete(net, 60.0, t_avg_from_s=30.0)
    assert res.ok
    late = res.t_s > 30.0
    assert res.queue_pkts[late].min() == 0.0            # the queue empties every cycle
    assert res.queue_pkts[late].max() > 100.0
    assert res.mean_queue_pkts > 5 * 6.25                # contradicts 6.25 (and 7) by a wide margin


def test_petcp_theorem1_queue_when_stable():
    """Inside the linear boundary, near the equilibrium, the run converges to q* = aTN/b exactly."""
    net = ecocc.dumbbell(C, [0.005] * 5, initial_rate_pps=C / 5 * 1.003)
    res = simulate_petcp_discrete(net, 60.0, initial_queue_pkts=6.25, t_avg_from_s=50.0)
    assert res.mean_queue_pkts == pytest.approx(6.25, abs=1e-6)   # rho = 0.9986 per 5.5 ms: 1e-5 after 50 s


# ---------------------------------------------------------------------------
# TCP Symbiosis, eq. (10) of 002
# ---------------------------------------------------------------------------

def test_symbiosis_update_is_exact_logistic_flow():
    # n = 1 (A = K): eq. (10) is the exact solution of the logistic ODE; composing two half-steps = one step
    w1 = symbiosis_window_update(5.0, 1000.0, 1000.0, 0.05, 40.0, 0.9, t_s=0.025)
    w2 = symbiosis_window_update(w1, 1000.0, 1000.0, 0.05, 40.0, 0.9, t_s=0.025)
    assert w2 == pytest.approx(symbiosis_window_update(5.0, 1000.0, 1000.0, 0.05, 40.0, 0.9), rel=1e-12)


EPS_SCAN = (0.5, 1.95, 5.0, 10.0, 20.0, 29.0, 31.0, 40.0, 50.0)
K_PPS, RTT = 833.33, 0.05       # 10 Mbps at 1500-byte packets, 50 ms (Section IV of 002)


def _symb_dev(n, eps, lag, t_end=60.0):
    net = ecocc.dumbbell(K_PPS, [RTT] * n, initial_rate_pps=[K_PPS / 100 * (1 + 0.1 * i) for i in range(n)])
    res = simulate_symbiosis_discrete(net, t_end, eps_per_s=eps, lag_rtts=lag)
    u = K_PPS / (1 + (n - 1) * 0.9) * RTT
    late = res.t_s > t_end - 5.0
    return float(np.nanmax(np.abs(res.window_pkts[late] / u - 1)))


def test_symbiosis_n1_no_limit_on_eps():
    for eps in EPS_SCAN:
        assert symbiosis_discrete_stability(eps, 0.9, 1, RTT).stable
        assert _symb_dev(1, eps, 1) < 1e-6      # converged (eps = 0.5: multiplier 0.975 per RTT, 1e-6 by 50 s)


def test_symbiosis_n5_limit_on_eps_contradicts_paper():
    """III-C 2) of 002 says eq. (10) has 'no limitation on eps'.  For n = 5, gamma = 0.9 it has one:
    eps tau < (1 + 4 gamma) ln(4 gamma/(4 gamma - 1)) = 1.497 (A one RTT old), i.e. eps < 29.94 /s at 50 ms."""
    st = symbiosis_discrete_stability(1.0, 0.9, 5, RTT, lag_rtts=1)
    # closed form vs the numerically located boundary: agreement to round-off (1e-12)
    assert st.boundary["eps_tau_crit"] == pytest.approx(4.6 * math.log(3.6 / 2.6), rel=1e-12)
    for eps in EPS_SCAN:
        s = symbiosis_discrete_stability(eps, 0.9, 5, RTT, lag_rtts=1)
        dev = _symb_dev(5, eps, 1)
        assert s.stable == (eps < 29.94)
        if eps >= 5.0 and s.stable:
            assert dev < 1e-2        # radius <= 0.995 per RTT: 0.995^1100 = 0.004 of an O(1) gap after 55 s
        elif s.stable:
            assert dev < _symb_dev(5, eps, 1, t_end=30.0)   # radius 0.9995 / 0.998: slow, but decreasing
        else:
            assert dev > 0.1         # persistent oscillation of more than 10 % of the window
    # with an instantaneous measurement (lag 0) the limit moves to eps tau = 2.62 but does not vanish
    s0 = symbiosis_discrete_stability(1.0, 0.9, 5, RTT, lag_rtts=0)
    assert s0.boundary["eps_tau_crit"] == pytest.approx(4.6 * math.log(4.6 / 2.6), rel=1e-12)
    assert _symb_dev(5, 50.0, 0) < 1e-6 and _symb_dev(5, 55.0, 0) > 0.1   # bracket 52.49 /s


def test_plain_discrete_logistic_eps_below_2():
    for eps, ok in ((1.95, True), (2.05, False)):
        assert logistic_discrete_stability(eps).stable == ok
        x = discrete_logistic(eps, 100.0, 1.0, 2000)
        tail = np.max(np.abs(x[-50:] / 100.0 - 1))
        assert (tail < 1e-9) == ok     # 1.95: multiplier 0.95, converged long before 2000 steps; 2.05: 2-cycle


# ---------------------------------------------------------------------------
# input errors, plot
# ---------------------------------------------------------------------------

def test_input_errors():
    net = ecocc.dumbbell(C, [0.1], initial_rate_pps=100.0)
    with pytest.raises(InputError) as e:
        simulate_aecp_discrete(net, 10.0, router_period_s=-0.1)
    assert e.value.field == "router_period_s"
    with pytest.raises(InputError):
        aecp_discrete_stability(2.0, 1.0, 2.0, 0.25, 0.1)          # tau not a multiple of T2
    with pytest.raises(InputError):
        symbiosis_discrete_stability(1.0, 0.9, 0)
    with pytest.raises(InputError):
        simulate_petcp_discrete(net, -1.0)
    pl = ecocc.network.parking_lot([C, C], 0.02)
    with pytest.raises(InputError):
        simulate_aecp_discrete(pl, 10.0)


def test_plot_labels():
    import matplotlib
    matplotlib.use("Agg")
    net = ecocc.dumbbell(C, [0.1, 0.2], initial_rate_pps=100.0, starts_s=[0.0, 1.0])
    fig = simulate_aecp_discrete(net, 5.0).plot()
    labels = [ax.get_ylabel() for ax in fig.axes]
    assert "rate (packets/s)" in labels and "queue (packets)" in labels
    assert fig.axes[-1].get_xlabel() == "time (s)"
    assert "AECP" in fig._suptitle.get_text()
    assert fig.axes[0].get_legend() is not None
