"""``simulate_batch``: B members in one fixed-step run equal B single runs."""
import numpy as np
import pytest

from ecocc import InputError, dumbbell, simulate
from ecocc.batch import simulate_batch


def test_batch_equals_single_runs():
    net = dumbbell(15000, [0.05, 0.1, 0.2, 0.4], initial_rate_pps=10.0)
    plist = [{"alpha_per_s": 2.0, "r0_pps": 10.0}, {"alpha_per_s": 1.0, "r0_pps": 10.0},
             {"alpha_per_s": 3.0, "beta_per_s": 0.5, "r0_pps": 20.0}]
    scales = [1.0, 1.5, 0.7]
    ds = simulate_batch(net, "aecp", plist, rtt_scale=scales, t_end_s=10, step_s=0.01)
    assert ds.sizes["member"] == 3 and list(ds.alpha_per_s.values) == [2.0, 1.0, 3.0]
    assert list(ds.status.values) == ["success"] * 3
    for b, (p, s) in enumerate(zip(plist, scales)):
        tr = simulate(net.scaled(rtt_scale=s), "aecp", t_end_s=10, solver="fixed", step_s=0.01, **p)
        # the batch does the same floating-point operations per member (only broadcast
        # over a leading axis), so agreement is to round-off: 1e-12 relative
        assert np.abs(tr.rate_pps - ds.rate.values[b]).max() <= 1e-12 * np.abs(tr.rate_pps).max()
        assert np.abs(tr.queue_pkts - ds.queue.values[b]).max() <= 1e-12 * max(1.0, np.abs(tr.queue_pkts).max())
        assert ds.queue.values[b].min() >= 0.0


def test_batch_validates_members():
    net = dumbbell(15000, [0.05, 0.1])
    with pytest.raises(InputError, match=r"params_list\[1\]"):
        simulate_batch(net, "aecp", [{}, {"alpha_per_s": -1.0}], t_end_s=1, step_s=0.01)
    with pytest.raises(InputError):
        simulate_batch(net, "aecp", [{}, {}], rtt_scale=[1, 2, 3], t_end_s=1, step_s=0.01)
