"""Shared pytest set-up: make the package importable from a source checkout."""
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

# The default engine is "auto" (compiled where it applies); the suite runs the NumPy reference unless a test
# asks for an engine, so that its tests keep their solver and no test compiles a model's kernel by accident
# (tests/test_codegen.py checks the default itself).
os.environ.setdefault("ECOCC_ENGINE", "numpy")

# The claims ledger runs ns-3 for its packet-level readings when the ns3 wheel is importable
# (ecocc.claims._packet); the test suites do not, except the packet-marked tests that ask for it.
os.environ.setdefault("ECOCC_CLAIMS_PACKET", "off")


@pytest.fixture
def simulate_readings_spy(monkeypatch):
    """The readings ``(past, load_rtt)`` of every :func:`ecocc.simulate` call made through the module
    ``ecocc.simulate`` during the test, in call order (the runs themselves go ahead)."""
    import ecocc.simulate  # noqa: F401  (the module, loaded)
    sim_mod = sys.modules["ecocc.simulate"]  # the module (``ecocc.simulate`` the attribute is the function)
    seen = []
    real = sim_mod.simulate

    def spy(*args, **kw):
        seen.append((kw.get("past"), kw.get("load_rtt")))
        return real(*args, **kw)
    monkeypatch.setattr(sim_mod, "simulate", spy)
    return seen
