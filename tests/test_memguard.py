"""The memory bound of the adaptive solvers' stored history (``max_history_gib``).

A solution that blows up shrinks the step until the window of the past (1.5 x the largest delay) holds
millions of steps; without a bound such a run ate all memory (24 GB) before anything said so.  Here the
bound is made tiny (a few KiB) so that an ordinary problem reaches it at once: the run must stop with
status ``failed``, the part computed so far, and a message in user terms.  A run with the default bound
takes the same steps as one without a bound.
"""
import math
import subprocess
import sys

import numpy as np
import pytest

from ecocc import dumbbell, simulate
from ecocc.dde.adaptive import Status, solve_dde
from ecocc.dde.engine import HAVE_NUMBA
from ecocc.dde.history import grown_capacity, node_bytes
from ecocc.dde.problem import DDEProblem, Lookup
from ecocc.errors import InputError

HUTCH = DDEProblem(n=1, rhs=lambda t, y, Z, lo, hi: 1.2 * y * (1 - Z[0]), y0=np.array([0.5]),
                   lookups=[Lookup([0], [1.0])])
TINY = 1e-6  # GiB: about 1 KiB, less than the first store of 256 nodes


def _check_message(msg, option="max_history_gib"):
    assert msg.startswith("history memory limit reached at t = ")
    for part in ("steps in", "bytes", "step size", "largest |state|", option):
        assert part in msg, (part, msg)


def test_grown_capacity():
    per = node_bytes(2)
    assert per == 56
    assert grown_capacity(256, 200, 2, math.inf) == 512  # doubling, no bound
    assert grown_capacity(256, 256, 2, 400 * per) == 400  # doubling cut to the bound
    assert grown_capacity(256, 150, 2, 100 * per) == 256  # at the bound, 3/4 full at most: keep the store
    assert grown_capacity(256, 200, 2, 100 * per) == 0  # at the bound and fuller: cannot grow
    assert grown_capacity(256, 256, 2, 256 * per) == 0


def test_numpy_solver_stops_at_the_bound_with_the_part_computed():
    te = np.linspace(0, 20, 41)
    sol = solve_dde(HUTCH, 20.0, rtol=1e-13, atol=1e-13, t_eval=te, max_history_gib=TINY)
    assert sol.status == Status.FAILED
    _check_message(sol.message)
    assert "1.5 x the largest delay" in sol.message
    # it stops when the first store (256 nodes; nothing prunable before t = 1.5 s, 1.5 x the delay) is full and
    # cannot grow within 1 KiB: after 255 steps, at t = 1.098 s with this tolerance (deterministic) -- inside
    # the run, neither at its start nor at its end
    assert 1.0 < sol.t_reached < 20.0
    assert sol.t.size >= 1 and sol.t[-1] <= sol.t_reached
    np.testing.assert_array_equal(sol.t, te[:sol.t.size])
    # the same run without a bound: the samples computed before the stop are the same
    ref = solve_dde(HUTCH, 20.0, rtol=1e-13, atol=1e-13, t_eval=te, max_history_gib=math.inf)
    assert ref.status == Status.SUCCESS
    np.testing.assert_array_equal(sol.y, ref.y[:sol.t.size])


def test_numpy_solver_record_steps_keeps_the_whole_run():
    sol = solve_dde(HUTCH, 20.0, rtol=1e-8, atol=1e-8, record_steps=True, t_eval=[0.0, 20.0], max_history_gib=TINY)
    assert sol.status == Status.FAILED
    _check_message(sol.message)
    assert "the whole run" in sol.message


def test_numpy_solver_every_step_output_is_bounded_too():
    # t_eval=None outputs every accepted step: the output grows with the run, not with the window of the past,
    # so the history keeps the whole run (as with record_steps) and the bound stops it.  Before, the history
    # was trimmed to 1.5 delays while the output grew unchecked up to max_steps (1e7 rows of n values).
    sol = solve_dde(HUTCH, 20.0, rtol=1e-8, atol=1e-8, t_eval=None, max_history_gib=TINY)
    assert sol.status == Status.FAILED
    _check_message(sol.message)
    assert "the whole run" in sol.message
    ok = solve_dde(HUTCH, 20.0, rtol=1e-8, atol=1e-8, t_eval=None)
    assert ok.status == Status.SUCCESS and ok.t[-1] == 20.0
    np.testing.assert_array_equal(sol.t, ok.t[:sol.t.size])  # the steps taken before the stop are the same


