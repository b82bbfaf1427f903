"""XCP at start-up: feedback reaches a flow only through its own packets (ecocc/models/xcp.py, ``self_seen``).

Katabi, Handley & Rohrs (SIGCOMM 2002), Section 3.3: the router writes its feedback into the congestion header
of each packet of a flow and the receiver returns it in the ACK.  A flow therefore gets no feedback from a link
before its own packets have crossed the link and come back: with the whole RTT on the feedback path
(``dumbbell``'s default), not before ``t = start + rtt``.  When it gets feedback, the link counts it among the
flows its increase ``h + phi^+`` is shared by.

The bound checked on the aggregate, derived from the law (not measured): all flows start at t = 0 and the
forward delay is zero, so at time ``t`` the load a pair reads is every flow's rate at ``t - rtt_p``; a flow
``p`` receiving feedback (``t >= rtt_p``) reads ``N_l = N`` active flows.  Each such flow's positive term is
``(h + phi^+) / (N d^2)``, so the terms handed out sum to at most ``(h + phi^+) / d^2``.  While the queue is
zero and ``y <= C``: ``phi = alpha d (C - y) >= 0``, ``h + phi^+ = max(phi, gamma_s y d) <= alpha d C`` (as
``gamma_s = 0.1 < alpha = 0.4``), and the negative terms only subtract: ``sum_i x_i' <= alpha C / d``, the
efficiency controller's largest increase (its fluid model ``y' = -(alpha/d)(y - C)`` at ``y = 0``).  Without
``self_seen`` a flow before its first round trip read ``N_l = max(0, 1) = 1`` and got the whole ``phi``: the
aggregate grew ``~N`` times faster (measured below on the law with ``self_seen`` forced to 1).
"""
import math

import numpy as np
import pytest

from ecocc import dumbbell, simulate
from ecocc.models import get_model
from ecocc.models.xcp import XCP

RTTS = [0.05, 0.1, 0.2, 0.4]
C = 15000.0
X0 = 10.0  # initial rate, packets/s


class _XCPAlwaysFed(XCP):
    """XCP with every flow fed from the start (``self_seen`` forced to 1): the law before the fix."""

    name = "xcp-always-fed"

    def link_signal(self, ops, ls, q, y, C, P, lst):
        return super().link_signal(ops, ls, q, y, C, P, dict(lst, self_seen=1.0))


def _run(model, engine, t_end=0.6):
    net = dumbbell(C, RTTS, buffer_pkts=math.inf, initial_rate_pps=X0)
    return simulate(net, model, t_end_s=t_end, output_dt_s=0.001, engine=engine)


def _bound():
    P = get_model("xcp").make_params()
    d = float(np.mean(RTTS))  # the control interval: the mean RTT of the link's flows (XCP.link_static)
    return P.alpha * C / d


@pytest.mark.parametrize("engine", ["numpy", pytest.param("numba", marks=pytest.mark.slow)])
def test_xcp_flow_is_unchanged_until_its_first_feedback_and_the_start_is_bounded(engine):
    tr = _run("xcp", engine)
    assert tr.status == "success"
    t, x = tr.t_s, tr.rate_pps
    for i, rtt in enumerate(RTTS):
        before = t < rtt
        # no feedback before t = rtt: the rate is its initial value (d ln x/dt = 0 exactly: round-off only)
        assert np.max(np.abs(x[before, i] - X0)) <= 1e-12 * X0, (i, np.max(np.abs(x[before, i] - X0)))
        # and it does change after (the link asks for more: spare capacity)
        assert x[np.searchsorted(t, rtt + 0.05), i] > X0 * (1 + 1e-6), i
    S = x.sum(axis=1)
    q = tr.queue_pkts[:, 0]
    # the window of the bound: from t = 0 while the queue is zero and the aggregate at most C (one link, no
    # forward delay: the load a pair reads is the aggregate at an earlier time of the window, so y <= C too)
    win = np.flatnonzero((q <= 1e-6) & (S <= C))
    win = win[:np.argmax(np.diff(win) > 1) + 1] if np.any(np.diff(win) > 1) else win
    assert t[win[-1]] > 0.4, t[win[-1]]  # the window covers every flow's first feedback (largest RTT 0.4 s)
    slope = np.diff(S[win]) / np.diff(t[win])
    B = _bound()
    # mean-value theorem: a difference quotient is a value of the derivative in between; 1e-6 relative
    # covers the solver's error on the samples (rtol 1e-7 on S of a few thousand packets/s, over 1 ms)
    assert np.max(slope) <= B * (1 + 1e-6), (np.max(slope), B)
    # and it is used: the aggregate grows at a good part of that bound once all flows are fed
    assert np.max(slope) > 0.3 * B, (np.max(slope), B)


