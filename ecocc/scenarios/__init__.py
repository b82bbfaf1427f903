"""Scenario files (TOML): a network, a model with parameters, a run length.

Format (all keys optional unless marked)::

    [scenario]
    name = "aecp-dumbbell"          # required
    description = "..."
    source = "004 Section 6.1, Fig. 6"
    model = "aecp"                  # a registry name; required unless every flow names its protocol
    duration_s = 450                # required
    summary_window_s = 40           # final window the summary averages over
    output_dt_s = 0.1
    packet_bytes = 1000             # for Mbps at the edges
    delay_split = "feedback"        # or "propagation"
    load_rtt = "current"            # or "sent": a delayed W/(tau + Q) read at the sending time (simulate's load_rtt)
    past = "silent"                 # or "steady": the flows starting at 0 were sending before (ecocc.system)
    rtt_includes_queueing = false   # or true: each feedback delay plus the path's queueing delay (simulate's)

    [params]                        # model parameters (names of the Params class)
    alpha_per_s = 2.0

    [[links]]
    name = "bottleneck"             # required
    capacity_mbps = 500             # or capacity_pps (exactly one)
    delay_ms = 0                    # one-way propagation delay (or delay_s)
    buffer_pkts = inf               # or buffer_bdp = 1.0 (x capacity x rtt_ref_s)
    target_queue_pkts = 100

    [[flows]]
    name = "f1"                     # required
    route = ["bottleneck"]          # required
    rtt_ms = 50                     # or rtt_s (exactly one)
    start_s = 0
    stop_s = 400
    initial_rate_pps = 10           # or initial_rate_mbps
    count = 1                       # >1 expands to f1_1, f1_2, ...; start_every_s staggers them
    protocol = "reno"               # this flow's protocol (default: [scenario].model); mixed protocols

    [protocols.reno-droptail]       # optional: a protocol name flows may use, a model with its parameters
    model = "reno"                  # required: a registry name
    aqm = "droptail"                # parameters of that model

With flows of several protocols the run is the composite of :mod:`ecocc.mixed`; ``[params]`` then holds the
parameters of ``[scenario].model`` (the flows without ``protocol``) and each protocol's parameters go in its
``[protocols.NAME]`` table; ``--set reno__aqm=droptail`` overrides one protocol's parameter.

    [[cross_traffic]]
    link = "bottleneck"
    kind = "schedule"               # constant | schedule | onoff
    schedule_mbps = [[100, 160], [200, 0]]   # or schedule_pps / rate_mbps / rate_pps

    [reproduce]                     # optional: what `ecocc reproduce` runs and compares
    protocols = ["aecp", "xcp"]     # see ecocc.reproduce for the keys
"""
from __future__ import annotations

import math
import sys

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: the same parser from PyPI (a dependency there, see pyproject.toml)
    import tomli as tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from ..errors import InputError, check, check_finite
from ..models import get_model
from ..network import CrossTraffic, Flow, Link, Network
from ..units import mbps_to_pps

DATA = "data"


@dataclass(frozen=True)
class Scenario:
    name: str
    model: str
    duration_s: float
    network: Network
    params: dict = field(default_factory=dict)
    description: str = ""
    source: str = ""
    summary_window_s: float | None = None
    output_dt_s: float | None = None
    notes: str = ""
    protocols: dict = field(default_factory=dict)  # [protocols.NAME] tables: {NAME: {"model": ..., **params}}
    reproduce: dict = field(default_factory=dict)
    #: how a delayed Reno-type rate is read (:func:`ecocc.simulate.simulate`'s ``load_rtt``)
    load_rtt: str = "current"
    #: the reading of the past before t = 0 (:data:`ecocc.system.PASTS`): "silent" (default) or "steady"
    past: str = "silent"
    #: the feedback delays include the path's queueing delay (:func:`ecocc.simulate.simulate`'s
    #: ``rtt_includes_queueing``); False (default): the papers' constant delays
    rtt_includes_queueing: bool = False
    #: SHA-256 (16 hex digits) of the scenario's contents (the parsed TOML, so comments and layout do not
    #: count): part of the key of every stored result computed from it (:mod:`ecocc.store`)
    digest: str = ""

    @property
    def file_stem(self) -> str:
        """``name`` made safe as a file name inside an output directory (:func:`ecocc.store.safe_name`)."""
        from ..store import safe_name
        return safe_name(self.name)

    def run(self, progress=False, **overrides):
        """Simulate the scenario.

        Parameters
        ----------
        progress : bool
            Show a progress bar.
        **overrides
            Model parameters to change (``proto__field`` on mixed networks).

        Returns
        -------
        Trajectory
            The run on the scenario's network, to its ``duration_s`` (seconds, packets, packets/s).
        """
        from ..simulate import simulate
        params = dict(self.params)
        params.update(overrides)
        return simulate(self.network, self.model, t_end_s=self.duration_s, output_dt_s=self.output_dt_s,
                        summary_window_s=self.summary_window_s, name=self.name, progress=progress,
                        protocols=self.protocols or None, load_rtt=self.load_rtt, past=self.past,
                        rtt_includes_queueing=self.rtt_includes_queueing, **params)


