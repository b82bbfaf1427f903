"""The one description of a network fluid model.

A model is written once, as scalar *laws* that take an ``ops`` namespace
(:data:`NUMPY_OPS` or :data:`SYMPY_OPS`).  The simulator calls them on NumPy
arrays (all flows / links at once); :mod:`ecocc.symbolic` calls the very
same functions on SymPy symbols to get equilibria, Jacobians and transfer
functions.  So the linearization can never drift from what is simulated.

Signals and delays (see :mod:`ecocc.network` for where delays sit):

* every flow ``p`` sends at ``rate = flow_rate(state_p, qdelay_p)``;
* link ``l`` sees the arrival ``y_l(t) = sum_p x_p(t - d_f(l,p)) + cross_l(t)``
  and its queue obeys ``q_l' = y_l - C_l`` in ``[0, buffer_l]``;
* link ``l`` publishes ``signal_l = link_signal(state_l, q_l, y_l, C_l)``;
* flow ``p`` receives ``fb_p = AGG_{l in p} signal_l(t - d_b(l,p))`` where
  ``AGG`` is ``path_aggregate`` (min, max or sum);
* models with ``needs_own_delayed`` also get the flow's own ``own_load`` one
  round trip ago (TCP Symbiosis subtracts it from the link's load; Reno needs
  its window one RTT ago).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np

from ..errors import InputError, check_finite

NUMPY_OPS = SimpleNamespace(
    log=np.log, exp=np.exp, minimum=np.minimum, maximum=np.maximum,
    where=np.where, lib="numpy",
)


def __getattr__(name):
    # SYMPY_OPS is built on first use: importing SymPy costs ~0.15 s that a
    # simulation never needs (PEP 562 module attribute)
    # SYMPY_OPS: the symbolic layer's (linearization: a law may keep only the branch its equilibrium lies on,
    # e.g. RED's ramp, ecocc.models.loss.red_probability); SYMPY_EXACT_OPS (exact=True): the whole law, for
    # code that simulates from the symbols (the generated kernels, ecocc.dde.codegen; the log-space laws,
    # ecocc.models.logspace)
    if name in ("SYMPY_OPS", "SYMPY_EXACT_OPS"):
        import sympy
        ops = SimpleNamespace(
            log=sympy.log, exp=sympy.exp, minimum=sympy.Min, maximum=sympy.Max,
            where=lambda c, a, b: sympy.Piecewise((a, c), (b, True)), lib="sympy",
            exact=name == "SYMPY_EXACT_OPS",
        )
        globals()[name] = ops
        return ops
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass(frozen=True)
class ModelParams:
    """Base of model parameter objects: validates fields on construction.

    Subclasses declare ``_positive`` and ``_nonneg`` tuples of field names and
    may add a ``_check`` method for anything else.
    """

    _positive = ()
    _nonneg = ()
    CHOICES = {}  # name -> allowed values (class attribute, not a field)

    def __post_init__(self):
        for f in dataclasses.fields(self):
            if not f.init:
                continue
            v = getattr(self, f.name)
            if f.name in self._positive:
                object.__setattr__(self, f.name, check_finite(f"{type(self).__name__}.{f.name}", v, positive=True))
            elif f.name in self._nonneg:
                object.__setattr__(self, f.name, check_finite(f"{type(self).__name__}.{f.name}", v, nonneg=True))
        for name, allowed in self.CHOICES.items():
            v = getattr(self, name)
            if v not in allowed:
                raise InputError(f"{type(self).__name__}.{name}", v, f"one of {tuple(allowed)}")
        self._check()

    def _check(self):
        pass

    def replace(self, **changes):
        known = {f.name for f in dataclasses.fields(self) if f.init}
        for k in changes:
            if k not in known:
                raise InputError(f"{type(self).__name__} parameter", k, f"one of {sorted(known)}")
        return dataclasses.replace(self, **changes)

    def as_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.init}

    @classmethod
    def field_names(cls):
        return [f.name for f in dataclasses.fields(cls) if f.init]


class NetworkModel:
    """Base class; subclasses fill in the class attributes and the laws."""

    name = "base"
    Params = ModelParams
    #: per-flow state variables (natural units) and whether each is
    #: integrated as its logarithm (keeps rates positive, no log of zero)
    flow_states: tuple = ()
    flow_log: tuple = ()
    #: per-link state variables besides the queue
    link_states: tuple = ()
    link_log: tuple = ()
    path_aggregate = "min"
    needs_own_delayed = False
    signal_uses_arrival = False
    separate_load = False
    #: per-(link, flow) extras the system adds to the link's static dict
    #: passed to ``link_signal`` (pair-wise): ``"n_active"`` -- the number of
    #: active flows on the link (at the same delays as the load ``y``);
    #: ``"rate"`` -- the flow's current sending rate (XCP's per-packet feedback)
    pair_extras: tuple = ()
    description = ""

    # -- laws: overridden by the models --------------------------------------
    def flow_rate(self, ops, s, qdelay, P, st):
        """Sending rate (packets/s) of flows with states ``s`` (dict)."""
        raise NotImplementedError

    def flow_load(self, ops, s, qdelay, P, st):
        """What a flow adds to the *load* a link signals on (default: its rate).

        The queue always integrates the sending rates; only models whose
        link signal is built from something else (TCP Symbiosis eq. 17:
        ``w_k / tau_k``) override this and set ``separate_load = True``.
        """
        return self.flow_rate(ops, s, qdelay, P, st)

    def own_load(self, ops, s, P, st):
        """What a flow contributes to its own delayed feedback (default: 0)."""
        return 0.0

    def link_signal(self, ops, ls, q, y, C, P, lst):
        """Signal a link publishes to the flows crossing it.

        ``y`` is the link's load (the arrival rate unless ``separate_load``);
        it is only passed when ``signal_uses_arrival`` is set.
        """
        raise NotImplementedError

    def flow_law(self, ops, s, fb, own, qdelay, P, st):
        """dict: time derivative of each flow state (natural units)."""
        raise NotImplementedError

    def link_drop_fraction(self, ops, ls, q, y, C, P, lst):
        """Fraction of the arrival ``y`` a link drops *before* the buffer is
        full (active queue management, e.g. RED), or ``None`` (default: only
        tail drop at a full buffer, which the queue projection counts).

        Evaluated on the link's current state.  The system takes the dropped
        fluid out of the queue's input and adds it to the ``lost`` counter.
        """
        return None

    def link_law(self, ops, ls, q, y, C, P, lst):
        """dict: time derivative of each link state (natural units)."""
        return {}

    # -- set-up -------------------------------------------------------------
    def flow_static(self, net, P) -> dict:
        a = net.arrays
        return {"rtt": a.rtt_s, "K": a.physical_bw_pps}

    def link_static(self, net, P) -> dict:
        return {}

    def initial_flow_state(self, net, P) -> dict:
        """Flow state when a flow starts, from its initial rate."""
        raise NotImplementedError

    def initial_link_state(self, net, P) -> dict:
        return {}

    def equilibrium(self, net, P):
        """Analytic equilibrium on ``net`` with every flow active, or None.

        Returns a dict with arrays ``rate_pps`` (per flow), ``queue_pkts``
        (per link) and model-specific entries, plus ``source`` naming the
        equation it comes from.
        """
        return None

    def default_params(self):
        return self.Params()

    def make_params(self, params=None, **overrides):
        if params is None:
            params = self.Params()
        if not isinstance(params, self.Params):
            raise InputError(f"{self.name} params", type(params).__name__, f"a {self.Params.__name__}")
        return params.replace(**overrides) if overrides else params
