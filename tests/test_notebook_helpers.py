"""ecocc.widgets.explore and ecocc.side_by_side.compare_protocols (the notebooks' helpers)."""
import numpy as np
import pytest

from ecocc import dumbbell
from ecocc.side_by_side import compare_protocols, format_table
from ecocc.errors import EcoccError, InputError
from ecocc.widgets import explore


def test_explore_calls_once_with_defaults_and_returns_value(monkeypatch):
    monkeypatch.setenv("ECOCC_WIDGETS", "off")
    calls = []

    def f(a=1.5, b=2):
        calls.append((a, b))
        return a * b

    assert explore(f, a=(0.0, 3.0, 0.5), b=(1, 5, 1)) == 3.0
    assert calls == [(1.5, 2)]


def test_explore_builds_manual_widget_without_running_again():
    pytest.importorskip("ipywidgets")
    calls = []

    def f(a=1.0):
        calls.append(a)

    explore(f, a=(0.0, 2.0, 0.1))   # outside a kernel the widget is only displayed as text
    assert calls == [1.0]           # manual mode: the sliders do not run f on construction


def test_explore_rejects_unknown_or_undefaulted_arguments():
    def f(a, b=1.0):
        return b

    with pytest.raises(InputError, match="explore range"):
        explore(f, c=(0, 1, 0.1))
    with pytest.raises(InputError, match="default"):
        explore(f, a=(0, 1, 0.1))


def test_compare_protocols_aecp_rows_match_the_equilibrium():
    net = dumbbell(1000.0, [0.05, 0.1], initial_rate_pps=100.0)
    rows = compare_protocols(net, ["aecp", "cltcp"], t_end_s=60.0, window_s=10.0)
    assert [r["model"] for r in rows] == ["aecp", "cltcp"]
    for r in rows:
        assert r["status"] == "success"
        # eq. (16) of 004: x* = C/N = 500 pkt/s = 4 Mbps at 1000-byte packets, q* = q0 = 100, full utilization.
        # 1e-4: 50 s at decay rates ~1 /s leaves far less; a non-equilibrium state would be off by percents
        assert np.allclose(r["rates_mbps"], 4.0, rtol=1e-4)
        assert abs(r["mean_queue_pkts"] - 100.0) < 1e-2
        assert abs(r["utilization"] - 1.0) < 1e-4
        assert abs(r["jain_index"] - 1.0) < 1e-8
    assert "aecp" in format_table(rows)


def test_compare_protocols_keeps_a_failing_model_as_an_error_row(monkeypatch):
    import sys
    sim_mod = sys.modules["ecocc.simulate"]  # the package attribute `ecocc.simulate` is the function

    def boom(*a, **k):
        raise EcoccError("this model cannot run that network")

    monkeypatch.setattr(sim_mod, "simulate", boom)
    rows = compare_protocols(dumbbell(1000.0, [0.05]), ["petcp"], t_end_s=1.0)
    assert rows[0]["status"] == "error" and "cannot run" in rows[0]["message"]
    assert "! this model cannot run" in format_table(rows)


def test_compare_protocols_rejects_unknown_model():
    with pytest.raises(InputError, match="model"):
        compare_protocols(dumbbell(1000.0, [0.05]), ["nosuch"], t_end_s=1.0)


def test_format_table_with_a_flow_inactive_in_the_window():
    # a flow that stopped before the summary window has no mean rate (None): printed as "-", no TypeError
    import math
    from ecocc import dumbbell
    net = dumbbell(1000.0, [0.1, 0.1], stops_s=[20.0, math.inf])
    rows = compare_protocols(net, ["aecp"], t_end_s=30.0, window_s=5.0)
    assert rows[0]["rates_mbps"][0] is None and rows[0]["rates_mbps"][1] is not None
    line = format_table(rows).splitlines()[2]
    assert line.split()[-2] == "-"