def shipped() -> list[str]:
    """Names of the scenarios shipped with ecocc.

    Returns
    -------
    list of str
        The names :func:`load` accepts, sorted.
    """
    folder = resources.files(__name__).joinpath(DATA)
    return sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".toml"))


def load(name_or_path) -> Scenario:
    """Load a scenario by shipped name or from a TOML file path.

    Parameters
    ----------
    name_or_path : str or pathlib.Path
        A shipped name (:func:`shipped`) or a ``.toml`` file.

    Returns
    -------
    Scenario
        The validated scenario (network in packets/s and seconds).

    Raises
    ------
    InputError
        Every user mistake raises :class:`~ecocc.errors.InputError` naming the field (``flows[1].rtt_ms``), the
        value and what is allowed: a missing, unreadable or non-UTF-8 file, a directory, malformed TOML, wrong
        types, out-of-range values, conflicting keys, and runs too large to finish (:mod:`ecocc.limits`).
    """
    check(isinstance(name_or_path, (str, Path)), "scenario", name_or_path, "a shipped name or a .toml path")
    ref = str(name_or_path)
    check(ref.strip() != "", "scenario", ref, f"a .toml file or one of {shipped()}")
    p = Path(ref)
    if p.suffix == ".toml" or p.exists() or any(sep in ref for sep in ("/", "\\")):
        check(p.exists(), "scenario", ref, "an existing .toml file or a shipped scenario name "
              f"({', '.join(shipped())})")
        check(p.is_file(), "scenario", ref, "a .toml file (this path is a directory or not a regular file)")
        try:
            raw = p.read_bytes()
        except OSError as exc:
            raise InputError("scenario", ref, f"a readable file ({exc.strerror})") from None
        check(len(raw) <= MAX_FILE_BYTES, "scenario", ref, f"a file of at most {MAX_FILE_BYTES} bytes")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise InputError("scenario", ref, "a UTF-8 text file (TOML)") from None
        origin = str(p)
    else:
        if ref not in shipped():
            raise InputError("scenario", ref, f"a .toml file or one of {shipped()}")
        text = resources.files(__name__).joinpath(DATA, f"{ref}.toml").read_text()
        origin = f"shipped:{ref}"
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"scenario file {origin}", "malformed TOML", f"valid TOML ({exc})") from None
    return from_dict(data, origin=origin)


#: a scenario file larger than this is refused (the largest shipped one is 2 kB)
MAX_FILE_BYTES = 1_000_000
#: most packets/s a link may carry: 10^12 packets/s is 8 Pbit/s at 1000-byte packets, beyond any link; above it
#: the solver's tolerances (absolute, in packets) lose their meaning beside the rates
MAX_CAPACITY_PPS = 1e12
#: most flows one [[flows]] table may expand to (``count``), and most entries of a schedule: see ecocc.limits
MAX_COUNT = 10_000
MAX_SCHEDULE = 100_000

_ABSENT = object()


