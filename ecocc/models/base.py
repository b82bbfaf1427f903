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
        """A copy with some fields changed, validated like a new instance.

        Parameters
        ----------
        **changes
            New values by field name (the units are those of the fields, e.g. ``T_s`` in seconds).

        Returns
        -------
        ModelParams
            A new instance of the same class; ``self`` is unchanged (the dataclass is frozen).

        Raises
        ------
        InputError
            If a name is not an init field of the class, or a new value fails the class's checks
            (``_positive``, ``_nonneg``, ``CHOICES``, ``_check``).
        """
        known = {f.name for f in dataclasses.fields(self) if f.init}
        for k in changes:
            if k not in known:
                raise InputError(f"{type(self).__name__} parameter", k, f"one of {sorted(known)}")
        return dataclasses.replace(self, **changes)

    def as_dict(self) -> dict:
        """The init fields as a plain dict.

        Returns
        -------
        dict
            ``{field name: value}`` in declaration order (values in the fields' own units).
        """
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.init}

    @classmethod
    def field_names(cls):
        """Names of the init fields, in declaration order.

        Returns
        -------
        list of str
        """
        return [f.name for f in dataclasses.fields(cls) if f.init]


class NetworkModel:
    """Base class; subclasses fill in the class attributes and the laws."""

    name = "base"
    Params = ModelParams
    #: per-flow state variables (natural units) and whether each is
    #: integrated as its logarithm (keeps rates positive, no log of zero; a law
    #: that grows the state exponentially is smooth in log space).  A law whose
    #: ramps are additive (a straight line in x is a logarithm in ln x, which an
    #: explicit method follows with many short steps) and that keeps the state
    #: positive by itself is cheaper in natural units: XCP's rate is integrated
    #: so (PE-TCP, Reno, FAST measured faster too, not switched yet: their
    #: accuracy checks, docs/notes/natstate.md)
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
    #: ``"rate"`` -- the flow's current sending rate (XCP's per-packet feedback);
    #: ``"self_seen"`` -- 1.0 if the receiving flow's own traffic is counted in
    #: the link's load at the feedback's delay (the flow active at
    #: ``t - d_b(l, p) - d_f(l, p)``, the activity rule of ``n_active``), else 0.0:
    #: feedback carried in the flow's own packets (XCP) reaches it only then
    pair_extras: tuple = ()
    description = ""

    # -- laws: overridden by the models --------------------------------------
    def flow_rate(self, ops, s, qdelay, P, st):
        """Sending rate of flows in state ``s``.

        Parameters
        ----------
        ops : SimpleNamespace
            :data:`NUMPY_OPS` or :data:`SYMPY_OPS` (``log``, ``exp``, ``minimum``, ``maximum``, ``where``).
        s : dict
            Flow state by name (``flow_states``), in natural units (not logarithms); NumPy arrays over the
            flows (or SymPy symbols).
        qdelay : array_like
            Current queueing delay of each flow's path, ``sum_{l in p} q_l / C_l`` (s).
        P : ModelParams
            The model's parameters.
        st : dict
            Per-flow static arrays of :meth:`flow_static` (at least ``rtt``, the propagation RTT in s, and
            ``K``, the physical bandwidth in packets/s).

        Returns
        -------
        array_like
            Sending rate of each flow (packets/s).
        """
        raise NotImplementedError

    def flow_load(self, ops, s, qdelay, P, st):
        """What a flow adds to the *load* a link signals on (default: its rate).

        The queue always integrates the sending rates; only models whose
        link signal is built from something else (TCP Symbiosis eq. 17:
        ``w_k / tau_k``) override this and set ``separate_load = True``.

        Parameters
        ----------
        ops, s, qdelay, P, st
            As in :meth:`flow_rate`.

        Returns
        -------
        array_like
            Each flow's contribution to the load ``y`` of the links it crosses (packets/s).
        """
        return self.flow_rate(ops, s, qdelay, P, st)

    def own_load(self, ops, s, P, st):
        """What a flow contributes to its own delayed feedback (default: 0).

        Only used when ``needs_own_delayed`` is set: the system evaluates it on the flow's state one
        round trip ago (the propagation RTT, plus the current queueing delay with
        ``rtt_includes_queueing``) and passes it to :meth:`flow_law` as ``own``.

        Parameters
        ----------
        ops, s, P, st
            As in :meth:`flow_rate` (``s`` is the delayed state).

        Returns
        -------
        array_like or float
            The model-defined quantity (its unit is the model's: a window in packets for the window
            models, a rate in packets/s for TCP Symbiosis); 0 by default.
        """
        return 0.0

    def link_signal(self, ops, ls, q, y, C, P, lst):
        """Signal a link publishes to the flows crossing it.

        ``y`` is the link's load (the arrival rate unless ``separate_load``);
        it is only passed when ``signal_uses_arrival`` is set.  The system calls
        this once per (link, flow) pair with the link's state, queue and load one
        backward delay ``d_b(l, p)`` ago, then aggregates over each flow's path
        with ``path_aggregate``.

        Parameters
        ----------
        ops : SimpleNamespace
            :data:`NUMPY_OPS` or :data:`SYMPY_OPS`.
        ls : dict
            Link state by name (``link_states``), natural units.
        q : array_like
            Queue length (packets).
        y : array_like or None
            The link's load (packets/s): the arrival rate including cross traffic, or the sum of
            :meth:`flow_load` plus cross traffic when ``separate_load`` is set; None unless
            ``signal_uses_arrival``.
        C : array_like
            Link capacity (packets/s), cross traffic *not* subtracted.
        P : ModelParams
            The model's parameters.
        lst : dict
            Per-link static arrays of :meth:`link_static`, plus the ``pair_extras`` the model asks for.

            All arrays are per (link, flow) pair here.

        Returns
        -------
        array_like
            The signal (its unit is the model's: a rate factor in packets/s for AECP, a normalised
            load for PE-TCP, a probability for the loss models, a delay in s for FAST).
        """
        raise NotImplementedError

    def flow_law(self, ops, s, fb, own, qdelay, P, st):
        """Time derivative of each flow state (natural units).

        Parameters
        ----------
        ops : SimpleNamespace
            :data:`NUMPY_OPS` or :data:`SYMPY_OPS` (``log``, ``exp``, ``minimum``, ``maximum``, ``where``).
        s : dict
            Flow state by name (``flow_states``), in natural units (not logarithms); NumPy arrays over the
            flows (or SymPy symbols).
        fb : array_like
            The flow's feedback: the ``path_aggregate`` of :meth:`link_signal` over its path, each link
            read one backward delay late (unit of the signal).
        own : array_like or None
            :meth:`own_load` one round trip ago (0 for a flow that was not active then), or None unless
            ``needs_own_delayed``.
        qdelay : array_like
            Current queueing delay of the flow's path (s).
        P : ModelParams
            The model's parameters.
        st : dict
            Per-flow static arrays of :meth:`flow_static`.

        Returns
        -------
        dict
            ``{state name: d(state)/dt}`` for every name in ``flow_states``, in the state's unit per
            second (the system divides by the state itself for log states).
        """
        raise NotImplementedError

    def link_drop_fraction(self, ops, ls, q, y, C, P, lst):
        """Fraction of the arrival a link drops before the buffer is full (AQM), or None.

        Active queue management (e.g. RED) drops packets before the buffer is
        full; ``None`` (default) means only tail drop at a full buffer, which the
        queue projection counts.  Evaluated on the link's current state.  The
        system takes the dropped fluid out of the queue's input and adds it to
        the ``lost`` counter.

        Parameters
        ----------
        ops : SimpleNamespace
            :data:`NUMPY_OPS` or :data:`SYMPY_OPS`.
        ls : dict
            Link state by name (``link_states``), natural units.
        q : array_like
            Queue length (packets).
        y : array_like
            Current arrival rate at the link: the flows' sending rates plus cross traffic (packets/s).
        C : array_like
            Link capacity (packets/s), cross traffic *not* subtracted.
        P : ModelParams
            The model's parameters.
        lst : dict
            Per-link static arrays of :meth:`link_static`.

            All arrays are per link, at the current time.

        Returns
        -------
        array_like or None
            Dropped fraction of the arrival, in [0, 1], per link; None for no early drops.
        """
        return None

    def link_law(self, ops, ls, q, y, C, P, lst):
        """Time derivative of each link state besides the queue (natural units).

        Evaluated per link on the link's current state, queue and arrival rate.

        Parameters
        ----------
        ops : SimpleNamespace
            :data:`NUMPY_OPS` or :data:`SYMPY_OPS`.
        ls : dict
            Link state by name (``link_states``), natural units.
        q : array_like
            Queue length (packets).
        y : array_like
            Current arrival rate at the link: the flows' sending rates plus cross traffic (packets/s).
        C : array_like
            Link capacity (packets/s), cross traffic *not* subtracted.
        P : ModelParams
            The model's parameters.
        lst : dict
            Per-link static arrays of :meth:`link_static`.

        Returns
        -------
        dict
            ``{state name: d(state)/dt}`` for every name in ``link_states`` (empty by default).
        """
        return {}

    # -- set-up -------------------------------------------------------------
    def flow_static(self, net, P) -> dict:
        """Per-flow constants the flow laws read as ``st``.

        Parameters
        ----------
        net : ecocc.network.Network
            The network the model runs on.
        P : ModelParams
            The model's parameters.

        Returns
        -------
        dict
            ``rtt``: propagation round-trip time of each flow (s); ``K``: physical bandwidth of each
            flow (packets/s).
        """
        a = net.arrays
        return {"rtt": a.rtt_s, "K": a.physical_bw_pps}

    def link_static(self, net, P) -> dict:
        """Per-link constants the link laws read as ``lst`` (none by default).

        Parameters
        ----------
        net : ecocc.network.Network
            The network the model runs on.
        P : ModelParams
            The model's parameters.

        Returns
        -------
        dict
            Arrays over the links, by name (empty here).
        """
        return {}

    def link_static_at(self, net, P, bound_pkts) -> dict:
        """:meth:`link_static` for queues bounded at ``bound_pkts`` (the system's bound, which a batch or a map of
        members that differ in it sets to the largest): the same by default.

        Parameters
        ----------
        net : ecocc.network.Network
            The network the model runs on.
        P : ModelParams
            The model's parameters.
        bound_pkts : numpy.ndarray
            The queues' upper bound per link (packets).

        Returns
        -------
        dict
            Arrays over the links, by name.
        """
        return self.link_static(net, P)

    def queue_bound_pkts(self, net, P):
        """The largest queue each link can hold (packets): its buffer by default; a model whose queue management
        drops everything above a level bounds it there too (RED's ``max_th``,
        :meth:`ecocc.models.loss.LossBasedLink.queue_bound_pkts`).  The solvers hold a queue at this bound and
        count what it turns away as lost.

        Parameters
        ----------
        net : ecocc.network.Network
            The network (``net.arrays.buffer_pkts``).
        P : ModelParams
            The model's parameters.

        Returns
        -------
        numpy.ndarray
            Packets per link (``inf``: unbounded).
        """
        return net.arrays.buffer_pkts

    def initial_flow_state(self, net, P) -> dict:
        """Flow state when a flow starts, from its initial rate.

        Parameters
        ----------
        net : ecocc.network.Network
            The network; ``net.arrays.initial_rate_pps`` holds each flow's initial rate (packets/s).
        P : ModelParams
            The model's parameters.

        Returns
        -------
        dict
            ``{state name: array over the flows}`` in natural units, for every name in ``flow_states``.
        """
        raise NotImplementedError

    def initial_link_state(self, net, P) -> dict:
        """Link state at t = 0 (none by default).

        Parameters
        ----------
        net : ecocc.network.Network
            The network the model runs on.
        P : ModelParams
            The model's parameters.

        Returns
        -------
        dict
            ``{state name: array over the links}`` for every name in ``link_states`` (empty here).
        """
        return {}

    def equilibrium(self, net, P):
        """Analytic equilibrium on ``net`` with every flow active, or None.

        Parameters
        ----------
        net : ecocc.network.Network
            The network; cross traffic counts at its constant rate (time-varying cross traffic has no
            single equilibrium).
        P : ModelParams
            The model's parameters.

        Returns
        -------
        dict or None
            Arrays ``rate_pps`` (per flow, packets/s), ``queue_pkts`` (per link, packets) and
            model-specific entries, plus ``source`` naming the equation it comes from; None where the
            model has no closed form for this network (the default).
        """
        return None

    def default_params(self):
        """The model's parameters at their defaults (the papers' choices).

        Returns
        -------
        ModelParams
            ``self.Params()``.
        """
        return self.Params()

    def make_params(self, params=None, **overrides):
        """Parameters from an optional instance and keyword overrides.

        Parameters
        ----------
        params : ModelParams, optional
            An instance of ``self.Params``; default: the defaults.
        **overrides
            Field values replacing those of ``params`` (units of the fields).

        Returns
        -------
        ModelParams
            ``params`` itself when there are no overrides, else a validated copy.

        Raises
        ------
        InputError
            If ``params`` is not a ``self.Params``, an override names no field, or a value is not
            allowed.
        """
        if params is None:
            params = self.Params()
        if not isinstance(params, self.Params):
            raise InputError(f"{self.name} params", type(params).__name__, f"a {self.Params.__name__}")
        return params.replace(**overrides) if overrides else params
