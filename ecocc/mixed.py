"""Mixed protocols: one network carrying flows of several protocols.

Each flow names its protocol (:attr:`ecocc.network.Flow.protocol`; ``None`` is the simulation's ``model``).
A network whose flows resolve to more than one protocol runs a *composite* assembled from the member models'
own laws (design note in ``docs/notes/dderobust.md``, "Mixed protocols"), not a hand-written mixed law:

* **State layout** (:class:`MixedSystem`): one block ``flow:<member>.<var>`` per (member, flow state) over
  that member's flows only; one block ``link:<member>.<var>`` per (member, link state) over *every* link
  (AECP's router runs its rate-factor law on every link, on the total arrival and the shared queue, whoever
  sends); the queue, ``lost``, ``arrived``, ``departed``, ``queue_area`` and ``sent`` are shared.
* **Rates and arrival.** Each flow's rate comes from its member's ``flow_rate``; the arrival at a link is the
  sum over all flows (what drop-tail and RED see), plus cross traffic.
* **Signals.** A member's ``link_signal`` is evaluated only on the (link, flow) pairs of its own flows and
  aggregated along each path with that member's ``path_aggregate`` (AECP min, PE-TCP max, Reno sum).  The
  load a member signals on (``y`` of a pair) is the sum over *all* flows on the link, with one deviation
  from the design note (which counts every flow by its own protocol's ``flow_load``), stated: a
  member's *own* flows are counted by its ``flow_load`` (Symbiosis' ``w/tau`` of eq. 17, a reading of how its
  own flows load the link), while the flows of *other* protocols are counted by their ``flow_rate``, what the
  link actually carries.  So Reno's drop-tail drop fraction ``1 - C/y`` is computed on the true arrival
  (Symbiosis' ``w/(tau + q/C)``, not ``w/tau``), consistent with the loss the queue books, and a Symbiosis
  flow sees Reno's sending rate in ``K - A``, as an ImTCP would measure it.  Each load is delayed by the
  pair's backward delay plus the sender's forward delay; cross traffic is added.
* **Laws.** Flow laws run per member on its own flows; link laws run per member on every link.

Parameters per member, chosen and validated by :func:`resolve_protocols`:

* ``protocols={"name": {"model": "reno", "aqm": "droptail", ...}}``: protocol names that are not registry
  names (or registry names with other parameters); the scenario files' ``[protocols.NAME]`` tables.
* ``params={"reno": RenoParams(...), "symbiosis": {"gamma": 0.5}}``: per member, a parameter object or a
  dict of fields.
* keyword overrides prefixed by the member name and a double underscore: ``reno__aqm="droptail"``.  On a
  mixed network an unprefixed override is refused (it would be ambiguous).

Compiled engine: :mod:`ecocc.dde.codegen_mixed` generates a composite kernel from the member laws (adaptive and
fixed-step RK4), which ``engine="auto"`` uses for mixed networks, with ``rtt_includes_queueing`` and forward
delays too (adaptive); with the fixed-step solver it refuses (``engine="numba"``) or leaves to the NumPy composite
(``"auto"``) forward delays.  A member with per-pair router
extras (XCP: ``n_active``, ``self_seen``, ``rate``) is refused on every engine (:class:`MixedSystem`).
Not supported on a composite (refused with :class:`~ecocc.errors.InputError` or documented): the lock-step
map kernel and batches of parameter sets (``simulate_batch``, ``sim-map``: one model), the log-space switch of
:attr:`NetworkSystem.log_laws` (a composite keeps the natural form; a state beyond ``exp(+-300)`` fails as a
non-finite state, reported), analytic ``equilibrium`` (None: the tests solve the mixed equilibria they check).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np

from .dde.problem import LazyLookup, Lookup, sorted_unique
from .errors import InputError
from .models import REGISTRY, get_model
from .models.base import NUMPY_OPS, ModelParams
from .network import Network
from .system import (_REDUCE, NetworkSystem, _Block, _spmv, arrival_delay_set, arrival_entries,
                     arrival_positive_flows, sent_queue_entries)


# -- resolving the protocols of a network ------------------------------------------------------------------

def _model_key(model):
    m = get_model(model)
    return m.name


def resolve_protocols(network: Network, model="aecp", params=None, protocols=None, overrides=None):
    """Resolve the members of ``network``: ``({name: (model, params)}, member_name_per_flow)``.

    Parameters
    ----------
    network : Network
        The network; each flow's ``protocol`` names its member (None: ``model``).
    model : str or NetworkModel
        The model of flows whose ``protocol`` is None.
    params : ModelParams, dict or None
        With one member: its parameter object (as before), or a dict ``{member: params}``.  With several
        members: ``None`` or a dict ``{member: ModelParams or dict of fields}``.
    protocols : dict or None
        ``{name: {"model": registry name, **parameter fields}}`` (a scenario's ``[protocols.NAME]``).
    overrides : dict or None
        Keyword parameter overrides: ``member__field`` always works; an unprefixed ``field`` only when there
        is one member.

    Returns
    -------
    members : dict
        ``{member name: (NetworkModel, ModelParams)}`` in order of first appearance among the flows.
    names : list of str
        Each flow's member name, in flow order.

    Raises
    ------
    InputError
        Unknown protocol names, unknown or conflicting parameters, naming the field.
    """
    overrides = dict(overrides or {})
    protocols = dict(protocols or {})
    for nm, spec in protocols.items():
        if not isinstance(nm, str) or not nm or "__" in nm:
            raise InputError("protocols", nm, "protocol names: non-empty strings without '__'")
        if not isinstance(spec, dict) or "model" not in spec:
            raise InputError(f"protocols.{nm}", spec, f"a table with a 'model' key (one of {sorted(REGISTRY)})")
        if str(spec["model"]).lower() not in REGISTRY:
            raise InputError(f"protocols.{nm}.model", spec["model"], f"one of {sorted(REGISTRY)}")
    default_name = _model_key(model)
    names = []
    for f in network.flows:
        nm = default_name if f.protocol is None else f.protocol
        if nm != default_name and nm not in protocols and nm.lower() not in REGISTRY:
            raise InputError(f"flow[{f.name}].protocol", f.protocol,
                             f"a model in {sorted(REGISTRY)} or a key of the protocols table {sorted(protocols)}")
        names.append(nm)
    order = list(dict.fromkeys(names))  # members in order of first appearance
    single = len(order) == 1
    if params is not None and not isinstance(params, (dict, ModelParams)):
        raise InputError("params", type(params).__name__, "a parameter object or a dict {protocol: parameters}")
    if isinstance(params, dict):
        for k in params:
            if k not in order:
                raise InputError("params", k, f"a protocol of this network: one of {order}")
    elif params is not None and not single:
        raise InputError("params", type(params).__name__,
                         f"a dict {{protocol: parameters}} for a network whose flows name several protocols {order}")
    pref, plain = {}, {}
    for k, v in overrides.items():
        if "__" in k:
            mem, fld = k.split("__", 1)
            if mem not in order:
                raise InputError(k, v, f"an override prefixed by a protocol of this network: one of {order}")
            pref.setdefault(mem, {})[fld] = v
        elif single:
            plain[k] = v
        else:
            has = [nm for nm in order if k in _model_of(nm, protocols, default_name, model).Params.field_names()]
            raise InputError(k, v, f"a parameter prefixed by its protocol (one of {order}), e.g. "
                                   f"{(has or order)[0]}__{k}=...: this network mixes protocols")
    members = {}
    for nm in order:
        if nm in protocols:
            spec = dict(protocols[nm])
            m = get_model(spec.pop("model"))
            table = spec
        elif nm == default_name:
            m, table = get_model(model), {}
        else:
            m, table = get_model(nm), {}
        given = params.get(nm) if isinstance(params, dict) else params
        if isinstance(given, ModelParams):
            if table:
                raise InputError(f"params.{nm}", type(given).__name__,
                                 f"either the protocols table's fields {sorted(table)} or a parameter object, not both")
            P = m.make_params(given)
        else:
            fields = dict(table)
            if isinstance(given, dict):
                clash = sorted(set(fields) & set(given))
                if clash:
                    raise InputError(f"params.{nm}.{clash[0]}", given[clash[0]],
                                     f"one value: the protocols table already sets {clash[0]} = {fields[clash[0]]!r}")
                fields.update(given)
            elif given is not None:
                raise InputError(f"params.{nm}", type(given).__name__, "a parameter object or a dict of fields")
            P = _make(m, nm, fields)
        if plain:  # one member: unprefixed overrides, exactly as model.make_params(params, **overrides)
            P = P.replace(**plain)
        extra = pref.get(nm)
        if extra:
            P = _replace(P, nm, extra)
        members[nm] = (m, P)
    return members, names


def _model_of(nm, protocols, default_name, model):
    if nm in protocols:
        return get_model(protocols[nm]["model"])
    return get_model(model) if nm == default_name else get_model(nm)


def _make(m, member, fields):
    try:
        return m.make_params(None, **fields)
    except InputError as e:
        raise InputError(f"{member}.{e.field}" if not str(e.field).startswith(member) else e.field,
                         e.value, e.allowed) from None


def _replace(P, member, fields):
    try:
        return P.replace(**fields)
    except InputError as e:
        raise InputError(f"{member}__{e.value}" if "parameter" in str(e.field) else e.field,
                         e.value, e.allowed) from None


@dataclass(frozen=True)
class MixedParams:
    """The parameters of a composite: ``{member: ModelParams}``."""

    members: dict = field(default_factory=dict)
    delayed_feedback = True

    def as_dict(self):
        """Return the parameters as plain data, one table per member.

        Returns
        -------
        dict
            ``{member: {"model": registry name, **parameter fields}}`` (units as in each model's parameters).
        """
        return {nm: {"model": m.name, **P.as_dict()} for nm, (m, P) in self.members.items()}


class Mixed:
    """A composite of member models on one network (see the module docstring).

    Parameters
    ----------
    members : dict
        ``{name: (NetworkModel, params)}``.
    flow_member : sequence of str
        Each flow's member name.
    """

    def __init__(self, members: dict, flow_member):
        self.members = dict(members)
        self.flow_member = list(flow_member)
        self.name = "mixed(" + "+".join(self.members) + ")"

    def equilibrium(self, net, P):
        """Return no analytic equilibrium: a composite has none (the tests solve the mixed equilibria they check).

        Parameters
        ----------
        net : Network
            The network (unused).
        P : MixedParams
            The parameters (unused).

        Returns
        -------
        None
            Always.
        """
        return None


# -- the composite on a network --------------------------------------------------------------------------

class _Member:
    pass


class _LazyCSR:
    """A 0/1 aggregation matrix (row ``rows[i]`` of column ``i``) built as scipy CSR on first use."""

    def __init__(self, rows, n_rows):
        self.rows, self.n_rows, self._m = rows, int(n_rows), None

    @property
    def matrix(self):
        """The CSR matrix, ``(n_rows, len(rows))``."""
        if self._m is None:
            import scipy.sparse as sp
            k = self.rows.size
            self._m = sp.csr_matrix((np.ones(k), (self.rows, np.arange(k))), shape=(self.n_rows, k))
        return self._m


class MixedSystem(NetworkSystem):
    """A :class:`Mixed` composite on a network, ready for the NumPy reference solvers.

    Shares :meth:`NetworkSystem.problem`, :meth:`~NetworkSystem.project` and
    :meth:`~NetworkSystem.default_atol`; the layout, lookups and right-hand side are assembled per member
    from the member laws.

    Parameters
    ----------
    mixed : Mixed
        The composite (members and each flow's member).
    network : Network
        One network (not a batch).
    t_end : float
        End of the run, seconds.
    rtt_includes_queueing : bool, optional
        Lengthen every feedback delay by the flow's current queueing delay.
    load_rtt : {"current", "sent"}, optional
        The queueing delay every delayed rate or load (each member's) is read with: the current one (default)
        or the sending time's (:class:`ecocc.system.NetworkSystem`).
    past : {"silent", "steady"}, optional
        The reading of the past before ``t0 = 0`` (:mod:`ecocc.system`): no traffic before the flows start
        (default), or the flows starting at ``t0`` sending at their initial state before.

    Raises
    ------
    InputError
        For a ``load_rtt`` not in :data:`ecocc.system.LOAD_RTT`, a ``past`` not in :data:`ecocc.system.PASTS`,
        a non-bool ``rtt_includes_queueing``, ``rtt_includes_queueing`` with a member's
        ``delayed_feedback=False``, a batch of networks, or a member with per-pair router extras (XCP).
    """

    def __init__(self, mixed: Mixed, network: Network, t_end: float, rtt_includes_queueing: bool = False,
                 load_rtt: str = "current", past: str = "silent"):
        if not isinstance(rtt_includes_queueing, (bool, np.bool_)):
            raise InputError("rtt_includes_queueing", rtt_includes_queueing, "True or False")
        from .system import check_load_rtt, check_past, effective_start
        self.load_rtt = check_load_rtt(load_rtt)
        self.past = check_past(past)
        a = network.arrays
        self.start_s = effective_start(a.start_s, self.past)  # the activity tests' (NetworkSystem.start_s)
        if np.ndim(a.rtt_s) != 1:
            raise InputError("network", "a batch", "one network (a mixed network does not run in batches)")
        self.model, self.net, self.a = mixed, network, a
        self.P = MixedParams(mixed.members)
        nP, L = network.n_flows, network.n_links
        self.n_flows, self.n_links = nP, L
        self.rtt_includes_queueing = bool(rtt_includes_queueing)
        if any(getattr(P, "aqm", None) == "red" for _, P in mixed.members.values()):
            from .dde.engine import _warn_once
            _warn_once("mixed-red", "RED on a mixed network acts as a loss signal only: its early drops are not "
                                    "taken out of the queue input (single-protocol runs take them out)")
        self.C = a.capacity_pps
        self.rtt_s = a.rtt_s
        self.flow_pair_start = a.flow_pair_start[:-1]
        self.C_pair = self.C[a.pair_link]
        pl, pf = a.pair_link, a.pair_flow
        fm = np.array([list(mixed.members).index(n) for n in mixed.flow_member], dtype=int)
        self.flow_member_index = fm
        bwd = np.array(a.pair_bwd_s, dtype=float, copy=True)
        self.mem = []
        blocks, off = {}, 0
        for i, (nm, (m, P)) in enumerate(mixed.members.items()):
            if m.pair_extras:
                # XCP: its router rations feedback among the flows whose traffic it sees (n_active, self_seen,
                # each flow's own rate); the composite computes no per-pair extras on either engine
                raise InputError(f"protocols.{nm}.model", m.name,
                                 f"a model without per-pair router extras on a mixed network ({m.name} needs "
                                 f"{', '.join(m.pair_extras)}, which the mixed composite does not compute); "
                                 f"run {m.name} flows on a network of their own")
            M = _Member()
            M.name, M.model, M.P = nm, m, P
            M.flows = np.flatnonzero(fm == i)
            M.pairs = np.flatnonzero(fm[pf] == i)
            M.loc = np.full(nP, -1)
            M.loc[M.flows] = np.arange(M.flows.size)
            M.pair_start = np.searchsorted(pf[M.pairs], M.flows)  # pairs are ordered by flow
            st = m.flow_static(network, P)
            M.st_all = {k: np.broadcast_to(np.asarray(v, dtype=float), (nP,)) for k, v in st.items()}
            M.st = {k: v[M.flows] for k, v in M.st_all.items()}
            M.st_pair_flow = {k: v[pf[M.pairs]] for k, v in M.st_all.items()}
            # at the buffer: a member's own bound may be lower (models.loss: RED's max_th bounds a queue it drops
            # from), but on a mixed network RED's early drops are not taken out of the queue (above), so the
            # bound is the buffer and the queue may pass max_th
            lst = m.link_static_at(network, P, network.arrays.buffer_pkts)
            M.lst = {k: np.broadcast_to(np.asarray(v, dtype=float), (L,)) for k, v in lst.items()}
            M.lst_pair = {k: v[pl[M.pairs]] for k, v in M.lst.items()}
            M.C_pair = self.C[pl[M.pairs]]
            if not getattr(P, "delayed_feedback", True):
                if rtt_includes_queueing:
                    raise InputError("rtt_includes_queueing", rtt_includes_queueing,
                                     f"False when {nm}'s delayed_feedback=False")
                bwd[M.pairs] = 0.0
            for v, lg in zip(m.flow_states, m.flow_log):
                blocks[f"flow:{nm}.{v}"] = _Block(f"flow:{nm}.{v}", off, M.flows.size, lg); off += M.flows.size
            for v, lg in zip(m.link_states, m.link_log):
                blocks[f"link:{nm}.{v}"] = _Block(f"link:{nm}.{v}", off, L, lg); off += L
            self.mem.append(M)
        for b in ("queue", "lost", "arrived", "departed", "queue_area"):
            blocks[b] = _Block(b, off, L); off += L
        blocks["sent"] = _Block("sent", off, nP); off += nP
        self.layout, self.n = blocks, off
        self.t_end = float(t_end)
        self._cross_setup(t_end)
        self.bwd, self.fwd = bwd, a.pair_fwd_s
        self.has_fwd = bool(np.any(self.fwd > 0))
        self._build_lookups()

    # the log-space switch derives one model's laws; a composite keeps the natural form (module docstring)
    log_laws = None

    def _fvars_starts(self, M):
        return [self.layout[f"flow:{M.name}.{v}"].start for v in M.model.flow_states]

    def _build_lookups(self):
        a = self.a
        pl, pf = a.pair_link, a.pair_flow
        lk, self.lk_index, self._recv = [], {}, []
        #: lookup index -> (member i, member j, queue lookup?) of the arrival lookups (LazyLookup, built on first use)
        self._arr_of = {}

        def add(name, comps, delays, recv):
            self.lk_index[name] = len(lk)
            lk.append(comps if delays is None else Lookup(comps, delays))
            self._recv.append(recv)

        L = self.n_links
        has_flow = np.zeros((len(self.mem), L), dtype=bool)  # links carrying a flow of member j
        for j in range(len(self.mem)):
            has_flow[j, pl[self.flow_member_index[pf] == j]] = True
        for i, M in enumerate(self.mem):
            m, lay = M.model, self.layout
            p_l, p_f = pl[M.pairs], pf[M.pairs]
            comps = [lay[f"link:{M.name}.{v}"].start + p_l for v in m.link_states] + [lay["queue"].start + p_l]
            add(f"fb:{M.name}", np.concatenate(comps), np.tile(self.bwd[M.pairs], len(comps)),
                np.tile(p_f, len(comps)))
            fv = self._fvars_starts(M)
            if self.has_fwd:
                add(f"fwd:{M.name}", np.concatenate([o + M.loc[p_f] for o in fv]),
                    np.tile(self.fwd[M.pairs], len(fv)), None)
                if self.load_rtt == "sent":  # each pair's flow's path queues at its forward delay
                    links, dq_, st_, _ = sent_queue_entries(a, p_f, self.fwd[M.pairs])
                    M.fwdq = (st_, self.C[links])
                    add(f"fwdq:{M.name}", lay["queue"].start + links, dq_, None)
            if m.needs_own_delayed:
                idx = np.arange(M.flows.size)
                add(f"own:{M.name}", np.concatenate([o + idx for o in fv]), np.tile(self.rtt_s[M.flows], len(fv)),
                    np.tile(M.flows, len(fv)))
            M.arr_names = []
            if m.signal_uses_arrival:
                # every flow k on the link of each of this member's pairs r, grouped by k's own member N: one entry
                # per (pair of M, flow of N on its link), sum_l n_l^2 of them over the members (9e7 at 1e5 flows on
                # 1,000 links), built on first use as the single-model arrival lookup (ecocc.system; LazyLookup):
                # the NumPy composite gathers through them, the compiled composite reads the pairs' own CSR
                on_m = np.zeros(L, dtype=bool)
                on_m[p_l] = True
                for j, N in enumerate(self.mem):
                    if not np.any(on_m & has_flow[j]):  # no flow of N on a link of M's pairs: no entry
                        continue
                    nm = f"arr:{M.name}:{N.name}"
                    self._arr_of[len(lk)] = (i, j, False)
                    add(nm, LazyLookup(functools.partial(self._mix_lookup, i, j),
                                       functools.partial(self._mix_positive_delays, i, j),
                                       functools.partial(self._mix_delayed_comps, i, j)),
                        None, functools.partial(self._mix_recv, i, j, False))
                    qsent = None
                    if self.load_rtt == "sent":  # each entry's flow's path queues at the entry's delay
                        self._arr_of[len(lk)] = (i, j, True)
                        add(nm + ":q", LazyLookup(functools.partial(self._mix_q_lookup, i, j),
                                                  functools.partial(self._mix_positive_delays, i, j),
                                                  functools.partial(self._mix_q_delayed_comps, i, j)),
                            None, functools.partial(self._mix_recv, i, j, True))
                        qsent = nm + ":q"
                    M.arr_names.append((nm, j, qsent))
        self.lookups = lk

    # -- the arrival entries of each (member M, member N), built on first use (the NumPy composite only) --------
    def _mix_entries(self, i, j):
        """``(k, d, rw)`` of member i's arrival entries of member j's flows: the flow, the delay and the position
        of the receiving pair in ``mem[i].pairs`` of each (every member j's split cached at once, from one
        :func:`ecocc.system.arrival_entries` of member i's pairs)."""
        cache = self.__dict__.setdefault("_mix_cache", {})
        if ("e", i, j) not in cache:
            ks, dl, rows = arrival_entries(self.a, self.bwd, self.fwd, self.mem[i].pairs)
            mk = self.flow_member_index[ks]
            for jj in range(len(self.mem)):
                sel = mk == jj
                cache[("e", i, jj)] = (ks[sel], dl[sel], rows[sel])
            del ks, dl, rows, mk
        return cache[("e", i, j)]

    def _mix_q_entries(self, i, j):
        """:func:`ecocc.system.sent_queue_entries` of :meth:`_mix_entries` (``load_rtt="sent"``), cached."""
        cache = self.__dict__.setdefault("_mix_cache", {})
        if ("q", i, j) not in cache:
            k, d, _ = self._mix_entries(i, j)
            cache[("q", i, j)] = sent_queue_entries(self.a, k, d)
        return cache[("q", i, j)]

    def _mix_lookup(self, i, j):
        k, d, _ = self._mix_entries(i, j)
        N = self.mem[j]
        fvN = self._fvars_starts(N)
        return np.concatenate([o + N.loc[k] for o in fvN]), np.tile(d, len(fvN))

    def _mix_q_lookup(self, i, j):
        links, dq_ = self._mix_q_entries(i, j)[:2]
        return self.layout["queue"].start + links, dq_

    def _mix_recv(self, i, j, q):
        """The receiving flow of each entry of the lookup (i, j) (``q``: its queue lookup), for
        :meth:`queueing_delays` (cached)."""
        cache = self.__dict__.setdefault("_mix_cache", {})
        if ("r", i, j, q) not in cache:
            _, _, rw = self._mix_entries(i, j)
            recv = self.a.pair_flow[self.mem[i].pairs][rw]
            cache[("r", i, j, q)] = (recv[self._mix_q_entries(i, j)[3]] if q
                                     else np.tile(recv, len(self.mem[j].model.flow_states)))
        return cache[("r", i, j, q)]

    def _mix_delay_set(self, i, j, flow_mask=None):
        """The distinct delays of the entries (i, j) (of the flows with ``flow_mask``), without building them."""
        mine = self.flow_member_index == j
        return arrival_delay_set(self.a, self.bwd, self.fwd, self.n_links,
                                 mine if flow_mask is None else mine & np.asarray(flow_mask, dtype=bool),
                                 self.mem[i].pairs)

    def _mix_positive_delays(self, i, j):
        d = self._mix_delay_set(i, j)
        return d[d > 0]

    def _mix_positive_flows(self, i, j):
        """Member j's flows (global indices) with an entry of positive delay seen by member i's pairs."""
        kpos = arrival_positive_flows(self.a, self.bwd, self.fwd, self.n_links, self.n_flows, self.mem[i].pairs)
        return np.flatnonzero(kpos & (self.flow_member_index == j))

    def _mix_delayed_comps(self, i, j):
        N = self.mem[j]
        k = self._mix_positive_flows(i, j)
        return np.concatenate([o + N.loc[k] for o in self._fvars_starts(N)] + [np.zeros(0, dtype=np.int64)])

    def _mix_q_delayed_comps(self, i, j):
        a = self.a
        pl, pf = np.asarray(a.pair_link), np.asarray(a.pair_flow)
        kk = np.zeros(self.n_flows, dtype=bool)
        kk[self._mix_positive_flows(i, j)] = True
        q = np.zeros(self.n_links, dtype=bool)
        q[pl[kk[pf]]] = True
        return self.layout["queue"].start + np.flatnonzero(q)

    def _mix_terms(self, i):
        """Member i's arrival terms for the NumPy right-hand side: ``(lookup name, member N, k, d, S, qsent)``
        per member N, cached (builds the entries)."""
        cache = self.__dict__.setdefault("_mix_cache", {})
        if ("t", i) not in cache:
            M, out = self.mem[i], []
            for nm, j, qname in M.arr_names:
                k, d, rw = self._mix_entries(i, j)
                S = _LazyCSR(rw, M.pairs.size)  # scipy.sparse on the NumPy right-hand side's first call
                qsent = None
                if qname is not None:
                    links, _, st_, _ = self._mix_q_entries(i, j)
                    qsent = (qname, st_, self.C[links])
                out.append((nm, self.mem[j], k, d, S, qsent))
            cache[("t", i)] = out
        return cache[("t", i)]

    def flow_of_component(self):
        """The flow each state component belongs to (each member's flow-state blocks), ``-1`` for the others
        (for :meth:`startup_jumps`).

        Returns
        -------
        numpy.ndarray
            int64, shape ``(n,)``.
        """
        out = np.full(self.n, -1, dtype=np.int64)
        for M in self.mem:
            for v in M.model.flow_states:
                out[self.layout[f"flow:{M.name}.{v}"].sl] = M.flows
        return out

    def startup_jumps(self, t_end=None):
        """:meth:`NetworkSystem.startup_jumps` of the composite: ``t0 + d`` for every delay ``d`` at which some
        lookup reads a flow starting at ``t0`` with no traffic before (``past="silent"``).

        Parameters
        ----------
        t_end : float or None, optional
            Keep the times in ``(0, t_end]`` (None: :attr:`t_end`).

        Returns
        -------
        numpy.ndarray
            Sorted distinct times, seconds.
        """
        t_end = self.t_end if t_end is None else float(t_end)
        if self.past != "silent":
            return np.zeros(0)
        silent = np.asarray(self.start_s, dtype=float) <= 0.0
        fc = self.flow_of_component()
        parts = [np.zeros(0)]
        for il, lk in enumerate(self.lookups):
            if il in self._arr_of:  # an arrival lookup, without its entries: the delays of its silent flows' entries
                i, j, q = self._arr_of[il]
                if not q:  # (its queue lookup reads queues, no flow's activity)
                    parts.append(self._mix_delay_set(i, j, silent))
                continue
            fl = fc[lk.comps]
            sel = fl >= 0
            sel[sel] = silent[fl[sel]]
            parts.append(np.asarray(lk.delays, dtype=float)[sel])
        d = sorted_unique(np.concatenate(parts))
        return d[(d > 0.0) & (d <= t_end)]

    def _split(self, M, z, n_each):
        out = {}
        for i, (v, lg) in enumerate(zip(M.model.flow_states, M.model.flow_log)):
            val = z[..., i * n_each:(i + 1) * n_each]
            out[v] = np.exp(val) if lg else val
        return out

    def _member_vars(self, y, M, kind):
        m = M.model
        names, logs = (m.flow_states, m.flow_log) if kind == "flow" else (m.link_states, m.link_log)
        out = {}
        for v, lg in zip(names, logs):
            val = y[..., self.layout[f"{kind}:{M.name}.{v}"].sl]
            out[v] = np.exp(val) if lg else val
        return out

    def rates(self, y, t):
        """Compute the sending rate of every flow, each by its member's ``flow_rate``.

        Parameters
        ----------
        y : numpy.ndarray
            State(s), shape ``(..., n)``.
        t : float or numpy.ndarray
            Time(s), seconds, one per leading index of ``y``.

        Returns
        -------
        rate : numpy.ndarray
            Sending rates, packets/s, shape ``y.shape[:-1] + (n_flows,)`` (zero for inactive flows).
        qdelay : numpy.ndarray
            Each flow's queueing delay ``sum_{l in p} q_l / C_l``, seconds, same shape.
        active : numpy.ndarray
            Which flows send at ``t``, boolean, same shape.
        """
        a = self.a
        q = y[..., self.layout["queue"].sl]
        qdelay = a.flow_sum_over_route(q / self.C)  # routing.T @ (q / C) without scipy.sparse
        act = (self.start_s <= np.asarray(t)[..., None]) & (np.asarray(t)[..., None] < a.stop_s)
        rate = np.zeros(np.shape(y)[:-1] + (self.n_flows,))
        for M in self.mem:
            fs = self._member_vars(y, M, "flow")
            rate[..., M.flows] = M.model.flow_rate(NUMPY_OPS, fs, qdelay[..., M.flows], M.P, M.st) * act[..., M.flows]
        return rate, qdelay, act

    def rhs(self, t, y, Z, sat_lo, sat_hi):
        """Compute the raw time derivative of the composite's state (the right-hand side of its :class:`DDEProblem`).

        Parameters
        ----------
        t : float
            Time, seconds.
        y : numpy.ndarray
            State, shape ``(n,)``, in the layout of :attr:`layout`.
        Z : list of numpy.ndarray
            Delayed values, one array per entry of :attr:`lookups`.
        sat_lo, sat_hi : numpy.ndarray
            Boolean masks over the queues held at 0 or at their buffer during the current step; may be empty.

        Returns
        -------
        numpy.ndarray
            dy/dt, shape of ``y`` (per-member flow and link laws, shared queues and counters in packets/s).
        """
        a, ops = self.a, NUMPY_OPS
        pl, pf = a.pair_link, a.pair_flow
        q = y[..., self.layout["queue"].sl]
        act = self.active(t)
        qdelay = _spmv(self.Rt, q / self.C)
        cross_now = self.cross(t)
        rate = np.zeros(np.shape(y)[:-1] + (self.n_flows,))
        fs_of = {}
        for M in self.mem:
            fs = fs_of[M.name] = self._member_vars(y, M, "flow")
            rate[..., M.flows] = M.model.flow_rate(ops, fs, qdelay[..., M.flows], M.P, M.st) * act[M.flows]
        if self.has_fwd:
            r_pair = np.zeros(np.shape(y)[:-1] + (pl.size,))
            act_p = self.active_pairs(t - self.fwd)
            for M in self.mem:
                fpair = self._split(M, Z[self.lk_index[f"fwd:{M.name}"]], M.pairs.size)
                if self.load_rtt == "sent":  # the queueing delay at the sending time
                    st_, Cq = M.fwdq
                    qf = np.add.reduceat(Z[self.lk_index[f"fwdq:{M.name}"]] / Cq, st_, axis=-1)
                else:
                    qf = qdelay[..., pf[M.pairs]]
                r_pair[..., M.pairs] = M.model.flow_rate(ops, fpair, qf, M.P, M.st_pair_flow) * act_p[M.pairs]
            arrival = _spmv(self.link_from_pair, r_pair) + cross_now
        else:
            arrival = _spmv(self.R, rate) + cross_now
        out = np.zeros(np.shape(y))
        for M in self.mem:
            m, P = M.model, M.P
            npm = M.pairs.size
            zfb = Z[self.lk_index[f"fb:{M.name}"]]
            ls_pair = {}
            for i, (v, lg) in enumerate(zip(m.link_states, m.link_log)):
                val = zfb[..., i * npm:(i + 1) * npm]
                ls_pair[v] = np.exp(val) if lg else val
            q_pair = zfb[..., len(m.link_states) * npm:]
            y_pair = None
            if m.signal_uses_arrival:
                y_pair = self.cross(t - self.bwd[M.pairs])[..., np.arange(npm), pl[M.pairs]]
                for nm, N, k, d, S, qsent in self._mix_terms(self.mem.index(M)):
                    fk = self._split(N, Z[self.lk_index[nm]], k.size)
                    stk = {kk: v[k] for kk, v in N.st_all.items()}
                    t_k = t - d
                    act_k = (self.start_s[k] <= t_k) & (t_k < a.stop_s[k])
                    # a member's own flows load its signal as the member says (flow_load: Symbiosis' w/tau
                    # of eq. 17); another protocol's flows by what they send (flow_rate), what the link carries
                    load = N.model.flow_load if N is M else N.model.flow_rate
                    if qsent is None:  # load_rtt="current": the delayed states with the current queueing delay
                        qk = qdelay[..., k]
                    else:  # "sent": the queueing delay at the sending time, from the path queues' history
                        qk = np.add.reduceat(Z[self.lk_index[qsent[0]]] / qsent[2], qsent[1], axis=-1)
                    contrib = load(ops, fk, qk, N.P, stk) * act_k
                    y_pair = _spmv(S.matrix, contrib) + y_pair
            sig = m.link_signal(ops, ls_pair, q_pair, y_pair, M.C_pair, P, M.lst_pair)
            sig = np.broadcast_to(sig, np.broadcast_shapes(np.shape(sig), (npm,)))
            fb = _REDUCE[m.path_aggregate].reduceat(sig, M.pair_start, axis=-1)
            own = None
            if m.needs_own_delayed:
                fo = self._split(M, Z[self.lk_index[f"own:{M.name}"]], M.flows.size)
                t_o = t - self.rtt_s[M.flows]
                act_o = (self.start_s[M.flows] <= t_o) & (t_o < a.stop_s[M.flows])
                own = m.own_load(ops, fo, P, M.st) * act_o
            fs = fs_of[M.name]
            dflow = m.flow_law(ops, fs, fb, own, qdelay[..., M.flows], P, M.st)
            for v in m.flow_states:
                b = self.layout[f"flow:{M.name}.{v}"]
                d = dflow[v] / fs[v] if b.log else dflow[v]
                out[..., b.sl] = np.where(act[M.flows], d, 0.0)
            if m.link_states:
                ls = self._member_vars(y, M, "link")
                dlink = m.link_law(ops, ls, q, arrival, self.C, P, M.lst)
                for v in m.link_states:
                    b = self.layout[f"link:{M.name}.{v}"]
                    out[..., b.sl] = dlink[v] / ls[v] if b.log else dlink[v]
        # Known gap: RED's early drops (NetworkModel.link_drop_fraction) are not taken out of a mixed link's
        # queue input, as single-protocol runs do (ecocc.system); RED acts here as a loss signal only, which
        # is what the rest points of tests/test_mixed.py were derived for.  MixedSystem.__init__ says so once.
        dq = arrival - self.C
        out[..., self.layout["queue"].sl] = dq
        nb = self.n_links
        if np.size(sat_hi):
            hi, lo = sat_hi[..., :nb], sat_lo[..., :nb]
        else:
            hi = lo = np.zeros(nb, dtype=bool)
        out[..., self.layout["lost"].sl] = np.where(hi, np.maximum(dq, 0.0), 0.0)
        out[..., self.layout["arrived"].sl] = arrival
        out[..., self.layout["departed"].sl] = np.where(lo, np.minimum(arrival, self.C), self.C)
        out[..., self.layout["sent"].sl] = rate
        out[..., self.layout["queue_area"].sl] = q
        return out

    def initial_state(self):
        """Build the state at ``t = 0`` from each member's initial flow and link states.

        Returns
        -------
        numpy.ndarray
            Shape ``(n,)``: member states (logs where the member keeps logs), queues and counters zero.
        """
        y = np.zeros(self.n)
        nP, L = self.n_flows, self.n_links
        for M in self.mem:
            m = M.model
            f0 = m.initial_flow_state(self.net, M.P)
            for v in m.flow_states:
                b = self.layout[f"flow:{M.name}.{v}"]
                val = np.broadcast_to(np.asarray(f0[v], dtype=float), (nP,))[M.flows]
                y[b.sl] = np.log(val) if b.log else val
            l0 = m.initial_link_state(self.net, M.P)
            for v in m.link_states:
                b = self.layout[f"link:{M.name}.{v}"]
                val = np.broadcast_to(np.asarray(l0[v], dtype=float), (L,))
                y[b.sl] = np.log(val) if b.log else val
        return y

    def delayed_read(self):
        """The state components whose delayed values the members' laws read (numpy.ndarray of int), or None when
        that cannot be told; the composite's form of :meth:`NetworkSystem.delayed_read`.

        The components the generated composite kernel stores in its history
        (:meth:`ecocc.dde.codegen_mixed.GeneratedMixed.hsrc`, from the member laws' free symbols), so that the
        NumPy solver and the compiled kernel error-check the same history at mid-step, and a composite of one
        member takes the steps of the single-model system.

        Returns
        -------
        numpy.ndarray or None
            Component indices (int64), or None (every component a lookup gathers counts as read)."""
        from .dde import codegen_mixed
        if codegen_mixed.gap(self) is not None:
            return None
        return np.asarray(codegen_mixed.generate(self).hsrc(self), dtype=np.int64)

    def empty_images(self):
        """Where a queue's emptying reaches the flows as a kink (:meth:`NetworkSystem.empty_images`): where some
        member's signal reads the delayed queue linearly (:attr:`ecocc.dde.codegen_mixed.GeneratedMixed.empty_images`),
        every emptying's images, for every pair on the link (weight ``inf``: the composite does not weigh them).
        None where no member's signal reads it so, or where the composite kernel cannot run the system.

        Returns
        -------
        numpy.ndarray or None
            Shape ``(n_links,)``.
        """
        from .dde import codegen_mixed
        if codegen_mixed.gap(self) is not None or self.hold_images() is None:
            return None
        return np.full(self.n_links, np.inf) if codegen_mixed.generate(self).empty_images else None

    def queue_gain(self):
        """The largest slope, over the members with flows on each link, of a member's signal in the delayed queue
        (:meth:`NetworkSystem.queue_gain`), or None where no member's signal reads the queue linearly with a fixed
        slope (or the composite kernel cannot run the system).

        Returns
        -------
        numpy.ndarray or None
            Shape ``(n_links,)``, per packet.
        """
        from .dde import codegen, codegen_mixed
        if codegen_mixed.gap(self) is not None:
            return None
        gen = codegen_mixed.generate(self)
        g, any_gain = np.zeros(self.n_links), False
        for i, M in enumerate(self.mem):
            expr = gen.queue_gains[i]
            if not expr or not M.pairs.size:
                continue
            vals = np.abs(codegen.per_link([expr], gen.param_names[i], M.P, self.C, gen.lst_keys[i], M.lst,
                                           self.n_links)[:, 0])
            on = np.zeros(self.n_links, dtype=bool)
            on[self.a.pair_link[M.pairs]] = True
            g = np.where(on, np.maximum(g, vals), g)
            any_gain = True
        return g if any_gain else None

    def drop_levels(self):
        """No levels of the current queue where the right-hand side kinks (:meth:`NetworkSystem.drop_levels`): in a
        mixed run RED acts as a loss signal only (its early drops are not taken out of the queue's input), so the
        queue's and the lost counter's derivatives are smooth in the current queue.

        Returns
        -------
        dict
            ``{"level_comps": empty int array, "level_values": empty float array}``.
        """
        return self._no_levels()

    def queueing_delays(self, t, y):
        """Return the extra delay of every lookup entry: the receiving flow's queueing delay.

        Parameters
        ----------
        t : float
            Time, seconds (unused).
        y : numpy.ndarray
            State, shape ``(..., n)``.

        Returns
        -------
        list of numpy.ndarray or None
            One entry per lookup: seconds per entry; None for the forward lookups.
        """
        Q = _spmv(self.Rt, y[..., self.layout["queue"].sl] / self.C)
        return [None if r is None else Q[..., r() if callable(r) else r] for r in self._recv]

    def state_at(self, flow_values: dict, queue_pkts, link_values: dict | None = None):
        """Build a full state vector from natural values (for the linearization at a rest point).

        States not given keep :meth:`initial_state`; the counters stay zero.

        Parameters
        ----------
        flow_values : dict
            ``{"<member>.<var>": value}``, e.g. ``{"reno.W": W}``: per flow of that member or a scalar, in the
            variable's natural units (packets, packets/s), not its log.
        queue_pkts : float or array_like
            Queue per link or one for all, packets.
        link_values : dict or None, optional
            ``{"<member>.<var>": value}`` per link or a scalar, e.g. ``{"aecp.r": r}``.

        Returns
        -------
        numpy.ndarray
            The state, shape ``(n,)``.

        Raises
        ------
        InputError
            For a name that is not a ``<member>.<var>`` block of this system.
        """
        y = self.initial_state()
        for kind, vals in (("flow", flow_values), ("link", link_values or {})):
            for name, v in vals.items():
                key = f"{kind}:{name}"
                if key not in self.layout:
                    raise InputError(f"{kind}_values", name, f"one of {[k[len(kind) + 1:] for k in self.layout if k.startswith(kind + ':')]}")
                b = self.layout[key]
                v = np.broadcast_to(np.asarray(v, dtype=float), (b.size,))
                y[b.sl] = np.log(v) if b.log else v
        y[self.layout["queue"].sl] = np.broadcast_to(np.asarray(queue_pkts, dtype=float), (self.n_links,))
        return y

    def trajectory_parts(self, Y, t):
        """Return the per-member series for :meth:`ecocc.results.Trajectory.from_solution`.

        Parameters
        ----------
        Y : numpy.ndarray
            States, shape ``(n_samples, n)``.
        t : numpy.ndarray
            Sample times, seconds, shape ``(n_samples,)``.

        Returns
        -------
        tuple
            ``(model_name, params_dict, flow_vars, link_vars, rate_pps)``; flow variables are named
            ``<member>.<var>`` over all flows, NaN on the flows of other members; link variables
            ``<member>.<var>`` over all links; ``rate_pps`` of shape ``(n_samples, n_flows)``.
        """
        rate, _, _ = self.rates(Y, t)
        fv, lv = {}, {}
        for M in self.mem:
            for v, arr in self._member_vars(Y, M, "flow").items():
                full = np.full((Y.shape[0], self.n_flows), np.nan)
                full[:, M.flows] = arr
                fv[f"{M.name}.{v}"] = full
            for v, arr in self._member_vars(Y, M, "link").items():
                lv[f"{M.name}.{v}"] = arr
        return self.model.name, self.P.as_dict(), fv, lv, rate

    def block_flows(self, block: str):
        """Return the global flow indices of a ``flow:<member>.<var>`` block.

        Parameters
        ----------
        block : str
            A block name of :attr:`layout`, ``"flow:<member>.<var>"``.

        Returns
        -------
        numpy.ndarray
            Indices of the member's flows, ascending.

        Raises
        ------
        StopIteration
            For a block whose member is unknown.
        """
        member = block[len("flow:"):].split(".", 1)[0]
        return next(M.flows for M in self.mem if M.name == member)

    def member_of_flow(self):
        """Return each flow's member name.

        Returns
        -------
        list of str
            One name per flow, in flow order.
        """
        return list(self.model.flow_member)


__all__ = ["Mixed", "MixedSystem", "MixedParams", "resolve_protocols"]
