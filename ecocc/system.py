"""Assemble a model and a network into a delay-differential problem.

State layout (``NetworkSystem.layout``), each block contiguous:

``flow:<var>`` (n_flows each, the log where the model says so),
``link:<var>`` (n_links each, idem), ``queue`` (packets), ``lost``
(cumulative packets dropped at a full buffer), ``arrived`` and
``departed`` (cumulative packets, for exact window means of utilization),
``sent`` (cumulative packets sent per flow), ``queue_area`` (integral of
the queue, packet-seconds, for exact window means).  Models with active
queue management (``link_drop_fraction``, e.g. RED) drop that fraction of the
arrival before it is queued; those drops are counted in ``lost`` too, so
arrived = departed + lost + queue holds for every model.

Approximation, stated: a delayed sending rate ``x_k(t - d)`` of a model whose
rate depends on the queueing delay (window models: Symbiosis, Reno) uses the
delayed flow state with the *current* queueing delay of the flow's path.  It
is exact when the rate does not depend on the queue (AECP, PE-TCP, Symbiosis'
``available="paper"`` load) and when all forward delays are zero for the
queue input.  The symbolic layer linearizes the same expression.

Reading of a delayed load (``load_rtt``; default ``"current"``, the reading above): ``"sent"`` evaluates
every delayed sending rate (or load) at the sending time, ``x_k(t - d) = W_k(t - d)/(tau_k + Q_k(t - d))``
with ``Q_k(s) = sum_{l in k} q_l(s)/C_l`` -- the flow's state and its path's queues at one earlier time, as
the standard fluid models (Misra-Gong-Towsley, Low) and the jitcdde peer of the benchmarks do.  The two
agree for loads that do not read the queueing delay, and at equilibria.  With ``"sent"`` the queues of the
flow's path are read through the same delay (the lookups ``arrq`` and ``fwdq``); the compiled kernels sum
such a load per link in the history as they do a queue-free load (docs/notes/renosent.md).

Round trip with queueing (``rtt_includes_queueing=True``; default False,
the papers' constant-delay reading): every feedback delay of flow ``p`` (the
link signals at ``d_b(l, p)``, the flow's own load one round trip ago, the
loads a link signals on) is lengthened by the flow's current queueing delay
``Q_p(t) = sum_{l in p} q_l(t)/C_l`` -- the round trip is
``tau_p + Q_p(t)``, with ``Q_p`` read at the current time as in the
Misra-Gong-Towsley fluid model's ``R(t)``.  Forward delays (``d_f``, only with
``delay_split="propagation"``) stay the propagation delays.  The reference
solver treats these as state-dependent delays (:mod:`ecocc.dde.problem`);
their breakpoints are not propagated (see there).

Flows are frozen (state held, rate zero) outside ``[start_s, stop_s)``;
those times are breakpoints.  Cross traffic is piecewise constant with its
switching times as breakpoints.

The past before ``t0 = 0`` (``past``, :data:`PASTS`): the state there is the
initial state (a constant past); what differs is whether the flows that start
at ``t0`` were sending in it.

* ``"silent"`` (default): a flow sends only in ``[start_s, stop_s)``, so
  before ``t0`` nobody sends -- the network is empty until the flows start,
  as the papers' ns-2 runs (connections "join the network" at their start
  times; 002 Sec. IV, 003 Sec. 4).  Every delayed read of a flow's activity
  (the load a link signals on, a flow's own load one round trip ago, the
  forward path) then switches on one delay after ``t0``: a jump of the
  right-hand side at ``t0 + d`` for every such delay ``d``.  Those times are
  breakpoints (:meth:`NetworkSystem.startup_jumps`), located by the solvers
  whatever their number.
* ``"steady"``: the flows that start at ``t0`` were sending at their initial
  state (window, rate) at every time before ``t0``: the constant past with
  the flows active in it (as a plain ``y(t - d)`` of jitcdde's
  ``constant_past`` reads it; docs/notes/symstart.md).  No jump: the delayed reads see the initial
  state until the start-up reaches them, a kink one delay after ``t0``
  (continuous right-hand side).  Flows starting later are silent before their
  ``start_s`` in both readings.  Cross traffic before ``t0`` is its rate at
  ``t0`` in both (:meth:`NetworkSystem.cross`).
"""
from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass

import numpy as np

from .dde.problem import DDEProblem, LazyLookup, Lookup, sorted_unique
from .models.base import NUMPY_OPS, NetworkModel
from .network import Network

_REDUCE = {"min": np.minimum, "max": np.maximum, "sum": np.add}

#: the readings of a delayed load (``load_rtt``): the sender's state with the *current* queueing delay of its
#: path, or its rate at the sending time (state and queueing delay both delayed)
LOAD_RTT = ("current", "sent")


def check_load_rtt(load_rtt, field="load_rtt"):
    """Validate ``load_rtt`` (one of :data:`LOAD_RTT`) and return it.

    Parameters
    ----------
    load_rtt : object
        ``"current"`` or ``"sent"``.
    field : str, optional
        The option's name, for the error message.

    Returns
    -------
    str

    Raises
    ------
    InputError
        For anything else.
    """
    from .errors import InputError
    if not isinstance(load_rtt, str) or load_rtt not in LOAD_RTT:
        raise InputError(field, load_rtt, "'current' (a delayed rate W(t - d)/(tau + Q(t)), the default) or "
                         "'sent' (the rate at the sending time, W(t - d)/(tau + Q(t - d)))")
    return load_rtt


def sent_queue_entries(a, ks, delays):
    """The queue lookups of the sending-time queueing delay ``Q_k(t - d)`` of each entry ``(k, d)``.

    Parameters
    ----------
    a : network arrays
        ``flow_pair_start``, ``pair_link`` (each route non-empty).
    ks : numpy.ndarray
        Flow of each entry (int).
    delays : numpy.ndarray
        Delay of each entry, seconds (last axis over the entries).

    Returns
    -------
    links : numpy.ndarray
        The links of each entry's route, entry after entry (int).
    dl : numpy.ndarray
        Their delays (each entry's, repeated).
    starts : numpy.ndarray
        Where each entry's links start (for ``np.add.reduceat``).
    rows : numpy.ndarray
        The entry of each link read (int).
    """
    fps, pl = np.asarray(a.flow_pair_start), np.asarray(a.pair_link)
    ks = np.asarray(ks, dtype=np.int64)
    cnt = fps[ks + 1] - fps[ks]
    rows = np.repeat(np.arange(ks.size), cnt)
    starts = np.cumsum(cnt) - cnt
    pos = np.repeat(fps[ks], cnt) + (np.arange(rows.size) - np.repeat(starts, cnt))
    return pl[pos], np.repeat(np.asarray(delays, dtype=float), cnt, axis=-1), starts, rows


