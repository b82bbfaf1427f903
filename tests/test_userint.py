"""The shared integrator of user DDEs (ecocc.dde.userint): its source and its install-time module's checks.
Compiling it is not tested here (tens of seconds; the slow tests of test_sympy_dde run it)."""
from ecocc.dde import engine, userint


def test_source_takes_the_arguments_the_engine_passes():
    """The signature is built from the template's parameter list; the engine passes ADAPTIVE_ARGS in that
    order after the right-hand side, so the two lists must be the same."""
    names = userint._arg_names((userint._HERE / "integrator.py").read_text())
    assert names == list(engine.ADAPTIVE_ARGS)
    src = userint.source()
    assert "def adaptive_kernel(_model_rhs, y0," in src and "KERNEL_SIG = _t.int64(_t.FunctionType(RHS_SIG)" in src
    assert userint.name().startswith("ecocc_fpint_") and userint.name() == userint.name()


def test_installed_module_is_not_used_when_aot_is_off(monkeypatch):
    monkeypatch.setenv("ECOCC_AOT", "0")
    fn, why = userint.installed()
    assert fn is None and why == "ECOCC_AOT=0"