def _num(d, key, where, *, positive=False, nonneg=False, default=_ABSENT, upper=None, allow_inf=False):
    """``d[key]`` as a float, with the TOML path ``where.key`` in any error."""
    field = f"{where}.{key}"
    if key not in d:
        check(default is not _ABSENT, field, None, "required")
        return default
    v = d[key]
    if allow_inf and (v == "inf" or v == "infinite" or (isinstance(v, float) and v == math.inf)):
        return math.inf
    what = "a number" + (" > 0" if positive else " >= 0" if nonneg else "") + (" or \"inf\"" if allow_inf else "")
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise InputError(field, v, f"{what} (TOML {type(v).__name__} given)")
    v = float(v)
    check(math.isfinite(v), field, v, what)
    check(not positive or v > 0, field, v, what)
    check(not nonneg or v >= 0, field, v, what)
    if upper is not None:
        check(v <= upper[0], field, v, f"at most {upper[0]:g} ({upper[1]})")
    return v


def _text(d, key, where, default=_ABSENT, nonempty=True):
    field = f"{where}.{key}"
    if key not in d:
        check(default is not _ABSENT, field, None, "required")
        return default
    v = d[key]
    check(isinstance(v, str), field, v, "a string")
    check(not nonempty or v.strip() != "", field, v, "a non-empty string")
    return v


def _table(d, key, where, required=False):
    v = d.get(key, _ABSENT)
    if v is _ABSENT:
        check(not required, f"{where}[{key}]" if where else f"[{key}]", None, "required")
        return {}
    check(isinstance(v, dict), f"[{key}]" if not where else f"{where}.{key}", v, "a TOML table")
    return v


def _tables(d, key, required):
    v = d.get(key, _ABSENT)
    if v is _ABSENT:
        check(not required, f"[[{key}]]", None, f"at least one [[{key}]] table")
        return []
    check(isinstance(v, list) and all(isinstance(x, dict) for x in v), f"[[{key}]]", v,
          f"an array of tables ([[{key}]] sections)")
    check(not required or len(v) > 0, f"[[{key}]]", v, f"at least one [[{key}]] table")
    return v


def _one_of(d, where, a, b):
    """The single key present of ``a``, ``b`` (or None); both present is a conflict."""
    check(not (a in d and b in d), f"{where}.{a}", f"both {a} and {b}", f"exactly one of {a}, {b} (they conflict)")
    return a if a in d else b if b in d else None


def _known(d, where, keys):
    for k in d:
        check(k in keys, f"{where}.{k}", d[k], f"a known key ({', '.join(sorted(keys))})")


