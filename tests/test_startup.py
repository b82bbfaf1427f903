"""A short run's process imports what it needs: the start-up cost of ``import ecocc; ecocc.simulate(...)``.

The first run after installing is a whole process (``benchmarks/first_run.py``); a short run's own work
is milliseconds, so the imports are its cost: SciPy's ``optimize`` (0.2-0.3 s here), ``sparse`` (0.1-0.2 s),
SymPy, matplotlib, xarray, python-control, numba.  Each check runs in a fresh interpreter (this one has
them all loaded) and reads ``sys.modules``; no time is asserted (speed targets live in benchmarks/).
"""
import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
#: never needed to simulate: symbolic algebra, plotting, file output, control design, progress bars
NEVER = ("sympy", "matplotlib", "xarray", "pandas", "control", "h5py", "h5netcdf", "click", "tqdm")
#: not needed by a run on a kernel built at install time: SciPy (the NumPy right-hand side's sparse
#: products, the equilibria's root finder), numba (the kernel is a plain extension module), and the
#: standard-library modules the kernel build needs (numpy.ma: np.unique's first call)
NOT_ON_INSTALLED_KERNEL = NEVER + ("scipy", "numba", "llvmlite", "numpy.ma", "tempfile", "concurrent.futures")


def _run(code, tmp_path):
    env = dict(os.environ, ECOCC_CACHE_DIR=str(tmp_path), PYTHONPATH=str(ROOT))
    env.pop("ECOCC_AOT", None)
    env.pop("ECOCC_ENGINE", None)
    p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr[-2000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


_SIM = """
import json, sys
import ecocc
after_import = sorted(sys.modules)
net = ecocc.dumbbell(15000.0, [0.05, 0.1, 0.2, 0.4], initial_rate_pps=10.0, buffer_pkts={buf})
tr = ecocc.simulate(net, {model!r}, t_end_s=2.0, output_dt_s=0.1, engine={engine!r})
print(json.dumps(dict(status=tr.status.value, installed=bool(tr.solver.get("installed")),
                      after_import=after_import, after_run=sorted(sys.modules))))
"""


_BARE = "import json, sys; print(json.dumps(sorted(sys.modules)))"


def _loaded(mods, names):
    """The modules of ``names`` in ``mods`` that a bare interpreter of the same environment does not load
    by itself (a site ``.pth`` file may import some at start-up, e.g. ``tempfile`` through certifi)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    bare = subprocess.run([sys.executable, "-c", _BARE], env=env, capture_output=True, text=True, check=True)
    at_start = set(json.loads(bare.stdout.strip().splitlines()[-1]))
    return sorted({m for m in mods for n in names if (m == n or m.startswith(n + ".")) and m not in at_start})


def test_import_ecocc_loads_no_heavy_library(tmp_path):
    out = _run(_SIM.format(model="aecp", engine="numpy", buf="float('inf')"), tmp_path)
    assert _loaded(out["after_import"], NOT_ON_INSTALLED_KERNEL) == []


@pytest.mark.parametrize("model", ["aecp", "symbiosis"])
def test_numpy_engine_run_loads_no_heavy_library(tmp_path, model):
    """The NumPy solver (no compiler, or a composite) needs scipy.sparse, nothing of NEVER, and not SciPy's
    root finder (the equilibrium is computed when read)."""
    out = _run(_SIM.format(model=model, engine="numpy", buf="float('inf')"), tmp_path)
    assert out["status"] == "success"
    assert _loaded(out["after_run"], NEVER + ("scipy.optimize", "numba")) == []


@pytest.mark.parametrize("model", ["aecp", "cltcp", "petcp", "symbiosis", "reno"])
def test_run_on_installed_kernel_loads_no_heavy_library(tmp_path, model):
    """The first run of a shipped model after installing (empty kernel cache, default engine) loads the
    install-time kernel and neither SciPy nor numba nor SymPy."""
    from ecocc.dde import codegen
    assert model in codegen.SHIP_MODELS
    out = _run(_SIM.format(model=model, engine="auto", buf="500.0" if model == "reno" else "float('inf')"),
               tmp_path)
    assert out["status"] == "success"
    if not out["installed"]:
        pytest.skip("no kernel built at install time (a checkout: python setup.py build_ext --inplace builds them)")
    assert _loaded(out["after_run"], NOT_ON_INSTALLED_KERNEL) == []


def test_equilibrium_is_computed_when_read_and_pickled_with_its_value():
    """Trajectory.equilibrium is deferred (SciPy's import) but reads as the eager computation did, and a
    pickled trajectory carries the value."""
    from ecocc import dumbbell, simulate
    from ecocc.models import get_model
    net = dumbbell(1000.0, [0.1, 0.1, 0.1])
    tr = simulate(net, "symbiosis", t_end_s=1.0, engine="numpy")
    m = get_model("symbiosis")
    expected = m.equilibrium(net, m.make_params())  # every flow active at the end: the whole network's
    assert expected is not None and tr.equilibrium.keys() == expected.keys()
    np.testing.assert_array_equal(tr.equilibrium["rate_pps"], expected["rate_pps"])
    tr2 = simulate(net, "symbiosis", t_end_s=1.0, engine="numpy")
    back = pickle.loads(pickle.dumps(tr2))
    assert "_DeferredEquilibrium" not in repr(back.__dict__)
    np.testing.assert_array_equal(back.equilibrium["rate_pps"], expected["rate_pps"])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(allow_nan=False, allow_infinity=True, width=64), max_size=30),
       st.sampled_from([float, np.int64]))
def test_sorted_unique_is_np_unique_without_nan(values, dtype):
    from ecocc.dde.problem import sorted_unique
    a = np.array([v for v in values if dtype is float or np.isfinite(v)], dtype=float)
    if dtype is np.int64:
        a = np.clip(a, -1e15, 1e15).astype(np.int64)
    got, want = sorted_unique(a), np.unique(a)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