def arrival_entries(a, bwd, fwd, pairs=None):
    """The arrival entries of a network: one per (link, flow) pair ``r = (l, p)`` and flow ``k`` on link ``l``
    (sum over links of n_l^2 entries), in pair order, each pair's link's flows in CSR order.

    Parameters
    ----------
    a : network arrays
        ``pair_link``, ``pair_flow``, ``flows_by_link()``.
    bwd, fwd : numpy.ndarray
        Backward and forward delay of each pair, seconds.
    pairs : numpy.ndarray or None, optional
        The receiving pairs ``r`` (int, ascending; a mixed member's own pairs, :class:`ecocc.mixed.MixedSystem`);
        None: every pair.

    Returns
    -------
    ks : numpy.ndarray
        Flow ``k`` of each entry (int).
    dl : numpy.ndarray
        Delay of each entry, ``bwd[r] + fwd[(l, k)]`` (the load at link l seen by flow p sums
        ``x_k(t - d_b(l, p) - d_f(l, k))``), seconds.
    rows : numpy.ndarray
        The pair ``r`` each entry is seen by (int; with ``pairs``, its position in ``pairs``).
    """
    pl, pf = a.pair_link, a.pair_flow
    indptr, indices = a.flows_by_link()  # routing's CSR structure, without scipy.sparse (a compiled run)
    # entries in pair order, each pair's link's flows in CSR order (array operations: sum_l n_l^2 entries,
    # 10^6 for 1,000 flows on one link, were a Python loop of 0.1 s per system)
    indptr, indices = np.asarray(indptr), np.asarray(indices)
    rl = pl if pairs is None else np.asarray(pl)[pairs]  # the receiving pairs' links
    rb = np.asarray(bwd) if pairs is None else np.asarray(bwd)[pairs]
    cnt = np.diff(indptr)[rl]
    rows = np.repeat(np.arange(rl.size), cnt)
    first = np.repeat(np.cumsum(cnt) - cnt, cnt)
    epos = np.repeat(indptr[rl], cnt) + (np.arange(rows.size) - first)  # CSR entry of each (pair, k)
    # the forward delay of CSR entry (l, k): the pair (l, k)'s (every routing entry is a pair)
    nP = np.asarray(a.flow_pair_start).size - 1
    pkey = pl.astype(np.int64) * nP + pf
    order = np.argsort(pkey, kind="stable")
    ekey = np.repeat(np.arange(indptr.size - 1), np.diff(indptr)).astype(np.int64) * nP + indices
    fwd_entry = np.asarray(fwd)[order[np.searchsorted(pkey[order], ekey)]]
    ks = indices[epos]
    dl = rb[rows] + fwd_entry[epos]
    return ks, dl, rows


def arrival_delay_set(a, bwd, fwd, n_links, flow_mask=None, pairs=None):
    """The distinct delays of the arrival entries (:func:`arrival_entries`) of the flows ``k`` with
    ``flow_mask[k]`` (None: all), seen by the pairs ``pairs`` (None: all), sorted, without building the
    entries (O(pairs) without forward delays).

    An entry (pair r = (l, p), flow k on l) has the delay ``bwd[r] + fwd[(l, k)]``: without forward delays
    the backward delays of the receiving pairs on a link holding a counted flow; with them, per link, every
    backward delay of its receiving pairs plus every forward delay of its counted flows (the same float
    additions as :func:`arrival_entries`).

    Parameters
    ----------
    a : network arrays
        ``pair_link``, ``pair_flow``.
    bwd, fwd : numpy.ndarray
        Backward and forward delay of each pair, seconds (one network: 1-D).
    n_links : int
        Number of links.
    flow_mask : numpy.ndarray or None, optional
        Boolean per flow: the flows ``k`` counted.
    pairs : numpy.ndarray or None, optional
        The receiving pairs (int).

    Returns
    -------
    numpy.ndarray
        Sorted distinct delays, seconds (zeros included).
    """
    pl, pf = np.asarray(a.pair_link), np.asarray(a.pair_flow)
    bwd, fwd = np.asarray(bwd), np.asarray(fwd)
    cnt = np.ones(pf.size, dtype=bool) if flow_mask is None else np.asarray(flow_mask, dtype=bool)[pf]
    if pairs is None:
        recv = np.ones(pl.size, dtype=bool)
    else:
        recv = np.zeros(pl.size, dtype=bool)
        recv[np.asarray(pairs, dtype=np.int64)] = True
    if not np.any(fwd > 0):  # every entry's delay is its pair's backward delay (+ a zero forward delay)
        on = np.zeros(n_links, dtype=bool)
        on[pl[cnt]] = True
        return sorted_unique(bwd[on[pl] & recv])
    order = np.argsort(pl, kind="stable")
    bounds = np.searchsorted(pl[order], np.arange(n_links + 1))
    parts = [np.zeros(0)]
    for ll in range(n_links):
        j = order[bounds[ll]:bounds[ll + 1]]
        f = sorted_unique(fwd[j[cnt[j]]])
        b = sorted_unique(bwd[j[recv[j]]])
        if f.size and b.size:
            parts.append(sorted_unique((b[:, None] + f[None, :]).ravel()))
    return sorted_unique(np.concatenate(parts))


def arrival_positive_flows(a, bwd, fwd, n_links, n_flows, pairs=None):
    """Mask of the flows k with an arrival entry of positive delay seen by the pairs ``pairs`` (None: all),
    without building the entries: a link on k's path that holds a receiving pair, where some receiving pair's
    backward delay or k's own forward delay is > 0 (both >= 0: their sum is > 0 iff one is).

    Parameters
    ----------
    a : network arrays
        ``pair_link``, ``pair_flow``.
    bwd, fwd : numpy.ndarray
        Backward and forward delay of each pair, seconds.
    n_links, n_flows : int
        Numbers of links and flows.
    pairs : numpy.ndarray or None, optional
        The receiving pairs (int).

    Returns
    -------
    numpy.ndarray
        Boolean, shape ``(n_flows,)``.
    """
    pl, pf = np.asarray(a.pair_link), np.asarray(a.pair_flow)
    bwd, fwd = np.asarray(bwd), np.asarray(fwd)
    rp = np.arange(pl.size) if pairs is None else np.asarray(pairs, dtype=np.int64)
    lhas = np.zeros(n_links, dtype=bool)
    lhas[pl[rp]] = True
    lpos = np.zeros(n_links, dtype=bool)
    lpos[pl[rp][bwd[rp] > 0]] = True
    kpos = np.zeros(n_flows, dtype=bool)
    kpos[pf[lpos[pl] | ((fwd > 0) & lhas[pl])]] = True
    return kpos


#: the readings of the past before t0 = 0 (module docstring): "silent" (default) or "steady"
PASTS = ("silent", "steady")


def check_past(value, field="past"):
    """Check a reading of the past before ``t0`` (:data:`PASTS`); return it.

    Parameters
    ----------
    value : object
        ``"silent"`` or ``"steady"``.
    field : str, optional
        The option's name, for the error message.

    Returns
    -------
    str

    Raises
    ------
    InputError
        For anything else.
    """
    from .errors import InputError
    if not isinstance(value, str) or value not in PASTS:
        raise InputError(field, value, "'silent' (no traffic before the flows start: the default) or 'steady' "
                                       "(the flows starting at t = 0 were sending at their initial state before)")
    return value


