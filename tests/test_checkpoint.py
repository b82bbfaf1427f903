"""Long runs: Ctrl-C saves the solver state, the same call resumes, nothing is lost."""
import os
import signal

import numpy as np
import pytest

from ecocc import dumbbell
from ecocc.dde.adaptive import Status, solve_dde
from ecocc.errors import InputError
from ecocc.models import get_model
from ecocc.system import NetworkSystem


def _system():
    net = dumbbell(15000, [0.05, 0.1, 0.2, 0.4], starts_s=[0, 10, 20, 30], initial_rate_pps=10.0)
    m = get_model("aecp")
    return NetworkSystem(m, net, m.make_params(r0_pps=10.0), 60.0)


def test_interrupt_then_resume_is_bit_identical(tmp_path):
    sysm = _system()
    te = np.linspace(0, 60, 601)
    ref = solve_dde(sysm.problem(), 60.0, rtol=1e-7, atol=sysm.default_atol(), t_eval=te)
    prob = sysm.problem()
    rhs, fired = prob.rhs, []

    def rhs_with_ctrl_c(t, *a):  # a user pressing Ctrl-C once the run passes 25 s
        if t > 25.0 and not fired:
            fired.append(t)
            os.kill(os.getpid(), signal.SIGINT)
        return rhs(t, *a)

    prob.rhs = rhs_with_ctrl_c
    path = tmp_path / "run.ckpt.npz"
    part = solve_dde(prob, 60.0, rtol=1e-7, atol=sysm.default_atol(), t_eval=te, checkpoint=path)
    assert part.status == Status.INTERRUPTED and path.exists()
    assert 25.0 < part.t_reached < 60.0
    # what was computed before the interrupt is returned
    assert np.array_equal(part.y, ref.y[: len(part.t)])
    full = solve_dde(sysm.problem(), 60.0, rtol=1e-7, atol=sysm.default_atol(), t_eval=te, checkpoint=path)
    assert full.ok and not path.exists()  # the checkpoint goes once the run is complete
    # same steps, same numbers: resuming continues the very same integration
    assert full.n_steps == ref.n_steps
    assert np.array_equal(full.y, ref.y)


def _interrupted_at_5_s(sysm, path):
    """The run of ``sysm`` stopped by a Ctrl-C once it passes 5 s: its checkpoint is at ``path``."""
    prob = sysm.problem()
    rhs = prob.rhs

    def stop_at_5(t, *a):
        if t > 5.0 and not getattr(stop_at_5, "done", False):
            stop_at_5.done = True
            os.kill(os.getpid(), signal.SIGINT)
        return rhs(t, *a)

    prob.rhs = stop_at_5
    part = solve_dde(prob, 60.0, rtol=1e-7, atol=sysm.default_atol(), checkpoint=path)
    assert part.status == Status.INTERRUPTED and path.exists()


def test_checkpoint_of_another_problem_is_refused(tmp_path):
    sysm = _system()
    path = tmp_path / "run.ckpt.npz"
    _interrupted_at_5_s(sysm, path)
    with pytest.raises(InputError, match="checkpoint"):
        solve_dde(sysm.problem(), 60.0, rtol=1e-6, atol=sysm.default_atol(), checkpoint=path)


def test_checkpoint_of_an_older_version_is_refused(tmp_path):
    """A checkpoint written before the solver kept its queue-event prediction state (the same problem, the six
    prediction keys absent) is refused with a message naming what it lacks, not resumed with a state guessed."""
    sysm = _system()
    path = tmp_path / "run.ckpt.npz"
    _interrupted_at_5_s(sysm, path)
    old = ("pred_ok", "pred_c2", "pred_c3", "dv_t", "dv", "dv_n")
    with np.load(path) as d:
        assert set(old) <= set(d.files)  # this version writes them
        kept = {k: d[k] for k in d.files if k not in old}
    np.savez(path, **kept)
    with pytest.raises(InputError, match="lacks pred_ok, pred_c2, pred_c3, dv_t, dv, dv_n"):
        solve_dde(sysm.problem(), 60.0, rtol=1e-7, atol=sysm.default_atol(), checkpoint=path)


def _mixed_net():
    """TCP Symbiosis against Reno on one 50-packet link (with drop-tail Reno, a composite the compiled engine serves)."""
    return dumbbell(1000.0, [0.05, 0.1], buffer_pkts=50.0, protocols=["symbiosis", "reno"])


def test_auto_engine_checkpoints_where_the_run_falls_back_to_numpy(tmp_path, monkeypatch):
    # the checkpoint is the adaptive NumPy solver's: engine="auto" writes it where a run falls back to that solver
    # (a mixed network the composite kernel does not serve, no numba) and says which in solver["checkpoint"]; the
    # command line passes one whenever the NumPy solver may run.  Before 2026-11-29 the command line decided from the
    # scenario's first model and passed none for such a fallback: a long mixed run there could not be resumed.
    from ecocc import simulate
    from ecocc.dde import codegen_mixed
    monkeypatch.delenv("ECOCC_ENGINE", raising=False)  # "auto" as a user has it (the suite's conftest: NumPy)
    path = tmp_path / "mixed.ckpt.npz"
    # saved at every step (a 5 s run is shorter than the default 30 s between saves) and kept after the run
    kw = dict(params={"reno": {"aqm": "droptail"}}, t_end_s=5.0, checkpoint=path, keep_checkpoint=True,
              checkpoint_every_s=1e-9)
    tr = simulate(_mixed_net(), "aecp", **kw)
    compiled = tr.solver.get("engine") == "numba"  # the install-time composite, or numba's
    assert tr.ok and tr.solver["checkpoint"] == (None if compiled else str(path))
    assert path.exists() == (not compiled)  # a compiled run writes none
    path.unlink(missing_ok=True)
    monkeypatch.setattr(codegen_mixed, "gap", lambda sysm, kernel="adaptive": "a reason the composite kernel cannot run it")
    tr = simulate(_mixed_net(), "aecp", **kw)
    assert tr.ok and tr.solver["checkpoint"] == str(path) and path.exists()
    with pytest.raises(InputError) as e:  # the compiled engine asked for explicitly: no checkpoint to write
        simulate(_mixed_net(), "aecp", **dict(kw, engine="numba"))
    assert e.value.field == "checkpoint"


@pytest.mark.parametrize("engine, passed", [("auto", True), ("numpy", True), ("numba", False)])
def test_cli_passes_a_checkpoint_wherever_the_numpy_solver_may_run(tmp_path, monkeypatch, engine, passed):
    import sys

    from click.testing import CliRunner
    sim = sys.modules["ecocc.simulate"]  # the module (the package exports its function under the same name)
    monkeypatch.delenv("ECOCC_ENGINE", raising=False)  # "auto" as a user has it (the suite's conftest: NumPy)
    from ecocc.cli import main
    seen = []
    real = sim.simulate

    def spy(*a, **kw):
        seen.append(kw.get("checkpoint"))
        return real(*a, **kw)

    monkeypatch.setattr(sim, "simulate", spy)
    res = CliRunner().invoke(main, ["simulate", "aecp-dumbbell", "--out", str(tmp_path), "--t-end-s", "2",
                                    "--no-figure", "--quiet", "--engine", engine], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert len(seen) == 1 and (seen[0] is not None) == passed
    assert not list(tmp_path.glob(".*.ckpt.npz"))  # removed once the outputs exist (or never written)