def from_dict(data: dict, origin: str = "<dict>") -> Scenario:
    """Build a :class:`Scenario` from parsed TOML.

    Parameters
    ----------
    data : dict
        The parsed file (the format in this module's docstring).
    origin : str
        Where it came from, for messages.

    Returns
    -------
    Scenario
        The validated scenario (network in packets/s and seconds).

    Raises
    ------
    InputError
        As :func:`load`, naming the TOML field.
    """
    check(isinstance(data, dict), origin, type(data).__name__, "a TOML table")
    _known(data, origin, {"scenario", "params", "links", "flows", "cross_traffic", "protocols", "reproduce"})
    rep = data.get("reproduce", {}) or {}
    check(isinstance(rep, dict), "[reproduce]", rep, "a table (see ecocc.reproduce)")
    sc = _table(data, "scenario", "", required=True)
    _known(sc, "[scenario]", {"name", "description", "source", "model", "duration_s", "summary_window_s",
                              "output_dt_s", "packet_bytes", "delay_split", "load_rtt", "notes", "past",
                              "rtt_includes_queueing"})
    name = _text(sc, "name", "[scenario]")
    protocols = _protocols_table(_table(data, "protocols", ""))
    raw_flows = data.get("flows", [])
    every_flow_named = isinstance(raw_flows, list) and raw_flows and all(
        isinstance(fl, dict) and "protocol" in fl for fl in raw_flows)
    if "model" in sc or not every_flow_named:
        if "model" not in sc:
            raise InputError("[scenario].model", None, "required unless every [[flows]] table names its protocol")
        model_name = _text(sc, "model", "[scenario]")
    else:
        model_name = _first_model(raw_flows, protocols)
    try:
        model = get_model(model_name)
    except InputError as exc:
        raise InputError("[scenario].model", model_name, exc.allowed) from None
    dur = _num(sc, "duration_s", "[scenario]", positive=True)
    pb = _num(sc, "packet_bytes", "[scenario]", positive=True, default=1000.0,
              upper=(1e6, "bytes per packet; jumbo frames are 9000"))
    for k in ("description", "source", "notes"):
        _text(sc, k, "[scenario]", default="", nonempty=False)
    split = _text(sc, "delay_split", "[scenario]", default="feedback")
    from ..system import check_load_rtt
    load_rtt = check_load_rtt(sc.get("load_rtt", "current"), "[scenario].load_rtt")
    sw = _num(sc, "summary_window_s", "[scenario]", positive=True, default=None)
    check(sw is None or sw <= dur, "[scenario].summary_window_s", sw, f"at most duration_s = {dur:g}")
    od = _num(sc, "output_dt_s", "[scenario]", positive=True, default=None)
    check(od is None or od <= dur, "[scenario].output_dt_s", od, f"at most duration_s = {dur:g}")
    from ..system import check_past
    past = check_past(sc.get("past", "silent"), "[scenario].past")
    riq = sc.get("rtt_includes_queueing", False)
    check(isinstance(riq, bool), "[scenario].rtt_includes_queueing", riq,
          "true (each feedback delay plus the path's queueing delay) or false (the constant delays: the default)")

    params = _table(data, "params", "")
    for k, v in params.items():  # types here (TOML names); ranges by the model's Params class
        if isinstance(v, bool) or isinstance(v, (list, dict)):
            raise InputError(f"[params].{k}", v, "a number (or, for a choice, a string)")
    try:
        P = model.make_params(**params)
    except InputError as exc:
        if exc.field.endswith(" parameter"):  # an unknown name: the value is the name
            raise InputError(f"[params].{exc.value}", params.get(exc.value), exc.allowed) from None
        f = exc.field.split(".", 1)[1] if "." in exc.field else exc.field
        raise InputError(f"[params].{f}" if f in params else f"[params] ({exc.field})", exc.value, exc.allowed) from None
    mbps = lambda v: mbps_to_pps(v, pb)  # noqa: E731
    cap_bound = (MAX_CAPACITY_PPS, "packets/s: 8 Pbit/s at 1000-byte packets; see scenarios.MAX_CAPACITY_PPS")

    links = []
    for i, lk in enumerate(_tables(data, "links", required=True)):
        where = f"links[{i}]"
        _known(lk, where, {"name", "capacity_pps", "capacity_mbps", "delay_s", "delay_ms", "buffer_pkts",
                           "target_queue_pkts"})
        lname = _text(lk, "name", where)
        ck = _one_of(lk, where, "capacity_pps", "capacity_mbps")
        check(ck is not None, f"{where}.capacity_pps", None, "required (capacity_pps or capacity_mbps)")
        if ck == "capacity_pps":
            cap = _num(lk, ck, where, positive=True, upper=cap_bound)
        else:
            cap = mbps(_num(lk, ck, where, positive=True, upper=(MAX_CAPACITY_PPS * pb * 8e-6, "Mbit/s (8 Pbit/s)")))
        dk = _one_of(lk, where, "delay_s", "delay_ms")
        delay = 0.0 if dk is None else _num(lk, dk, where, nonneg=True, upper=(
            3600.0 if dk == "delay_s" else 3.6e6, "one hour"))
        delay = delay * 1e-3 if dk == "delay_ms" else delay
        buf = _num(lk, "buffer_pkts", where, positive=True, default=math.inf, allow_inf=True)
        tq = _num(lk, "target_queue_pkts", where, nonneg=True, default=None)
        links.append(Link(lname, cap, delay_s=delay, buffer_pkts=buf, target_queue_pkts=tq))
    link_names = [lk.name for lk in links]
    dup = sorted({n for n in link_names if link_names.count(n) > 1})
    check(not dup, "[[links]].name", dup, "unique link names")

    # the solver steps at most the smallest delay: an RTT below duration / MAX_STEPS could not finish
    from ..limits import MAX_STEPS
    rtt_floor = dur / MAX_STEPS
    flows = []
    for i, fl in enumerate(_tables(data, "flows", required=True)):
        where = f"flows[{i}]"
        _known(fl, where, {"name", "route", "rtt_s", "rtt_ms", "start_s", "stop_s", "initial_rate_pps",
                           "initial_rate_mbps", "count", "start_every_s", "forward_delays_s", "physical_bw_pps",
                           "physical_bw_mbps", "protocol"})
        proto = fl.get("protocol")
        if proto is not None:
            from ..models import REGISTRY
            check(isinstance(proto, str) and (proto in protocols or proto.lower() in REGISTRY),
                  f"{where}.protocol", proto,
                  f"a model in {sorted(REGISTRY)} or a [protocols.NAME] table of this file {sorted(protocols)}")
        fname = _text(fl, "name", where)
        check("route" in fl, f"{where}.route", None, "required (a list of link names)")
        route = fl["route"]
        route = [route] if isinstance(route, str) else route
        check(isinstance(route, list) and len(route) > 0 and all(isinstance(r, str) and r for r in route),
              f"{where}.route", fl["route"], "a non-empty list of link names (strings)")
        for r in route:
            check(r in link_names, f"{where}.route", r, f"a link name of [[links]] ({', '.join(link_names)})")
        rk = _one_of(fl, where, "rtt_s", "rtt_ms")
        check(rk is not None, f"{where}.rtt_s", None, "required (rtt_s or rtt_ms)")
        unit = 1e-3 if rk == "rtt_ms" else 1.0
        rtt = _num(fl, rk, where, positive=True, upper=(3600.0 / unit, "one hour")) * unit
        check(rtt >= rtt_floor, f"{where}.{rk}", fl[rk],
              f"at least {rtt_floor / unit:.3g} ({MAX_STEPS:.0e} solver steps over duration_s = {dur:g} s, "
              "each at most the smallest delay: see ecocc.limits)")
        xk = _one_of(fl, where, "initial_rate_pps", "initial_rate_mbps")
        x0 = 10.0 if xk is None else _num(fl, xk, where, positive=True, upper=cap_bound if xk == "initial_rate_pps"
                                           else (MAX_CAPACITY_PPS * pb * 8e-6, "Mbit/s"))
        x0 = mbps(x0) if xk == "initial_rate_mbps" else x0
        kk = _one_of(fl, where, "physical_bw_pps", "physical_bw_mbps")
        kphys = None if kk is None else _num(fl, kk, where, positive=True)
        kphys = mbps(kphys) if kk == "physical_bw_mbps" else kphys
        start = _num(fl, "start_s", where, nonneg=True, default=0.0)
        stop = _num(fl, "stop_s", where, positive=True, default=math.inf, allow_inf=True)
        check(stop > start, f"{where}.stop_s", stop, f"a time after start_s = {start:g}")
        count = fl.get("count", 1)
        check(isinstance(count, int) and not isinstance(count, bool) and 1 <= count <= MAX_COUNT, f"{where}.count",
              count, f"an integer from 1 to {MAX_COUNT}")
        every = _num(fl, "start_every_s", where, nonneg=True, default=0.0)
        check(count > 1 or "start_every_s" not in fl or every == 0, f"{where}.start_every_s", every,
              "only with count > 1 (it staggers the copies)")
        fwd = fl.get("forward_delays_s")
        if fwd is not None:
            check(isinstance(fwd, list) and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in fwd),
                  f"{where}.forward_delays_s", fwd, "a list of numbers (seconds), one per link of the route")
            check(len(fwd) == len(route), f"{where}.forward_delays_s", fwd, f"one delay per link of the route ({len(route)})")
            check(all(math.isfinite(v) and 0 <= v <= rtt for v in fwd), f"{where}.forward_delays_s", fwd,
                  f"delays in [0, rtt = {rtt:g} s]")
        for k in range(count):
            nm = fname if count == 1 else f"{fname}_{k + 1}"
            flows.append(Flow(nm, tuple(route), rtt, start_s=start + k * every, stop_s=stop, initial_rate_pps=x0,
                              forward_delays_s=tuple(float(v) for v in fwd) if fwd is not None else None,
                              physical_bw_pps=kphys, protocol=proto))
    check(len(flows) <= MAX_COUNT, "[[flows]]", f"{len(flows)} flows", f"at most {MAX_COUNT} flows in all")
    names = [f.name for f in flows]
    dup = sorted({n for n in names if names.count(n) > 1})
    check(not dup, "[[flows]].name", dup, "unique flow names (count > 1 adds _1, _2, ...)")

    cts = []
    for i, ct in enumerate(_tables(data, "cross_traffic", required=False)):
        where = f"cross_traffic[{i}]"
        _known(ct, where, {"link", "kind", "rate_pps", "rate_mbps", "schedule_pps", "schedule_mbps", "n_sources",
                           "mean_on_s", "mean_off_s", "realization", "seed", "bin_s"})
        link = _text(ct, "link", where)
        check(link in link_names, f"{where}.link", link, f"a link name of [[links]] ({', '.join(link_names)})")
        rk = _one_of(ct, where, "rate_pps", "rate_mbps")
        sk = _one_of(ct, where, "schedule_pps", "schedule_mbps")
        kind = _text(ct, "kind", where, default="schedule" if sk else "constant")
        check(kind in ("constant", "schedule", "onoff"), f"{where}.kind", kind, "one of constant, schedule, onoff")
        # each kind takes its own keys: a key another kind reads would be silently ignored, so it is refused
        if kind == "schedule":
            check(sk is not None, f"{where}.schedule_pps", None, "required for kind = \"schedule\" (or schedule_mbps)")
            check(rk is None, f"{where}.{rk}", ct.get(rk), "absent for kind = \"schedule\" (the schedule gives the rates)")
        else:
            check(sk is None, f"{where}.{sk}", ct.get(sk), f"absent for kind = \"{kind}\" (use kind = \"schedule\")")
            check(rk is not None, f"{where}.rate_pps", None, f"required for kind = \"{kind}\" (or rate_mbps)")
        onoff_keys = ("n_sources", "mean_on_s", "mean_off_s", "realization", "seed", "bin_s")
        if kind != "onoff":
            for k in onoff_keys:
                check(k not in ct, f"{where}.{k}", ct.get(k), "only with kind = \"onoff\"")
        rate = 0.0
        if rk is not None:
            rate = _num(ct, rk, where, nonneg=True, upper=cap_bound if rk == "rate_pps" else
                        (MAX_CAPACITY_PPS * pb * 8e-6, "Mbit/s"))
            rate = mbps(rate) if rk == "rate_mbps" else rate
        sched = ()
        if sk is not None:
            raw = ct[sk]
            ok = (isinstance(raw, list) and 0 < len(raw) <= MAX_SCHEDULE and all(
                isinstance(e, list) and len(e) == 2 and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                                           and math.isfinite(v) for v in e) for e in raw))
            check(ok, f"{where}.{sk}", raw, f"a list of 1 to {MAX_SCHEDULE} [time_s, rate] pairs of finite numbers")
            conv = mbps if sk == "schedule_mbps" else float
            sched = tuple((float(t), conv(float(r))) for t, r in raw)
        kw = {}
        if kind == "onoff":
            n_src = ct.get("n_sources", 100)
            check(isinstance(n_src, int) and not isinstance(n_src, bool) and 1 <= n_src <= 1_000_000,
                  f"{where}.n_sources", n_src, "an integer from 1 to 1000000")
            kw["n_sources"] = n_src
            for k in ("mean_on_s", "mean_off_s", "bin_s"):
                if k in ct:
                    kw[k] = _num(ct, k, where, positive=True)
            if "realization" in ct:
                kw["realization"] = _text(ct, "realization", where)
            if "seed" in ct:
                seed = ct["seed"]
                check(isinstance(seed, int) and not isinstance(seed, bool) and seed >= 0, f"{where}.seed", seed,
                      "an integer >= 0")
                kw["seed"] = seed
            bins = dur / kw.get("bin_s", 0.1)
            check(bins <= 1e7, f"{where}.bin_s", kw.get("bin_s", 0.1),
                  f"a bin giving at most 1e7 bins over duration_s = {dur:g} s (memory)")
        cts.append(_located(where, lambda: CrossTraffic(link, kind=kind, rate_pps=rate, schedule=sched, **kw)))
    net = _located("[scenario]", lambda: Network(tuple(links), tuple(flows), tuple(cts), delay_split=split,
                                                 packet_bytes=pb, name=name))
    from ..mixed import resolve_protocols
    members, _ = resolve_protocols(net, model, None, protocols)  # every protocol and its table, validated now
    # the run as a whole (gains x duration, output samples x network size): ecocc.limits; on a mixed network
    # every protocol's laws with its parameters ([params] for [scenario].model, its table for the others)
    from ..limits import check_run_size
    try:
        check_run_size(net, model, P, dur, od)
        if len(members) > 1:
            for mm, pp in members.values():
                if mm.name != model.name:
                    check_run_size(net, mm, pp, dur, od)
    except InputError as exc:
        f = exc.field if exc.field.split(" ")[0] not in params else f"[params].{exc.field}"
        f = "[scenario].output_dt_s" if f == "output_dt_s" else f
        raise InputError(f, exc.value, exc.allowed) from None
    if len(members) > 1 and params:
        # [params] belongs to [scenario].model; on a mixed network simulate wants it prefixed
        check(model.name in members, "[params]", sorted(params),
              f"empty: no flow runs [scenario].model = {model.name!r} (put parameters in [protocols.NAME])")
        params = {f"{model.name}__{k}": v for k, v in params.items()}
    import hashlib

    from ..store import canonical
    return Scenario(name=name, model=model.name, duration_s=dur, network=net, params=params,
                    description=sc.get("description", ""), source=sc.get("source", ""), summary_window_s=sw,
                    output_dt_s=od, notes=sc.get("notes", ""), protocols=protocols, reproduce=rep, load_rtt=load_rtt,
                    past=past, rtt_includes_queueing=riq,
                    digest=hashlib.sha256(canonical(data).encode()).hexdigest()[:16])