def effective_start(start_s, past):
    """The start times the activity tests use: ``start_s``, with ``-inf`` for the flows starting at ``t0 = 0``
    under ``past="steady"`` (they were sending before ``t0``).  At times ``>= 0`` the activity is the same in
    both readings; only the delayed reads before ``t0`` differ.

    Parameters
    ----------
    start_s : numpy.ndarray
        Flow start times, seconds.
    past : str
        ``"silent"`` or ``"steady"``.

    Returns
    -------
    numpy.ndarray
        Float array of the shape of ``start_s``.
    """
    st = np.asarray(start_s, dtype=float)
    return np.where(st <= 0.0, -np.inf, st) if past == "steady" else st.copy()


def _spmv(M, x):
    """``M @ x`` over the last axis of ``x`` (a vector or a batch ``(B, k)``)."""
    x = np.asarray(x, dtype=float)
    if x.ndim == 1:
        return M @ x
    return (M @ x.reshape(-1, x.shape[-1]).T).T.reshape(x.shape[:-1] + (M.shape[0],))


@dataclass
class _Block:
    name: str
    start: int
    size: int
    log: bool = False

    @property
    def sl(self):
        return slice(self.start, self.start + self.size)


def _check_one_protocol(model, network):
    """Refuse a network this one-model system would run wrong: flows naming several protocols (they run as
    the composite of :mod:`ecocc.mixed` through :func:`ecocc.simulate`), or all naming another registry model."""
    from .errors import InputError
    from .models import REGISTRY
    names = {f.protocol for f in network.flows}
    named = sorted(n for n in names if n is not None)
    if len(names) > 1 or (named and named[0].lower() in REGISTRY and REGISTRY[named[0].lower()].name != model.name
                          and not isinstance(model, REGISTRY[named[0].lower()])):
        raise InputError("network", f"flows naming protocols {named}" + (" and None" if None in names else ""),
                         f"flows of the one model {model.name!r} here (batches and the lock-step map serve one "
                         "model; mixed protocols run one at a time through ecocc.simulate or ecocc sweep, on the "
                         "compiled composite kernel)")


