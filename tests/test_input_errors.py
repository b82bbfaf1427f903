"""Bad input from the public API raises InputError naming the field and the value."""
import math

import pytest

from ecocc import AECPParams, Flow, InputError, Link, Network, dumbbell, simulate
from ecocc.models.ecology import LogisticParams, LotkaVolterraParams


def _raises(fn, field_part, value):
    with pytest.raises(InputError) as ei:
        fn()
    err = ei.value
    assert field_part in err.field, err.field
    if isinstance(value, float) and math.isnan(value):
        assert math.isnan(err.value)
    else:
        assert err.value == value
    # the message names both the field and the value
    assert err.field in str(err) and repr(err.value) in str(err)
    return err


def test_negative_capacity():
    _raises(lambda: Link("l", -5.0), "capacity_pps", -5.0)
    _raises(lambda: dumbbell(-1.0, [0.1]), "capacity_pps", -1.0)


def test_route_through_unknown_link():
    links = (Link("a", 100.0),)
    flows = (Flow("f", ("a", "nope"), 0.1),)
    _raises(lambda: Network(links, flows), "route", "nope")


def test_stop_before_start():
    _raises(lambda: Flow("f", ("a",), 0.1, start_s=10.0, stop_s=5.0), "stop_s", 5.0)
    _raises(lambda: dumbbell(100.0, [0.1], starts_s=3.0, stops_s=1.0), "stop_s", 1.0)


def test_zero_rtt():
    _raises(lambda: Flow("f", ("a",), 0.0), "rtt_s", 0.0)
    _raises(lambda: dumbbell(100.0, [0.1, 0.0]), "rtt_s", 0.0)


def test_unknown_model_name():
    _raises(lambda: simulate(dumbbell(100.0, [0.1]), "vegas", t_end_s=1.0), "model", "vegas")


def test_unknown_parameter_override():
    _raises(lambda: simulate(dumbbell(100.0, [0.1]), "aecp", t_end_s=1, foo=1), "parameter", "foo")


def test_negative_alpha():
    _raises(lambda: AECPParams(alpha_per_s=-1.0), "alpha_per_s", -1.0)
    _raises(lambda: simulate(dumbbell(100.0, [0.1]), "aecp", t_end_s=1.0, alpha_per_s=-2.0), "alpha_per_s", -2.0)


def test_bad_t_end():
    _raises(lambda: simulate(dumbbell(100.0, [0.1]), "aecp", t_end_s=-1.0), "t_end_s", -1.0)


def test_ecology_params():
    _raises(lambda: LogisticParams(r_per_s=0.0), "r_per_s", 0.0)
    _raises(lambda: LogisticParams(delay_s=-0.1), "delay_s", -0.1)
    _raises(lambda: LotkaVolterraParams(K=(100.0, -1.0)), "K", -1.0)
    _raises(lambda: LotkaVolterraParams(n=2, gamma=[[1, 0.5, 0.2]]), "gamma", [[1, 0.5, 0.2]])
    _raises(lambda: LotkaVolterraParams(n=0), "n", 0)


@pytest.mark.parametrize("bad", [2.7, "x", True, 0, -1, float("nan")])
def test_discrete_n_flows_must_be_a_whole_number(bad):
    # n_flows = 2.7 used to be rounded down to 2 silently and "x" gave a bare ValueError
    from ecocc.discrete import aecp_discrete_stability, petcp_discrete_matrix, petcp_discrete_stability
    for fn in (aecp_discrete_stability, petcp_discrete_matrix, petcp_discrete_stability):
        with pytest.raises(InputError) as e:
            fn(n_flows=bad)
        assert e.value.field == "n_flows"


def test_discrete_n_flows_integral_float_is_accepted():
    from ecocc.discrete import petcp_discrete_matrix
    assert (petcp_discrete_matrix(n_flows=4.0) == petcp_discrete_matrix(n_flows=4)).all()


def test_equilibrium_state_refuses_a_model_with_two_flow_states():
    # used to fail on tuple unpacking (bare ValueError) for a model with more than one flow state
    from ecocc.models.base import NetworkModel
    from ecocc.models.aecp import AECP
    from ecocc.stability.network_linear import equilibrium_state
    from ecocc.system import NetworkSystem

    class TwoStates(AECP):
        flow_states = ("x", "extra")
        flow_log = (True, False)

    m = TwoStates()
    sysm = NetworkSystem.__new__(NetworkSystem)
    sysm.model, sysm.net, sysm.P, sysm.layout = m, dumbbell(1000.0, [0.1]), m.default_params(), {}
    with pytest.raises(InputError) as e:
        equilibrium_state(sysm)
    assert e.value.field == "model" and isinstance(m, NetworkModel)
