"""Fixed-step RK4 integrator (``ecocc.dde.fixed``): order, agreement with
the adaptive solver on the AECP dumbbell, batching and queue projection."""
import numpy as np
import pytest

from ecocc import dumbbell, simulate
from ecocc.dde.adaptive import Status, solve_dde
from ecocc.dde.fixed import solve_fixed
from ecocc.dde.problem import DDEProblem, Lookup


def _linear_dde(delay_s=1.0, y0=1.0, history=None):
    """y'(t) = -y(t - d), constant history ``y0``."""
    return DDEProblem(n=1, rhs=lambda t, y, Z, lo, hi: -Z[0], y0=np.array([y0]),
                      lookups=[Lookup([0], [delay_s])], history=history)


def _reference(prob, t_end, t_eval):
    # rtol 1e-12 *and* max_step 0.01: the adaptive solver's error estimate does not
    # see the interpolation error of its Hermite history, so with steps as long as
    # the delay (piecewise-polynomial solution, zero RK error estimate) it is only
    # accurate to ~h^4/384 ~ 3e-3 here; capping the step makes that ~1e-11.
    return solve_dde(prob, t_end, rtol=1e-12, atol=1e-14, t_eval=t_eval, max_step=0.01)


def _order_fit():
    te = np.linspace(0.0, 10.0, 101)
    prob = _linear_dde()
    ref = _reference(prob, 10.0, te)
    hs = np.array([0.1, 0.05, 0.025])
    errs = np.array([np.abs(solve_fixed(prob, 10.0, h, t_eval=te).y - ref.y).max() for h in hs])
    p = np.polyfit(np.log(hs), np.log(errs), 1)[0]
    return hs, errs, p


def test_order_four_on_smooth_problem():
    # delay 1 is a multiple of every step, so the breakpoints t = 1, 2, ... of the
    # constant history are grid points and RK4 + cubic Hermite should show order 4;
    # 3.7 leaves room for the pre-asymptotic regime at h = 0.1 (measured 4.02).
    hs, errs, p = _order_fit()
    assert p > 3.7, (hs, errs, p)
    # absolute level: Hermite + RK4 constants; measured 1.7e-7 at h = 0.1 (2x margin)
    assert errs[0] < 4e-7


def test_delay_not_multiple_of_step_and_smaller_than_step():
    te = np.linspace(0.0, 5.0, 51)
    # a smooth history (no breakpoint at t0 ... except y'(0) jump, located at t0 on the grid)
    prob = _linear_dde(0.77, history=lambda t, c: np.ones_like(t))
    ref = _reference(prob, 5.0, te)
    sol = solve_fixed(prob, 5.0, 0.01, t_eval=te)
    # the images 0.77, 1.54, ... of the t0 kink are off the grid: O(h^3) local error
    # from the y'' jump at 0.77, so ~1e-6 at h = 0.01 (measured 8e-7), not h^4
    assert sol.ok and np.abs(sol.y - ref.y).max() < 5e-6
    # delay 0.03 shorter than the step 0.05: read by cubic extrapolation of the
    # last completed segment; still converges (measured ~1e-4 at these steps)
    prob2 = _linear_dde(0.03)
    ref2 = _reference(prob2, 5.0, te)
    e1 = np.abs(solve_fixed(prob2, 5.0, 0.05, t_eval=te).y - ref2.y).max()
    e2 = np.abs(solve_fixed(prob2, 5.0, 0.025, t_eval=te).y - ref2.y).max()
    assert e2 < e1 < 1e-2


@pytest.fixture(scope="module")
def aecp_runs():
    net = dumbbell(15000, [0.05, 0.1, 0.2, 0.4], initial_rate_pps=10.0)
    ad = simulate(net, "aecp", t_end_s=60, r0_pps=10.0)
    fx = {h: simulate(net, "aecp", t_end_s=60, r0_pps=10.0, solver="fixed", step_s=h) for h in (0.02, 0.01)}
    return ad, fx


def test_fixed_agrees_with_adaptive_on_aecp_dumbbell(aecp_runs):
    ad, fx = aecp_runs
    _, _, p = _order_fit()
    C = 15000.0
    for h, tr in fx.items():
        assert tr.status == Status.SUCCESS
        rel_rate = np.abs(tr.rate_pps.sum(1) - ad.rate_pps.sum(1)).max() / C
        dq = np.abs(tr.queue_pkts - ad.queue_pkts).max()
        # tolerance = budget of the adaptive run itself (rtol 1e-7: its own error against
        # an rtol-1e-10 reference is 1.2e-7 rel. aggregate rate, 4.1e-3 pkt queue) plus a
        # fixed-step part A (h/0.02)^p, A = 3x the difference measured at h = 0.02
        # (6.2e-7, 0.021 pkt), p the order fitted on the smooth problem
        assert rel_rate < 2e-7 + 2e-6 * (h / 0.02) ** p, (h, rel_rate)
        assert dq < 5e-3 + 0.06 * (h / 0.02) ** p, (h, dq)
    # the papers' equilibrium: mean queue -> q0 = 100 packets (same value as adaptive)
    assert fx[0.01].summary()["links"][0]["mean_queue_pkts"] == pytest.approx(100.0000148, abs=1e-5)


