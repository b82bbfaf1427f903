"""Scale: the breakpoint budget of DDEProblem.breakpoints and the element limit (issue #14, N = 1e5 flows).

Fast (NumPy solver only, no kernel compiled)."""
import math

import numpy as np
import pytest

from ecocc import DDEProblem, Lookup, random_network, solve_dde
from ecocc.dde.problem import BREAKPOINT_MIN_COUNT
from ecocc.limits import MAX_ELEMENTS, check_run_size


def _exact(t, d):
    """y' = -y(t - d), y = 1 for t <= 0, by the method of steps: on [(n-1)d, nd] the solution is
    sum_k (-1)^k (t - (k-1) d)^k / k! over the k with t - (k-1) d > 0 (each delay interval adds a term)."""
    out = 0.0
    k = 0
    while t - (k - 1) * d > 0:
        out += (-1) ** k * (t - (k - 1) * d) ** k / math.factorial(k)
        k += 1
    return out


def _many_delays(n):
    d = np.linspace(0.01, 0.05, n)
    return DDEProblem(n=n, rhs=lambda t, y, Z, lo, hi: -Z[0], y0=np.ones(n), lookups=[Lookup(np.arange(n), d)]), d


def test_breakpoint_budget():
    t_end = 0.2
    # within the budget: every first-level breakpoint t0 + d (all d <= t_end here) is stepped onto
    few, d = _many_delays(BREAKPOINT_MIN_COUNT)
    assert np.allclose(few.breakpoints(t_end), d, rtol=0, atol=1e-15)
    # beyond it (more breakpoints than max(1000, t_end / d_min = 20) steps): the level is left out
    many, _ = _many_delays(BREAKPOINT_MIN_COUNT + 200)
    assert many.breakpoints(t_end).size == 0
    # an explicit budget still propagates it (the old default was 200,000)
    assert many.breakpoints(t_end, max_count=200_000).size == BREAKPOINT_MIN_COUNT + 200


def test_many_delays_without_breakpoints_stay_accurate():
    """1,200 distinct delays: their breakpoints are no longer stepped onto (1,200 steps at least before); the
    error control meets the second-derivative jumps at t = d_i, and the run matches the exact solution."""
    n = BREAKPOINT_MIN_COUNT + 200
    prob, d = _many_delays(n)
    t_end = 0.2
    rtol = 1e-8
    sol = solve_dde(prob, t_end, rtol=rtol, atol=1e-10, t_eval=np.linspace(0, t_end, 21))
    assert sol.status.value == "success"
    # fewer steps than the breakpoints the old rule stepped onto (one step each at least)
    assert sol.n_steps < n
    exact = np.array([[_exact(t, di) for di in d] for t in sol.t])
    # |y| <= 1 and ~100 steps, each step's local error controlled to rtol |y| + atol: 10 x rtol allows the
    # accumulation of the local errors (measured 0.6 x rtol); the exact solution is independent of the solver
    assert np.max(np.abs(sol.y - exact)) < 10 * rtol


@pytest.mark.slow  # building 1e5 flows in Python takes 2-6 s
def test_issue_14_network_is_accepted():
    # N = 1e5 flows on 1e3 links (the issue's scaling target) is within the element limit
    net = random_network(100_000, 1000, max_hops=5, seed=0)
    assert net.n_flows + net.n_links <= MAX_ELEMENTS
    check_run_size(net, "aecp", {}, 30.0, 1.0)  # raises InputError if refused