def test_default_bound_takes_the_same_steps():
    kw = dict(rtol=1e-10, atol=1e-10, t_eval=np.linspace(0, 20, 11))
    a = solve_dde(HUTCH, 20.0, **kw)
    b = solve_dde(HUTCH, 20.0, max_history_gib=math.inf, **kw)
    assert a.status == b.status == Status.SUCCESS
    assert (a.n_steps, a.n_rejected) == (b.n_steps, b.n_rejected)
    np.testing.assert_array_equal(a.y, b.y)


@pytest.mark.parametrize("bad", [-1.0, 0.0, math.nan, -math.inf, "2", True, None])
def test_bad_bound_is_refused(bad):
    with pytest.raises(InputError, match="max_history_gib"):
        solve_dde(HUTCH, 1.0, max_history_gib=bad)
    with pytest.raises(InputError, match="max_history_gib") as exc:
        simulate(dumbbell(100.0, [0.1]), "aecp", t_end_s=1.0, engine="numpy", max_history_gib=bad)
    assert "GiB > 0" in str(exc.value)


def _small_net():
    return dumbbell(1000.0, [0.05, 0.1], buffer_pkts=float("inf"))


def test_simulate_numpy_stops_at_the_bound():
    # steps capped at 0.1 ms: the window of the past (0.15 s) needs 1,500 of them, more than the bound holds
    tr = simulate(_small_net(), "aecp", t_end_s=1.0, engine="numpy", max_step_s=1e-4, max_history_gib=1e-5)
    assert tr.status == Status.FAILED
    _check_message(tr.message)
    # the first store (256 nodes, 62 KiB here) is already beyond the 10.5 KiB bound: the run stops when it is
    # full, after 255 steps of at most 0.1 ms (measured t = 0.0255 s); 0.1 s is well inside the 0.15 s window
    assert tr.t_s[-1] < 0.1


@pytest.mark.skipif(not HAVE_NUMBA, reason="numba not installed")
def test_simulate_compiled_stops_at_the_bound():
    kw = dict(t_end_s=1.0, engine="numba", max_step_s=1e-4)
    tr = simulate(_small_net(), "aecp", max_history_gib=1e-5, **kw)
    assert tr.status == Status.FAILED
    _check_message(tr.message)
    assert tr.t_s[-1] < 0.1
    ok = simulate(_small_net(), "aecp", t_end_s=0.2, engine="numba", max_step_s=1e-4)
    ref = simulate(_small_net(), "aecp", t_end_s=0.2, engine="numba", max_step_s=1e-4, max_history_gib=math.inf)
    assert ok.status == ref.status == Status.SUCCESS
    assert ok.solver["n_steps"] == ref.solver["n_steps"]


@pytest.mark.slow  # the lock-step kernel compiles on a fresh machine (1-2 min)
@pytest.mark.skipif(not HAVE_NUMBA, reason="numba not installed")
def test_lock_step_groups_stop_at_the_bound():
    from ecocc.dde import engine
    from ecocc.models import get_model
    from ecocc.simulate import output_grid
    from ecocc.system import NetworkSystem
    m = get_model("aecp")
    sysm = NetworkSystem(m, _small_net(), m.make_params(), 1.0)
    Ps = [m.make_params(alpha_per_s=a) for a in (1.0, 2.0)]
    kw = dict(rtol=1e-7, t_eval=output_grid(1.0, 0.01), max_step=1e-4)
    _, st, cnt = engine.solve_adaptive_batch([sysm], [0, 0], Ps, 1.0, max_history_gib=1e-5, **kw)
    assert [s.value for s in st] == ["failed", "failed"]
    assert (cnt[:, 0] < 10_000).all()
    _, st, _ = engine.solve_adaptive_batch([sysm], [0, 0], Ps, 1.0, **kw)
    assert [s.value for s in st] == ["success", "success"]


@pytest.mark.parametrize("value", ["-1", "0", "nan", "abc"])
def test_cli_refuses_a_bad_bound_in_one_line(tmp_path, value):
    proc = subprocess.run([sys.executable, "-m", "ecocc.cli", "simulate", "aecp-parking-lot", "--out", str(tmp_path),
                           "--quiet", "--no-figure", "--max-history-gib", value], capture_output=True, text=True)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert "--max-history-gib" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