def test_projection_keeps_queue_nonnegative(aecp_runs):
    _, fx = aecp_runs
    for tr in fx.values():
        # the queue empties at start-up (rates 10 pkt/s << C): projection must hold it at
        # exactly 0, never below (clip after each step, so no tolerance)
        assert tr.queue_pkts.min() == 0.0
        assert tr.solver["n_clamp_events"] >= 0


def test_batch_equals_separate_runs():
    # two decoupled copies of y' = -a y(t - d) with per-member delays (B, m)
    a = np.array([[1.0], [0.5], [2.0]])
    d = np.array([[1.0], [0.7], [0.3]])

    def rhs(t, y, Z, lo, hi):
        return -a[:, 0] * Z[0] if np.ndim(y) == 1 else -a * Z[0]

    te = np.linspace(0, 8, 81)
    pb = DDEProblem(n=1, rhs=rhs, y0=np.ones((3, 1)), lookups=[Lookup([0], d)])
    sb = solve_fixed(pb, 8.0, 0.01, t_eval=te)
    assert sb.y.shape == (te.size, 3, 1)
    for b in range(3):
        ps = DDEProblem(n=1, rhs=lambda t, y, Z, lo, hi, b=b: -a[b, 0] * Z[0], y0=np.ones(1),
                        lookups=[Lookup([0], d[b])])
        ss = solve_fixed(ps, 8.0, 0.01, t_eval=te)
        # same operations in the same order, only vectorised: equal to round-off
        assert np.abs(ss.y[:, 0] - sb.y[:, b, 0]).max() < 1e-12


def test_failure_and_interrupt_status():
    # y' = y(t-0.1)^2 blows up in finite time: status failed with the time
    prob = DDEProblem(n=1, rhs=lambda t, y, Z, lo, hi: Z[0] ** 2 * 50, y0=np.array([10.0]),
                      lookups=[Lookup([0], [0.1])])
    sol = solve_fixed(prob, 5.0, 0.01)
    assert sol.status == Status.FAILED and "t =" in sol.message and sol.t_reached < 5.0

    calls = {"n": 0}

    def rhs(t, y, Z, lo, hi):
        calls["n"] += 1
        if calls["n"] > 50:
            raise KeyboardInterrupt
        return -Z[0]
    sol = solve_fixed(DDEProblem(n=1, rhs=rhs, y0=np.ones(1), lookups=[Lookup([0], [1.0])]), 5.0, 0.01)
    assert sol.status == Status.INTERRUPTED and sol.t.size > 1 and sol.t[-1] < 5.0


def test_cross_traffic_kinks_on_and_off_the_grid():
    from ecocc import CrossTraffic

    def net(t_on):
        ct = CrossTraffic("bottleneck", "schedule", schedule=((t_on, 3000.0), (t_on + 5.0, 0.0)))
        return dumbbell(15000, [0.05, 0.1, 0.2, 0.4], initial_rate_pps=10.0, cross_traffic=(ct,))

    for t_on, h in ((5.0, 0.005), (5.0037, 0.01)):
        ref = simulate(net(t_on), "aecp", t_end_s=20, r0_pps=10.0, rtol=1e-9, max_step_s=0.005)
        fx = simulate(net(t_on), "aecp", t_end_s=20, r0_pps=10.0, solver="fixed", step_s=h)
        assert fx.status == Status.SUCCESS
        rel_rate = np.abs(fx.rate_pps.sum(1) - ref.rate_pps.sum(1)).max() / 15000
        dq = np.abs(fx.queue_pkts - ref.queue_pkts).max()
        if t_on == 5.0:
            # switches on grid points, read on the correct side thanks to the time nudge:
            # full accuracy (measured 6.9e-8 and 5e-4 pkt; 3x margin)
            assert rel_rate < 2e-7 and dq < 2e-3, (rel_rate, dq)
        else:
            # switches inside a step: the documented O(h) error; RK4 samples the 3000 pkt/s
            # step at its stages, so the queue is off by at most ~one step of the switched
            # rate (3000 * 0.01 = 30 pkt; measured 6.6 pkt), and clearly worse than on grid
            assert 0.1 < dq < 3000.0 * h, dq