class NetworkSystem:
    """A model on a network, ready for the solvers.

    Parameters
    ----------
    model : NetworkModel
        The congestion-control model (one model for all flows; mixed protocols go through :mod:`ecocc.mixed`).
    network : Network
        Links, flows and cross traffic (packets/s, seconds).
    params : object
        The model's parameter object.
    t_end : float
        End of the run, seconds (cross traffic is tabulated and breakpoints collected up to it).
    rtt_includes_queueing : bool, optional
        Lengthen every feedback delay by the flow's current queueing delay (see the module docstring).
    load_rtt : {"current", "sent"}, optional
        The queueing delay a delayed rate is read with: the current one (default) or the sending time's
        (see the module docstring).
    past : {"silent", "steady"}, optional
        The reading of the past before ``t0 = 0`` (module docstring): ``"silent"`` (default) no traffic before
        the flows start; ``"steady"`` the flows starting at ``t0`` were sending at their initial state before.

    Raises
    ------
    InputError
        For a non-bool ``rtt_includes_queueing``, ``rtt_includes_queueing`` with
        ``params.delayed_feedback=False``, a ``load_rtt`` not in :data:`LOAD_RTT`, a ``past`` not in
        :data:`PASTS`, or flows naming several protocols or another model.
    """

    def __init__(self, model: NetworkModel, network: Network, params, t_end: float,
                 rtt_includes_queueing: bool = False, load_rtt: str = "current", past: str = "silent"):
        self.model, self.net, self.P = model, network, params
        from .errors import InputError
        self.load_rtt = check_load_rtt(load_rtt)
        self.past = check_past(past)
        if not isinstance(rtt_includes_queueing, (bool, np.bool_)):
            raise InputError("rtt_includes_queueing", rtt_includes_queueing, "True or False")
        if rtt_includes_queueing and not getattr(params, "delayed_feedback", True):
            raise InputError("rtt_includes_queueing", rtt_includes_queueing,
                             "False when delayed_feedback=False (there is no feedback delay to lengthen)")
        self.rtt_includes_queueing = bool(rtt_includes_queueing)
        _check_one_protocol(model, network)
        a = network.arrays
        bound = np.broadcast_to(np.asarray(model.queue_bound_pkts(network, params), dtype=float), a.buffer_pkts.shape)
        if not np.array_equal(bound, a.buffer_pkts):
            # the queues' bound inside the system (every solver's upper bound, the compiled kernels' ``buf``, the
            # projection that books the excess as lost, the link constants, set_queue_bound): the buffer, or less
            # where the model's queue management drops everything above a level (RED's max_th, models.loss); the
            # network keeps its buffers
            a = dataclasses.replace(a, buffer_pkts=np.array(bound))
        self.a = a
        #: the start times of the activity tests (:func:`effective_start`): ``-inf`` for the flows that were
        #: sending before t0 under ``past="steady"``; the compiled kernels get these too
        self.start_s = effective_start(a.start_s, self.past)
        P_, L = network.n_flows, network.n_links
        self.n_flows, self.n_links = P_, L
        blocks, off = {}, 0
        for v, lg in zip(model.flow_states, model.flow_log):
            blocks["flow:" + v] = _Block("flow:" + v, off, P_, lg); off += P_
        for v, lg in zip(model.link_states, model.link_log):
            blocks["link:" + v] = _Block("link:" + v, off, L, lg); off += L
        for nm in ("queue", "lost", "arrived", "departed", "queue_area"):
            blocks[nm] = _Block(nm, off, L); off += L
        blocks["sent"] = _Block("sent", off, P_); off += P_
        self.layout, self.n = blocks, off
        self.st = model.flow_static(network, params)
        self.lst = model.link_static_at(network, params, a.buffer_pkts)
        self.C = a.capacity_pps
        self.rtt_s = a.rtt_s  # (n_flows,) or, in a batch, (B, n_flows)
        self.flow_pair_start = a.flow_pair_start[:-1]
        self.C_pair = self.C[a.pair_link]
        self.lst_pair = {k: np.asarray(v)[..., a.pair_link] for k, v in self.lst.items()}
        self.st_pair_flow = {k: np.asarray(v)[..., a.pair_flow] for k, v in self.st.items()}
        self.t_end = float(t_end)
        self._cross_setup(t_end)
        delayed_fb = getattr(params, "delayed_feedback", True)
        self.bwd = a.pair_bwd_s if delayed_fb else np.zeros_like(a.pair_bwd_s)
        self.fwd = a.pair_fwd_s
        self.has_fwd = bool(np.any(self.fwd > 0))
        self._build_lookups()

    # -- cross traffic ----------------------------------------------------
    def _cross_setup(self, t_end):
        L = self.n_links
        series = []
        for c in self.net.cross_traffic:
            times, rates = c.piecewise(t_end)
            series.append((self.net.link_index(c.link), times, rates))
        allt = sorted_unique(np.concatenate([[0.0]] + [s[1] for s in series]))
        table = np.zeros((allt.size, L))
        for li, times, rates in series:
            k = np.searchsorted(times, allt, side="right") - 1
            table[:, li] += np.where(k >= 0, rates[np.clip(k, 0, None)], 0.0)
        self.cross_times, self.cross_table = allt, table
        self.cross_kinks = allt[(allt > 0) & (allt <= t_end)]

    def cross(self, t):
        """Return the cross traffic offered to each link at time(s) ``t``.

        Parameters
        ----------
        t : float or numpy.ndarray
            Time(s), seconds.

        Returns
        -------
        numpy.ndarray
            Cross traffic in packets/s, shape ``np.shape(t) + (n_links,)`` (zero before any schedule starts).
        """
        k = np.searchsorted(self.cross_times, t, side="right") - 1
        return self.cross_table[np.clip(k, 0, None)]

    def active(self, t):
        """Tell which flows send at time(s) ``t``: ``start_s <= t < stop_s``.

        Parameters
        ----------
        t : float or numpy.ndarray
            Time, seconds; an array broadcasts against the ``(n_flows,)`` start and stop times.

        Returns
        -------
        numpy.ndarray
            Boolean mask, shape ``(n_flows,)`` for a scalar ``t``.  Before ``t0 = 0`` the flows starting at
            ``t0`` count as sending under ``past="steady"`` (module docstring).
        """
        a = self.a
        return (self.start_s <= t) & (t < a.stop_s)

    # -- lookups -------------------------------------------------------------
    def _build_lookups(self):
        a, m = self.a, self.model
        lk, self.lk_index = [], {}

        def add(name, comps, delays=None):
            self.lk_index[name] = len(lk)
            lk.append(comps if delays is None else Lookup(comps, delays))

        pl, pf = a.pair_link, a.pair_flow
        # link state and queue at the backward delay of every (link, flow) pair
        comps = [self.layout["link:" + v].start + pl for v in m.link_states] + [self.layout["queue"].start + pl]
        add("fb", np.concatenate(comps), np.tile(self.bwd, len(comps)))
        fvars = [self.layout["flow:" + v].start for v in m.flow_states]
        if self.has_fwd:
            add("fwd", np.concatenate([o + pf for o in fvars]), np.tile(self.fwd, len(fvars)))
            if self.load_rtt == "sent":  # each pair's flow's path queues at its forward delay
                links, dl, self.fwdq_starts, _ = sent_queue_entries(a, pf, self.fwd)
                self.fwdq_C = np.asarray(self.C)[..., links]
                add("fwdq", self.layout["queue"].start + links, dl)
        if m.needs_own_delayed:
            idx = np.arange(self.n_flows)
            add("own", np.concatenate([o + idx for o in fvars]), np.tile(a.rtt_s, len(fvars)))
        if m.signal_uses_arrival:
            # load at link l seen by flow p: sum over flows k on l of x_k(t - d_b(l,p) - d_f(l,k)); one entry per
            # (pair, flow on the pair's link), sum_l n_l^2 of them (9e7 at 1e5 flows on 1,000 links): built on
            # first use (LazyLookup; the NumPy solvers gather through them, the compiled kernels read the pairs'
            # own CSR), from the delays and capacities of now (a batch later replaces self.bwd by its stack)
            self._arr_src = (self.bwd, self.fwd, self.C)
            add("arr", LazyLookup(self._arr_lookup, self._arr_positive_delays, self._arr_delayed_comps))
            if self.load_rtt == "sent":  # each entry's flow's path queues at the entry's delay
                add("arrq", LazyLookup(self._arrq_lookup, self._arr_positive_delays, self._arrq_delayed_comps))
        self.lookups = lk

    # -- the arrival entries (models whose signal reads the delayed load), built on first use ---------------
    @functools.cached_property
    def _arr_entries(self):
        """``(ks, dl, rows)`` of the arrival entries: the flow, the delay and the (link, flow) pair of each."""
        bwd, fwd, _ = self._arr_src
        return arrival_entries(self.a, bwd, fwd)

    @functools.cached_property
    def arr_flows(self):
        """Flow ``k`` of each arrival entry (int; built on first use)."""
        return self._arr_entries[0]

    @functools.cached_property
    def arr_delays(self):
        """Delay ``d_b(l, p) + d_f(l, k)`` of each arrival entry, seconds (built on first use)."""
        return self._arr_entries[1]

    @functools.cached_property
    def arr_rows(self):
        """The (link, flow) pair each arrival entry is seen by (int; built on first use)."""
        return self._arr_entries[2]

    @functools.cached_property
    def _arrq_entries(self):
        """:func:`sent_queue_entries` of the arrival entries (``load_rtt="sent"``)."""
        return sent_queue_entries(self.a, self._arr_entries[0], self._arr_entries[1])

    @functools.cached_property
    def arrq_starts(self):
        """Where each arrival entry's path queues start in the ``arrq`` lookup (``np.add.reduceat``)."""
        return self._arrq_entries[2]

    @functools.cached_property
    def arrq_rows(self):
        """The arrival entry of each ``arrq`` entry (int)."""
        return self._arrq_entries[3]

    @functools.cached_property
    def arrq_C(self):
        """Capacity of each ``arrq`` entry's link, packets/s."""
        return np.asarray(self._arr_src[2])[..., self._arrq_entries[0]]

    def _arr_lookup(self):
        ks, dl, _ = self._arr_entries
        fvars = [self.layout["flow:" + v].start for v in self.model.flow_states]
        return np.concatenate([o + ks for o in fvars]), np.tile(dl, len(fvars))

    def _arrq_lookup(self):
        links, dlq = self._arrq_entries[:2]
        return self.layout["queue"].start + links, dlq

    def _arr_delay_set(self, flow_mask=None):
        """The distinct delays of the arrival entries (of the flows ``k`` with ``flow_mask[k]``; None: all),
        sorted, without building the entries (:func:`arrival_delay_set`)."""
        bwd, fwd, _ = self._arr_src
        if np.ndim(bwd) != 1 or np.ndim(fwd) != 1:  # batch-shaped delays (a batch stacks them only later)
            ks, dl, _ = self._arr_entries
            return sorted_unique(dl if flow_mask is None else dl[..., np.asarray(flow_mask, dtype=bool)[ks]])
        return arrival_delay_set(self.a, bwd, fwd, self.n_links, flow_mask)

    def _arr_positive_delays(self):
        d = self._arr_delay_set()
        return d[d > 0]

    def _arr_positive_flows(self):
        """Mask of the flows k with an arrival entry of positive delay (:func:`arrival_positive_flows`)."""
        bwd, fwd, _ = self._arr_src
        return arrival_positive_flows(self.a, bwd, fwd, self.n_links, self.n_flows)

    def _arr_delayed_comps(self):
        k = np.flatnonzero(self._arr_positive_flows())
        return np.concatenate([self.layout["flow:" + v].start + k for v in self.model.flow_states]
                              + [np.zeros(0, dtype=np.int64)])

    def _arrq_delayed_comps(self):
        a = self.a
        pl, pf = np.asarray(a.pair_link), np.asarray(a.pair_flow)
        q = np.zeros(self.n_links, dtype=bool)
        q[pl[self._arr_positive_flows()[pf]]] = True
        return self.layout["queue"].start + np.flatnonzero(q)

    # sparse products of the NumPy right-hand side, built on first use (the compiled engine needs none)
    @functools.cached_property
    def R(self):
        """Routing, links x flows (CSR)."""
        return self.a.routing.tocsr()

    @functools.cached_property
    def Rt(self):
        """Routing transposed, flows x links (CSR)."""
        return self.a.routing.T.tocsr()

    @functools.cached_property
    def arr_sum(self):
        """Arrival entries -> their (link, flow) pair, entries x pairs (CSR; models whose signal reads the
        delayed arrival)."""
        import scipy.sparse as sp
        rows = self.arr_rows
        return sp.csr_matrix((np.ones(rows.size), (np.arange(rows.size), rows)),
                             shape=(rows.size, self.a.pair_link.size))

    @functools.cached_property
    def arr_sum_T(self):
        """:attr:`arr_sum` transposed, pairs x entries (CSR)."""
        return self.arr_sum.T.tocsr()

    @functools.cached_property
    def link_from_pair(self):
        """Pair -> link aggregation, links x pairs (CSR)."""
        import scipy.sparse as sp
        npair = self.a.pair_link.size
        return sp.csr_matrix((np.ones(npair), (self.a.pair_link, np.arange(npair))), shape=(self.n_links, npair))

    # -- state helpers -------------------------------------------------------
    def _vars(self, y, prefix, names):
        out = {}
        for v in names:
            b = self.layout[prefix + v]
            val = y[..., b.sl]
            out[v] = np.exp(val) if b.log else val
        return out

    def _split_flow_vars(self, z, n_each):
        out = {}
        for i, (v, lg) in enumerate(zip(self.model.flow_states, self.model.flow_log)):
            val = z[..., i * n_each:(i + 1) * n_each]
            out[v] = np.exp(val) if lg else val
        return out

    def _sub_static(self, idx):
        return {k: np.asarray(v)[..., idx] for k, v in self.st.items()}

    @functools.cached_property
    def log_laws(self):
        """The model's laws with log states in log space (:mod:`ecocc.models.logspace`), or None.

        Derived by SymPy from the same law functions on first use (the compiled engine never asks).
        """
        from .models.logspace import derive
        return derive(self.model, self.P, tuple(self.st), tuple(self.lst))

    #: a log state beyond +-LOG_SWITCH switches the right-hand side to the log-space laws for the rest of the
    #: run: exp(+-300) = 1e+-130 leaves room for products of two rates before float64 over/underflows, while
    #: exp(u) underflows to 0 below -745 (0/0 and log(0) in the natural form).  Both forms are the same law
    #: (equal to ~1e-12 relative, tests/test_solver_robustness.py); below the threshold the natural form runs,
    #: so ordinary runs pay no SymPy import and keep the numbers the compiled kernels are checked against.
    LOG_SWITCH = 300.0
    _log_mode = False

    def _check_log_range(self, y):
        for b in self._log_blocks:
            v = y[..., b]
            if v.size and (v.max() > self.LOG_SWITCH or v.min() < -self.LOG_SWITCH):
                if self.log_laws is not None:
                    self._log_mode = True
                return

    @functools.cached_property
    def _log_blocks(self):
        return [b.sl for name, b in self.layout.items() if name.startswith(("flow:", "link:")) and b.log]

    # -- right-hand side -----------------------------------------------------
    def rhs(self, t, y, Z, sat_lo, sat_hi):
        """Compute the raw time derivative of the state (the right-hand side given to :class:`DDEProblem`).

        Parameters
        ----------
        t : float
            Time, seconds.
        y : numpy.ndarray
            State, shape ``(n,)`` or a batch ``(B, n)``, in the layout of :attr:`layout` (log states as logs).
        Z : list of numpy.ndarray
            Delayed values, one array per entry of :attr:`lookups` (see :mod:`ecocc.dde.problem`).
        sat_lo, sat_hi : numpy.ndarray
            Boolean masks over the bounded components (the queues): which are held at 0 or at their buffer
            during the current step (for booking departures and losses); may be empty.

        Returns
        -------
        numpy.ndarray
            dy/dt, shape of ``y``: flow and link states per second (d ln x/dt for log states), queues and
            cumulative counters in packets/s, ``queue_area`` in packets.  Inactive flows have zero derivative.
        """
        m, a, ops, P = self.model, self.a, NUMPY_OPS, self.P
        nP = self.n_flows
        fs = self._vars(y, "flow:", m.flow_states)
        ls = self._vars(y, "link:", m.link_states)
        q = y[..., self.layout["queue"].sl]
        act = self.active(t)
        qn = q / self.C
        # sparse products written as matrix @ vector(s): they broadcast over a
        # leading batch axis and avoid building a transposed matrix per call
        qdelay = _spmv(self.Rt, qn)
        rate = m.flow_rate(ops, fs, qdelay, P, self.st) * act
        cross_now = self.cross(t)
        if self.has_fwd:
            z = Z[self.lk_index["fwd"]]
            fpair = self._split_flow_vars(z, a.pair_link.size)
            st_p = self.st_pair_flow
            act_p = self.active_pairs(t - self.fwd)
            qf = (np.add.reduceat(Z[self.lk_index["fwdq"]] / self.fwdq_C, self.fwdq_starts, axis=-1)
                  if self.load_rtt == "sent" else qdelay[..., a.pair_flow])
            r_pair = m.flow_rate(ops, fpair, qf, P, st_p) * act_p
            arrival = _spmv(self.link_from_pair, r_pair) + cross_now
        else:
            arrival = _spmv(self.R, rate) + cross_now
        # feedback from the links at the backward delays
        zfb = Z[self.lk_index["fb"]]
        npair = a.pair_link.size
        ls_pair = {}
        for i, (v, lg) in enumerate(zip(m.link_states, m.link_log)):
            val = zfb[..., i * npair:(i + 1) * npair]
            ls_pair[v] = np.exp(val) if lg else val
        q_pair = zfb[..., len(m.link_states) * npair:]
        y_pair = None
        if m.signal_uses_arrival:
            z = Z[self.lk_index["arr"]]
            nk = self.arr_flows.size
            fk = self._split_flow_vars(z, nk)
            stk = self._sub_static(self.arr_flows)
            t_k = t - self.arr_delays
            act_k = (self.start_s[self.arr_flows] <= t_k) & (t_k < a.stop_s[self.arr_flows])
            # the queueing delay the delayed rates are read with (load_rtt): now, or at the sending time
            qk = (np.add.reduceat(Z[self.lk_index["arrq"]] / self.arrq_C, self.arrq_starts, axis=-1)
                  if self.load_rtt == "sent" else qdelay[..., self.arr_flows])
            if m.separate_load:
                contrib = m.flow_load(ops, fk, qk, P, stk) * act_k
            else:
                contrib = m.flow_rate(ops, fk, qk, P, stk) * act_k
            cross_pair = self.cross(t - self.bwd)[..., np.arange(npair), a.pair_link]
            y_pair = _spmv(self.arr_sum_T, contrib) + cross_pair
        lst_pair = self.lst_pair
        if m.pair_extras:
            lst_pair = dict(lst_pair)
            if "n_active" in m.pair_extras:
                lst_pair["n_active"] = _spmv(self.arr_sum_T, act_k.astype(float))
            if "rate" in m.pair_extras:
                lst_pair["rate"] = rate[..., a.pair_flow]
            if "self_seen" in m.pair_extras:
                # the receiving flow's own traffic is in the link's load at the feedback's delay: its activity at
                # t - d_b(l, p) - d_f(l, p), the arrival entry (pair, k = p) of n_active (the same operations)
                lst_pair["self_seen"] = self.active_pairs(t - (self.bwd + self.fwd)).astype(float)
        if not self._log_mode:
            self._check_log_range(y)
        laws = self.log_laws if self._log_mode else None
        if laws is not None and laws.signal_in_log:
            # log of the signal from the stored (log) link states, aggregated in log space (min/max are
            # monotone): fb is passed as its logarithm phi, never exponentiated
            u_pair = [zfb[..., i * npair:(i + 1) * npair] for i in range(len(m.link_states))]
            sig = laws.signal_log(u_pair, q_pair, y_pair, self.C_pair, lst_pair, P)
        else:
            sig = m.link_signal(ops, ls_pair, q_pair, y_pair, self.C_pair, P, lst_pair)
        sig = np.broadcast_to(sig, np.broadcast_shapes(np.shape(sig), (npair,)))
        fb = _REDUCE[m.path_aggregate].reduceat(sig, self.flow_pair_start, axis=-1)
        own = None
        if m.needs_own_delayed:
            z = Z[self.lk_index["own"]]
            fo = self._split_flow_vars(z, nP)
            act_o = self.active(t - self.rtt_s)
            own = m.own_load(ops, fo, P, self.st) * act_o
        out = np.zeros(np.shape(y))
        if laws is not None:
            # log states in log space: d(ln x)/dt from the derived law, no exp(u)/exp(u), no log(exp(u))
            fl = [y[..., self.layout["flow:" + v].sl] for v in m.flow_states]
            dflow = dict(zip(m.flow_states, laws.flow(fl, fb, own, qdelay, self.st, P)))
            ll = [y[..., self.layout["link:" + v].sl] for v in m.link_states]
            dlink = dict(zip(m.link_states, laws.link(ll, q, arrival, self.C, self.lst, P)))
            with np.errstate(invalid="ignore"):  # 0 * inf of an inactive flow is discarded by the where
                for v in m.flow_states:
                    out[..., self.layout["flow:" + v].sl] = np.where(act, dflow[v], 0.0)
            for v in m.link_states:
                out[..., self.layout["link:" + v].sl] = dlink[v]
        else:
            dflow = m.flow_law(ops, fs, fb, own, qdelay, P, self.st)
            dlink = m.link_law(ops, ls, q, arrival, self.C, P, self.lst)
            for v in m.flow_states:
                b = self.layout["flow:" + v]
                d = dflow[v] / fs[v] if b.log else dflow[v]
                out[..., b.sl] = np.where(act, d, 0.0)
            for v in m.link_states:
                b = self.layout["link:" + v]
                d = dlink[v] / ls[v] if b.log else dlink[v]
                out[..., b.sl] = d
        pdrop = m.link_drop_fraction(ops, ls, q, arrival, self.C, P, self.lst)
        early = 0.0 if pdrop is None else arrival * pdrop  # AQM drops (packets/s), never queued
        dq = arrival - early - self.C
        out[..., self.layout["queue"].sl] = dq
        nb = self.n_links
        if np.size(sat_hi):
            hi = sat_hi[..., :nb]
            lo = sat_lo[..., :nb]
        else:
            hi = lo = np.zeros(nb, dtype=bool)
        out[..., self.layout["lost"].sl] = np.where(hi, np.maximum(dq, 0.0), 0.0) + early
        out[..., self.layout["arrived"].sl] = arrival
        out[..., self.layout["departed"].sl] = np.where(lo, np.minimum(arrival - early, self.C), self.C)
        out[..., self.layout["sent"].sl] = rate
        out[..., self.layout["queue_area"].sl] = q
        return out

    def active_pairs(self, t_pair):
        """Tell which (link, flow) pairs belong to a sending flow at their own times.

        Parameters
        ----------
        t_pair : numpy.ndarray
            One time per pair (e.g. ``t`` minus the pair's forward delay), seconds, shape ``(..., n_pairs)``.

        Returns
        -------
        numpy.ndarray
            Boolean mask, ``start_s <= t_pair < stop_s`` of each pair's flow (:attr:`start_s`: the reading of
            the past).
        """
        a = self.a
        return (self.start_s[a.pair_flow] <= t_pair) & (t_pair < a.stop_s[a.pair_flow])

    # -- breakpoints of the activity ------------------------------------------
    def startup_jumps(self, t_end=None):
        """The times at which the right-hand side jumps because the flows starting at ``t0 = 0`` with no traffic
        before (``past="silent"``) switch on in a delayed read: ``t0 + d`` for every delay ``d`` their activity
        is read at (the load a link signals on, a flow's own load one round trip ago, the forward path).

        Every delayed read of a flow's state is multiplied by the flow's activity at the delayed time, so these
        level-1 images of ``t0`` are jumps, not the kinks its other images are:
        :meth:`ecocc.dde.problem.DDEProblem.breakpoints` keeps them whatever its budget (``jump_images``).
        None under ``past="steady"``.  The images of later starts and stops stay within the budget (each moves
        one flow's share of a load, and their number is the flows times their reads).

        Parameters
        ----------
        t_end : float or None, optional
            Keep the times in ``(0, t_end]`` (None: :attr:`t_end`).

        Returns
        -------
        numpy.ndarray
            Sorted distinct times, seconds (empty for a batch).
        """
        a = self.a
        t_end = self.t_end if t_end is None else float(t_end)
        st = np.asarray(self.start_s, dtype=float)
        if self.past != "silent" or st.ndim != 1 or np.ndim(self.rtt_s) != 1 or np.ndim(self.bwd) != 1:
            return np.zeros(0)
        silent = st <= 0.0
        if not np.any(silent):
            return np.zeros(0)
        parts = [np.zeros(0)]
        if "arr" in self.lk_index:  # the delays of the arrival entries of silent flows (without building them)
            parts.append(np.asarray(self._arr_delay_set(silent), dtype=float))
        if "own" in self.lk_index:
            parts.append(np.asarray(self.rtt_s, dtype=float)[silent])
        if "fwd" in self.lk_index:
            parts.append(np.asarray(self.fwd, dtype=float)[silent[a.pair_flow]])
        d = sorted_unique(np.concatenate(parts))
        return d[(d > 0.0) & (d <= t_end)]

    # -- initial state and problem -----------------------------------------
    def initial_state(self):
        """Build the state at ``t = 0`` from the model's initial flow and link states.

        Returns
        -------
        numpy.ndarray
            Shape ``(n,)``: flow and link states (logs where the model keeps logs), queues and counters zero.
        """
        m = self.model
        y = np.zeros(self.n)
        f0 = m.initial_flow_state(self.net, self.P)
        for v in m.flow_states:
            b = self.layout["flow:" + v]
            val = np.asarray(f0[v], dtype=float)
            y[b.sl] = np.log(val) if b.log else val
        l0 = m.initial_link_state(self.net, self.P)
        for v in m.link_states:
            b = self.layout["link:" + v]
            val = np.asarray(l0[v], dtype=float)
            y[b.sl] = np.log(val) if b.log else val
        return y

    def problem(self, y0=None, breakpoint_depth=1) -> DDEProblem:
        """Build the delay-differential problem for the solvers.

        Queues are bounded to ``[0, buffer_pkts]`` (with :meth:`project` booking the clipped volume); flow
        starts and stops and cross-traffic switches are kinks.

        Parameters
        ----------
        y0 : numpy.ndarray or None, optional
            Initial state, shape ``(n,)``; None uses :meth:`initial_state`.
        breakpoint_depth : int, optional
            How many delays the kinks are propagated through (:meth:`DDEProblem.breakpoints`).

        Returns
        -------
        DDEProblem
            The problem from ``t0 = 0`` s, with state-dependent delays when ``rtt_includes_queueing``.
        """
        a = self.a
        qb = self.layout["queue"]
        kinks = np.concatenate([a.start_s, a.stop_s[np.isfinite(a.stop_s)], self.cross_kinks])
        kinks = kinks[(kinks > 0) & (kinks <= self.t_end)]
        return DDEProblem(
            n=self.n, rhs=self.rhs, y0=self.initial_state() if y0 is None else y0, t0=0.0,
            lookups=self.lookups, bounded=np.arange(qb.start, qb.start + qb.size),
            lower=np.zeros(qb.size), upper=a.buffer_pkts, kinks=kinks, breakpoint_depth=breakpoint_depth,
            nudge_time=True, project=self.project,
            state_delays=self.queueing_delays if self.rtt_includes_queueing else None,
            state_delay_max_s=self.queueing_delay_bound_s() if self.rtt_includes_queueing else 0.0,
            log_components=np.concatenate([np.arange(self.n)[b] for b in self._log_blocks] + [np.zeros(0, int)]),
            delayed_read=self.delayed_read(), jump_images=self.startup_jumps(self.t_end),
            hold_images=self.hold_images(), empty_images=self.empty_images(), **self.drop_levels(),
        )

    def hold_images(self):
        """Where a change of a queue's hold at its upper bound reaches the flows: ``(pair_link, bwd, departed)``,
        one entry per (link, flow) pair, the link and the pair's backward delay (seconds), in the order of the
        compiled kernels' ``D[3]``, ``D[4]`` (:data:`ecocc.dde.integrator.HOLD_IMAGES`), and each link's departures
        component (a queue released a hair below its buffer goes back onto it, the volume taken from there), for
        :attr:`ecocc.dde.problem.DDEProblem.hold_images`.

        A loss signal jumps when its link's buffer fills or stops being full (drop-tail's ``max(0, 1 - C/y)``;
        RED held at ``max_th``), and each pair reads it one backward delay later: both solvers end a step there, and
        at the images of the queue's crossings of its drop-law levels (:meth:`drop_levels`: RED's ``min_th``, where
        the drop fraction kinks).  Mixed networks (:class:`ecocc.mixed.MixedSystem`) use the same entries.  With
        ``rtt_includes_queueing`` the images are where the propagation delay alone puts them (the queueing delay
        moves the true ones later: a step ends early, nothing is straddled that was not before).  None for a
        batch of parameter sets (``ecocc.batch.BatchParams``: one delay per pair and member).

        Returns
        -------
        tuple of numpy.ndarray or None
            ``(link index per pair (int64), backward delay per pair (s), departures component per link (int64))``,
            or None.
        """
        if np.ndim(self.bwd) != 1:
            return None
        dep = self.layout["departed"].sl
        return (np.asarray(self.a.pair_link, dtype=np.int64), np.asarray(self.bwd, dtype=float),
                np.arange(dep.start, dep.stop, dtype=np.int64))

    def empty_images(self):
        """Where a queue's emptying reaches the flows as a kink one backward delay later, for
        :attr:`ecocc.dde.problem.DDEProblem.empty_images`: where the model's signal reads the delayed queue linearly
        (:attr:`ecocc.dde.codegen.Generated.empty_images`: PE-TCP's ``(y + q/T)/C``, FAST's queueing delay), the
        queue's derivative jumps from ``y - C`` to 0 as it empties, and so does the signal's; both solvers then end
        steps at the images, as at a full buffer's (:meth:`hold_images`), where the kink matters at the step size.
        The weight per link is ``|d flow law / d signal| |d signal / d q|`` (PE-TCP: ``b / (T C)`` per packet and
        second, :func:`ecocc.dde.codegen._empty_weight`), ``inf`` where the laws do not fix it (every image kept).

        Returns
        -------
        numpy.ndarray or None
            Shape ``(n_links,)``; None where the signal ignores an empty queue, or where that cannot be told (no
            generated kernel, a batch of parameter sets).
        """
        gen = self._generated()
        if gen is None or not gen.empty_images or self.hold_images() is None:
            return None
        return gen.empty_weight_values(self)

    def queue_gain(self):
        """The slope of each link's signal in its delayed queue (per packet, the signal's units), where the signal
        reads the queue linearly and the slope is fixed by the parameters, link fields and capacity (PE-TCP:
        ``1/(T C)``); None otherwise.  It sets the queues' default tolerance (:meth:`default_atol`).

        Returns
        -------
        numpy.ndarray or None
            Shape ``(n_links,)``.
        """
        gen = self._generated()
        return None if gen is None else gen.queue_gain_values(self)

    @staticmethod
    def _no_levels():
        """:meth:`drop_levels` of a system without such levels (empty arrays)."""
        return dict(level_comps=np.zeros(0, dtype=np.int64), level_values=np.zeros(0))

    def drop_levels(self):
        """The queue levels where each link's AQM drop fraction of the current queue has a kink or a jump (RED's
        ``min_th`` and ``max_th``), as :class:`ecocc.dde.problem.DDEProblem`'s ``level_comps`` and
        ``level_values``: found in the drop law as the generated kernels find them
        (:meth:`ecocc.dde.codegen.Generated.drop_level_values`), so that both solvers end a step at a located
        crossing of one.  Empty where that cannot be told (no generated kernel for the model, a batch of
        parameter sets: ``ecocc.batch.BatchParams``): the solvers then straddle such a level as before.

        Returns
        -------
        dict
            ``{"level_comps": int array, "level_values": float array (packets)}``, empty arrays without levels
            (or where they cannot be told).
        """
        gen = self._generated()
        if gen is None:
            return self._no_levels()
        vals = gen.drop_level_values(self)
        if not vals.size:
            return self._no_levels()
        qb = self.layout["queue"]
        comps = np.repeat(np.arange(qb.start, qb.start + qb.size), vals.shape[1])
        return dict(level_comps=comps, level_values=vals.ravel())

    def delayed_read(self):
        """The state components whose delayed values the model's laws read (numpy.ndarray of int), or None when
        that cannot be told (then every component a lookup gathers counts as read).

        The feedback lookup gathers every link state and the queue of each (link, flow) pair, the forward, own
        and arrival lookups every flow state; a model's signal may ignore the queue (AECP, Symbiosis) or a link
        state.  The adaptive solvers error-check at mid-step only the Hermite history of the components read
        (:meth:`ecocc.dde.problem.DDEProblem.delayed_checked`): the others' history is never interpolated into
        the laws, and checking it made AECP at N = 1,000 reject 4,102 of its 4,106 rejected steps on queues that
        no law reads through a delay (docs/notes/scale.md).  The same set as the components the generated
        kernel stores in its history (:meth:`ecocc.dde.codegen.Generated.hsrc`, from the laws' free symbols), so
        the NumPy solver and the compiled kernel take the same steps.

        Returns
        -------
        numpy.ndarray or None
            Component indices (int64), or None (no generated kernel, or a batch of parameter sets: every
            gathered component counts as read)."""
        gen = self._generated()
        return None if gen is None else np.asarray(gen.hsrc(self.n_flows, self.n_links), dtype=np.int64)

    def _generated(self):
        """The generated kernel's description for this system (:func:`ecocc.dde.codegen.generate`), or None: no
        generated kernel for the model, or a batch of parameter sets (``ecocc.batch.BatchParams``)."""
        import dataclasses

        from .dde import codegen
        if codegen.supported(self) is not None or not dataclasses.is_dataclass(self.P):
            return None
        return codegen.generate(self)

    def queueing_delays(self, t, y):
        """Return the extra delays of every lookup: the receiving flow's queueing delay ``Q_p(t)``.

        For :attr:`DDEProblem.state_delays` when ``rtt_includes_queueing`` is set.

        Parameters
        ----------
        t : float
            Time, seconds (unused: ``Q_p`` depends on the state only).
        y : numpy.ndarray
            State, shape ``(n,)`` or ``(B, n)``.

        Returns
        -------
        list of numpy.ndarray or None
            One entry per lookup: the extra delay of each entry in seconds, ``sum_{l in p} q_l / C_l`` of the
            flow ``p`` that reads it; ``None`` for the forward lookup (forward delays stay the propagation delays).
        """
        a, m = self.a, self.model
        Q = _spmv(self.Rt, y[..., self.layout["queue"].sl] / self.C)  # per flow, seconds
        out = [None] * len(self.lookups)
        nl = len(m.link_states) + 1
        nf = len(m.flow_states)
        out[self.lk_index["fb"]] = np.tile(Q[..., a.pair_flow], nl)
        if "own" in self.lk_index:
            out[self.lk_index["own"]] = np.tile(Q, nf)
        if "arr" in self.lk_index:
            out[self.lk_index["arr"]] = np.tile(Q[..., a.pair_flow[self.arr_rows]], nf)
        if "arrq" in self.lk_index:  # load_rtt="sent": the path queues read at the arrival entries' delays
            out[self.lk_index["arrq"]] = Q[..., a.pair_flow[self.arr_rows[self.arrq_rows]]]
        return out

    def set_queue_bound(self, bound_pkts):
        """Hold the queues at ``bound_pkts`` instead of the model's own bound (the buffer, or RED's max_th where
        lower): for a batch or a map whose members differ in that bound, all run with the largest (one bound per
        link in the solvers); a member with a lower one lets its queue pass it, as before the bound existed.

        Parameters
        ----------
        bound_pkts : array_like
            Packets per link (> 0; ``inf``: unbounded).  A map's systems carry its base parameters, whose own
            bound may exceed the points' largest, so no lower limit is checked.

        Raises
        ------
        InputError
            If ``bound_pkts`` is not a positive number (or ``inf``) or one per link.
        """
        from .errors import InputError
        shape = self.a.buffer_pkts.shape
        try:
            b = np.array(np.broadcast_to(np.asarray(bound_pkts, dtype=float), shape))
        except (TypeError, ValueError):
            raise InputError("bound_pkts", bound_pkts, f"a number or {shape[-1]} numbers > 0 (packets)") from None
        if not np.all(b > 0):  # NaN fails too
            raise InputError("bound_pkts", bound_pkts, "numbers > 0 (packets) or inf")
        self.a = dataclasses.replace(self.a, buffer_pkts=b)
        self.lst = self.model.link_static_at(self.net, self.P, self.a.buffer_pkts)
        self.lst_pair = {k: np.asarray(v)[..., self.a.pair_link] for k, v in self.lst.items()}

    def queueing_delay_bound_s(self):
        """Return the largest queueing delay any flow can see: ``max_p sum_{l in p} buffer_l / C_l``.

        Returns
        -------
        float
            Seconds; ``inf`` when a route has an unbounded buffer.
        """
        with np.errstate(invalid="ignore"):
            per_flow = _spmv(self.Rt, self.a.buffer_pkts / self.C)
        return float(np.max(per_flow)) if np.size(per_flow) else 0.0

    def project(self, y):
        """Clip queues to ``[0, buffer]`` and book the clipped volume.

        Above the buffer the volume is lost (``lost`` += excess), below zero the departures were
        over-counted (``departed`` -= deficit).  Keeps arrived = departed + lost + queue.

        Parameters
        ----------
        y : numpy.ndarray
            Raw state, shape ``(..., n)``.

        Returns
        -------
        numpy.ndarray
            The projected state (a copy).
        """
        y = np.array(y, dtype=float, copy=True)
        qs, ls, ds = self.layout["queue"].sl, self.layout["lost"].sl, self.layout["departed"].sl
        q = y[..., qs]
        over = np.maximum(q - self.a.buffer_pkts, 0.0)
        under = np.maximum(-q, 0.0)
        y[..., ls] += over
        y[..., ds] -= under
        y[..., qs] = np.clip(q, 0.0, self.a.buffer_pkts)
        return y

    def default_atol(self, queue_atol_pkts=None, rtol=None):
        """Return absolute tolerances per state component.

        Log flow/link states 1e-8 (1e-8 relative of the rate), other flow/link states 1e-6 (in their own
        units), queues ``queue_atol_pkts``, cumulative counters 1e-3 packets (``queue_area`` 1e-3 packet-seconds).

        The queues' default is 1e-4 packets, and where the signal reads the delayed queue linearly with a fixed
        slope ``g`` (:meth:`queue_gain`; PE-TCP's ``(y + q/T)/C``: ``g = 1/(T C)``) and ``rtol`` is given, at most
        ``rtol / g``: a queue error ``e`` moves such a signal by ``g e``, and the rate law integrates that (PE-TCP's
        ``x'/x = b (1 - rho)`` over its time constant ``1/b``: a relative rate error ``g e``), so the queue's
        tolerance keeps it within the rates' own ``rtol``.  PE-TCP at ``C`` = 15,000 packets/s, ``T`` = 0.01 s,
        rtol 1e-7: 1.5e-5 packets (docs/notes/emptyimages.md: with 1e-4 the queue's tolerance decided its error).

        Parameters
        ----------
        queue_atol_pkts : float, optional
            Absolute tolerance of the queues, packets; None: the default above.
        rtol : float, optional
            The run's relative tolerance, for the default above; None: 1e-4 packets for every model.

        Returns
        -------
        numpy.ndarray
            Shape ``(n,)``, for the solvers' ``atol``.
        """
        atol = np.full(self.n, 1e-3)
        for name, b in self.layout.items():
            if name.startswith(("flow:", "link:")):
                atol[b.sl] = 1e-8 if b.log else 1e-6
        if queue_atol_pkts is None:
            queue_atol_pkts = 1e-4
            g = self.queue_gain() if rtol is not None else None
            if g is not None:
                with np.errstate(divide="ignore"):
                    queue_atol_pkts = np.minimum(1e-4, rtol / g)
        atol[self.layout["queue"].sl] = queue_atol_pkts
        return atol