def _located(where, build):
    """``build()``, with an InputError's field prefixed by the TOML location ``where``."""
    try:
        return build()
    except InputError as exc:
        raise InputError(f"{where}: {exc.field}", exc.value, exc.allowed) from None


def _protocols_table(raw):
    """The ``[protocols.NAME]`` tables: ``{NAME: {"model": registry name, **parameters}}``, validated."""
    check(isinstance(raw, dict), "[protocols]", raw, "tables [protocols.NAME] with a model and its parameters")
    out = {}
    for nm, spec in raw.items():
        check(isinstance(spec, dict), f"[protocols.{nm}]", spec, "a table with a model and its parameters")
        model_name = _text(spec, "model", f"[protocols.{nm}]")
        try:
            m = get_model(model_name)
        except InputError as exc:
            raise InputError(f"[protocols.{nm}].model", model_name, exc.allowed) from None
        fields = {k: v for k, v in spec.items() if k != "model"}
        for k, v in fields.items():  # types here (TOML names); ranges by the model's Params class
            if isinstance(v, bool) or isinstance(v, (list, dict)):
                raise InputError(f"[protocols.{nm}].{k}", v, "a number (or, for a choice, a string)")
        try:
            m.make_params(**fields)
        except InputError as e:
            raise InputError(f"[protocols.{nm}].{e.value if 'parameter' in str(e.field) else e.field}",
                             e.value, e.allowed) from None
        out[str(nm)] = dict(spec)
    return out


def _first_model(raw_flows, protocols):
    """The model of the first flow's protocol (``[scenario].model`` when every flow names one)."""
    p = raw_flows[0]["protocol"]
    check(isinstance(p, str), "flows[0].protocol", p, "a string: a model name or a [protocols.NAME] table")
    return protocols[p]["model"] if p in protocols else p


DEFAULT = "aecp-dumbbell"
