"""Property-based fuzz of the scenario loader and the CLI (hypothesis): malformed input never ends in a
traceback, a hang or a silent success; it is refused with an InputError (API) or exit status 2 (CLI), and the
message names the field.  Bounded examples and no simulation run, so the whole file takes seconds."""
import copy
import math
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent))

import fuzz_cases  # noqa: E402
from ecocc import scenarios  # noqa: E402
from ecocc.cli import main  # noqa: E402
from ecocc.errors import InputError  # noqa: E402

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

# values that are never a valid number for a field that takes one
NOT_A_NUMBER = st.one_of(st.booleans(), st.text(max_size=5).filter(lambda s: s not in ("inf", "infinite")),
                         st.lists(st.floats(allow_nan=False), max_size=2), st.dictionaries(st.text(max_size=3),
                                                                                            st.integers(), max_size=1))
NON_FINITE = st.sampled_from([math.nan, math.inf, -math.inf])
NEGATIVE = st.floats(max_value=-1e-9, allow_nan=False, allow_infinity=False)

POSITIVE_FIELDS = [p for p in fuzz_cases.NUMBERS if p[-1] not in ("q0_pkts", "delay_ms", "target_queue_pkts",
                                                                   "start_s", "start_every_s", "count", "rate_pps")]


def _set(data, path, value):
    d = data
    for p in path[:-1]:
        d = d[p]
    d[path[-1]] = value


def _refused(data, field):
    with pytest.raises(InputError) as ei:
        scenarios.from_dict(data)
    assert field in str(ei.value), (field, str(ei.value))


@SETTINGS
@given(path=st.sampled_from(list(fuzz_cases.NUMBERS)), value=st.one_of(NOT_A_NUMBER, NON_FINITE, NEGATIVE))
def test_loader_refuses_bad_numbers_naming_the_field(path, value):
    if path[-1] == "buffer_pkts" and value == math.inf:
        return  # an infinite buffer is allowed
    if path[-1] == "stop_s" and value == math.inf:
        return  # a flow that never stops is allowed
    data = copy.deepcopy(fuzz_cases.BASE)
    _set(data, path, value)
    _refused(data, path[-1])


@SETTINGS
@given(path=st.sampled_from(POSITIVE_FIELDS), value=st.just(0))
def test_loader_refuses_zero_where_positive(path, value):
    data = copy.deepcopy(fuzz_cases.BASE)
    _set(data, path, value)
    _refused(data, path[-1])


@SETTINGS
@given(case=st.sampled_from(fuzz_cases.scenario_cases()))
def test_loader_catalogue(case):
    label, data, field = case
    _refused(data, field)


@SETTINGS
@given(table=st.sampled_from(["scenario", "params", "links", "flows", "cross_traffic"]),
       value=st.one_of(st.integers(), st.text(max_size=4), st.booleans(), st.lists(st.integers(), max_size=2)))
def test_loader_refuses_tables_of_the_wrong_type(table, value):
    if table in ("params", "cross_traffic") and value == []:  # no parameters, no cross traffic: valid
        return
    data = copy.deepcopy(fuzz_cases.BASE)
    data[table] = value
    _refused(data, table)


@pytest.fixture(scope="module")
def tmp_files(tmp_path_factory):
    return fuzz_cases.prepare_tmp(tmp_path_factory.mktemp("fuzz"))


# the CLI cases that never start a run or a network connection (all of them are refused before running)
CLI_CASES = [c for c in fuzz_cases.cli_cases() if "scheduler" not in c[0]]


@SETTINGS
@given(case=st.sampled_from(CLI_CASES))
def test_cli_refuses_with_exit_2_naming_the_field(case, tmp_files):
    label, argv, field = case
    argv = [a.replace("{tmp}", str(tmp_files)) for a in argv]
    r = CliRunner().invoke(main, argv, catch_exceptions=True)
    assert r.exception is None or isinstance(r.exception, SystemExit), (label, repr(r.exception))
    assert r.exit_code == 2, (label, r.exit_code, r.output)
    assert "Traceback" not in r.output
    assert field.lower() in r.output.lower(), (label, r.output)


@SETTINGS
@given(name=st.sampled_from(["alpha_per_s", "beta_per_s", "T_s", "rtt_scale"]),
       text=st.text(alphabet="0123456789.,:-+eE naxi", max_size=12))
def test_axis_grammar_never_crashes(name, text):
    """Any NAME=TEXT either parses to finite, distinct values or is refused naming --axis NAME."""
    from ecocc.sweeps import parse_axis
    try:
        n, vals = parse_axis(f"{name}={text}")
    except InputError as exc:
        assert f"--axis {name}" in exc.field
        return
    assert n == name and vals and all(math.isfinite(v) for v in vals) and len(set(vals)) == len(vals)


@pytest.mark.slow
def test_the_whole_catalogue_once():
    """Every catalogued malformed input once, as benchmarks/fuzz_inputs.py runs them (about 760; the
    hypothesis tests above draw samples of them): all refused, each message naming the field."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    from fuzz_inputs import run_all
    rows = run_all(timeout_s=60)
    bad = [r for r in rows if r[2] != "refused"]
    assert len(rows) >= 500 and not bad, bad[:10]
