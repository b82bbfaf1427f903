"""Interface: `ecocc params`, strict JSON (null for non-finite numbers), metrics checked before a sweep,
summaries without rates for flows that have left, `python -m ecocc`."""
import json
import math
import subprocess
import sys

import pytest
from click.testing import CliRunner

from ecocc.cli import main


def strict(text):
    """json.loads that refuses NaN/Infinity (not JSON) and the strings "inf"/"nan" used for numbers before."""
    def bad(c):
        raise ValueError(f"non-JSON constant {c}")
    obj = json.loads(text, parse_constant=bad)

    def walk(o):
        if isinstance(o, dict):
            for v in o.values():
                walk(v)
        elif isinstance(o, list):
            for v in o:
                walk(v)
        else:
            assert o not in ("inf", "-inf", "nan", "Infinity"), o
    walk(obj)
    return obj


def test_params_lists_units_defaults_equations_and_paper():
    r = CliRunner().invoke(main, ["params", "aecp"])
    assert r.exit_code == 0, r.output
    assert "alpha_per_s  [1/s]  default 2.0" in r.output
    assert "q0_pkts      [packets]  default 100.0" in r.output
    assert "x_p'(t) = alpha x_p(t) (ln r_p(t - tau_p) - ln x_p(t))" in r.output  # the model's equation
    assert "004: Huang et al." in r.output  # the paper
    d = strict(CliRunner().invoke(main, ["params", "petcp", "--json"]).output)
    names = [p["name"] for p in d["parameters"]]
    from ecocc.models import get_model
    assert names == get_model("petcp").Params.field_names()
    assert all(p["description"] != "(no description in the docstring)" for p in d["parameters"])
    from ecocc.models import REGISTRY
    for name in REGISTRY:  # every model, inherited fields included (HSTCP's RED fields come from LossParams)
        d = strict(CliRunner().invoke(main, ["params", name, "--json"]).output)
        missing = [p["name"] for p in d["parameters"] if p["description"] == "(no description in the docstring)"]
        assert not missing, (name, missing)
    bad = CliRunner().invoke(main, ["params", "nosuch"])
    assert bad.exit_code == 2 and "model" in bad.output


def test_json_outputs_are_strict(tmp_path):
    from ecocc.results import json_dumps
    assert json.loads(json_dumps({"a": math.inf, "b": [math.nan, 1.0]})) == {"a": None, "b": [None, 1.0]}
    # a sweep point whose metric is undefined (t_efficiency_s never reached in 0.5 s) is stored as null
    from ecocc.sweeps import run_sweep
    run_sweep("aecp-dumbbell", {"alpha_per_s": [1.0]}, tmp_path, t_end_s=0.5, progress=False)
    (point,) = (tmp_path / "points").glob("*.json")
    rec = strict(point.read_text())
    assert rec["t_efficiency_s"] is None
    strict((tmp_path / "sweep.json").read_text())


def test_unknown_metric_is_refused_before_the_sweep_runs(tmp_path):
    r = CliRunner().invoke(main, ["sweep", "aecp-parking-lot", "--axis", "alpha_per_s=1", "--metric", "nosuch",
                                  "--out", str(tmp_path / "s"), "--quiet"])
    assert r.exit_code == 2 and "--metric" in r.output and "nosuch" in r.output
    assert not (tmp_path / "s").exists()  # nothing ran, nothing written


def test_summary_has_no_rate_for_flows_that_left(tmp_path):
    r = CliRunner().invoke(main, ["simulate", "aecp-dumbbell", "--t-end-s", "2", "--out", str(tmp_path), "--quiet",
                                  "--no-figure"])
    assert r.exit_code == 0, r.output
    # flows f2-f4 start at 50/100/150 s: not active in the window of a 2 s run
    assert "f2: not active" in r.output and "0.0000 Mbps" not in r.output
    d = strict((tmp_path / "aecp-dumbbell_summary.json").read_text())
    f2 = d["flows"][1]
    assert f2["mean_rate_mbps"] is None and "equilibrium_rate_pps" not in f2
    # f1 alone: its equilibrium is the whole capacity (500 Mbps = 62500 packets/s at 1000 bytes), not C/4
    assert d["flows"][0]["equilibrium_rate_pps"] == pytest.approx(62500.0, rel=1e-12)


def test_python_m_ecocc():
    r = subprocess.run([sys.executable, "-m", "ecocc", "--help"], capture_output=True, text=True)
    assert r.returncode == 0 and "simulate" in r.stdout and "params" in r.stdout