def test_xcp_without_self_seen_grows_about_n_times_faster():
    """The law before the fix (every flow fed from t = 0 with N_l = max(n_active, 1) = 1): the check above
    fails -- the aggregate's start-up slope is ~N = 4 times the bound.  Shows the test tells the two apart."""
    tr = _run(_XCPAlwaysFed(), "numpy", t_end=0.04)
    assert tr.status == "success"
    t, S = tr.t_s, tr.rate_pps.sum(axis=1)
    slope = np.diff(S) / np.diff(t)
    # before the first RTT (0.05 s) all 4 flows get alpha d C/d^2 each (their rates ~X0: no decrease term)
    assert np.max(slope) > 3.5 * _bound(), (np.max(slope), _bound())


@pytest.mark.slow
def test_xcp_hundred_flows_with_spread_rtts_settle_at_capacity():
    """The case that blew up (docs/notes/xcpstart.md): 100 flows, RTTs uniform on [0.01, 0.5] s, 15,000
    packets/s, infinite buffer.  Before: 477,000 packets/s at t = 0.3 s.  Now the aggregate stays within the
    bound at start and settles at the capacity with an empty queue (XCP's equilibrium, Katabi et al. 2002)."""
    n = 100
    rtts = list(np.random.default_rng(1).uniform(0.01, 0.5, n))
    net = dumbbell(C, rtts, buffer_pkts=math.inf)
    tr = simulate(net, "xcp", t_end_s=30.0, output_dt_s=0.01, engine="auto")
    assert tr.status == "success"
    S, q, t = tr.rate_pps.sum(axis=1), tr.queue_pkts[:, 0], tr.t_s
    assert np.max(S) < 1.1 * C, np.max(S)  # no blow-up (measured peak: see docs/notes/xcpstart.md)
    late = t >= 20.0
    # settled: within 0.1 % of the capacity, and the queue below one packet
    assert np.max(np.abs(S[late] - C)) < 1e-3 * C, np.max(np.abs(S[late] - C))
    assert np.max(q[late]) < 1.0, np.max(q[late])


@pytest.mark.parametrize("engine", ["numpy", pytest.param("numba", marks=pytest.mark.slow)])
def test_xcp_batch_members_are_fed_at_their_own_rtts(engine):
    """In a batch (one fixed-step integration, per-member delays stacked) each member's flows get their first
    feedback at the member's own RTTs: rtt_scale 0.5 halves them."""
    from ecocc.batch import simulate_batch
    net = dumbbell(C, RTTS, buffer_pkts=math.inf, initial_rate_pps=X0)
    ds = simulate_batch(net, "xcp", [{}, {}], rtt_scale=[1.0, 0.5], t_end_s=1.0, step_s=0.001, output_dt_s=0.01,
                        engine=engine)
    assert list(ds["status"].values) == ["success", "success"]
    x, t = ds["rate"].values, ds["time"].values
    for b, scale in enumerate((1.0, 0.5)):
        for i, rtt in enumerate(RTTS):
            r = scale * rtt
            assert np.max(np.abs(x[b, t < r - 1e-9, i] - X0)) <= 1e-12 * X0, (b, i)  # exp(ln X0): round-off
            assert x[b, np.searchsorted(t, r + 0.05), i] > X0 * (1 + 1e-6), (b, i)
