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
import tomllib
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

    def run(self, progress=False, **overrides):
        """Simulate the scenario; ``overrides`` change model parameters (``proto__field`` on mixed networks)."""
        from ..simulate import simulate
        params = dict(self.params)
        params.update(overrides)
        return simulate(self.network, self.model, t_end_s=self.duration_s, output_dt_s=self.output_dt_s,
                        summary_window_s=self.summary_window_s, name=self.name, progress=progress,
                        protocols=self.protocols or None, **params)


def shipped() -> list[str]:
    """Names of the scenarios shipped with ecocc."""
    folder = resources.files(__name__).joinpath(DATA)
    return sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".toml"))


def load(name_or_path) -> Scenario:
    """Load a scenario by shipped name or from a TOML file path."""
    p = Path(str(name_or_path))
    if p.suffix == ".toml" or p.exists():
        if not p.exists():
            raise InputError("scenario", str(name_or_path), "an existing .toml file or a shipped scenario name "
                             f"({', '.join(shipped())})")
        text = p.read_text()
        origin = str(p)
    else:
        if str(name_or_path) not in shipped():
            raise InputError("scenario", str(name_or_path), f"a .toml file or one of {shipped()}")
        text = resources.files(__name__).joinpath(DATA, f"{name_or_path}.toml").read_text()
        origin = f"shipped:{name_or_path}"
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"scenario file {origin}", "malformed TOML", f"valid TOML ({exc})") from None
    return from_dict(data, origin=origin)


def _one_of(d, where, a, b, conv_b=None, required=True, default=None):
    has_a, has_b = a in d, b in d
    check(not (has_a and has_b), f"{where}", f"both {a} and {b}", f"exactly one of {a}, {b}")
    if has_a:
        return d[a]
    if has_b:
        return conv_b(d[b]) if conv_b else d[b]
    check(not required, f"{where}.{a}", None, f"one of {a}, {b} is required")
    return default


def _known(d, where, keys):
    for k in d:
        check(k in keys, f"{where}.{k}", d[k], f"a known key ({', '.join(sorted(keys))})")


def from_dict(data: dict, origin: str = "<dict>") -> Scenario:
    check(isinstance(data, dict), origin, type(data).__name__, "a TOML table")
    _known(data, origin, {"scenario", "params", "links", "flows", "cross_traffic", "protocols", "reproduce"})
    rep = data.get("reproduce", {}) or {}
    check(isinstance(rep, dict), "[reproduce]", rep, "a table (see ecocc.reproduce)")
    sc = data.get("scenario")
    check(isinstance(sc, dict), f"{origin}: [scenario]", sc, "a [scenario] table")
    _known(sc, "[scenario]", {"name", "description", "source", "model", "duration_s", "summary_window_s",
                              "output_dt_s", "packet_bytes", "delay_split", "notes"})
    check("name" in sc, "[scenario].name", None, "required")
    protocols = _protocols_table(data.get("protocols", {}))
    raw_flows = data.get("flows", [])
    every_flow_named = isinstance(raw_flows, list) and raw_flows and all(
        isinstance(fl, dict) and "protocol" in fl for fl in raw_flows)
    check("model" in sc or every_flow_named, "[scenario].model", None,
          "required unless every [[flows]] table names its protocol")
    check("duration_s" in sc, "[scenario].duration_s", None, "required")
    model = get_model(sc["model"] if "model" in sc else _first_model(raw_flows, protocols))
    pb = check_finite("[scenario].packet_bytes", sc.get("packet_bytes", 1000), positive=True)
    params = data.get("params", {}) or {}
    check(isinstance(params, dict), "[params]", params, "a table of model parameters")
    model.make_params(**params)  # validate now: names and values
    mbps = lambda v: mbps_to_pps(check_finite("rate_mbps", v, nonneg=True), pb)  # noqa: E731
    links = []
    raw_links = data.get("links", [])
    check(isinstance(raw_links, list) and raw_links, "[[links]]", raw_links, "at least one [[links]] table")
    for i, lk in enumerate(raw_links):
        where = f"links[{i}]"
        check(isinstance(lk, dict), where, lk, "a table")
        _known(lk, where, {"name", "capacity_pps", "capacity_mbps", "delay_s", "delay_ms", "buffer_pkts",
                           "target_queue_pkts"})
        check("name" in lk, f"{where}.name", None, "required")
        cap = _one_of(lk, f"{where}", "capacity_pps", "capacity_mbps", mbps)
        delay = _one_of(lk, where, "delay_s", "delay_ms", lambda v: float(v) * 1e-3, required=False, default=0.0)
        buf = lk.get("buffer_pkts", math.inf)
        if isinstance(buf, str):
            check(buf in ("inf", "infinite"), f"{where}.buffer_pkts", buf, "a number or \"inf\"")
            buf = math.inf
        links.append(Link(str(lk["name"]), cap, delay_s=delay, buffer_pkts=buf,
                          target_queue_pkts=lk.get("target_queue_pkts")))
    flows = []
    raw_flows = data.get("flows", [])
    check(isinstance(raw_flows, list) and raw_flows, "[[flows]]", raw_flows, "at least one [[flows]] table")
    for i, fl in enumerate(raw_flows):
        where = f"flows[{i}]"
        check(isinstance(fl, dict), where, fl, "a table")
        _known(fl, where, {"name", "route", "rtt_s", "rtt_ms", "start_s", "stop_s", "initial_rate_pps",
                           "initial_rate_mbps", "count", "start_every_s", "forward_delays_s", "physical_bw_pps",
                           "physical_bw_mbps", "protocol"})
        proto = fl.get("protocol")
        if proto is not None:
            from ..models import REGISTRY
            check(isinstance(proto, str) and (proto in protocols or proto.lower() in REGISTRY),
                  f"{where}.protocol", proto,
                  f"a model in {sorted(REGISTRY)} or a [protocols.NAME] table of this file {sorted(protocols)}")
        check("name" in fl, f"{where}.name", None, "required")
        check("route" in fl, f"{where}.route", None, "required (a list of link names)")
        rtt = _one_of(fl, where, "rtt_s", "rtt_ms", lambda v: float(v) * 1e-3)
        x0 = _one_of(fl, where, "initial_rate_pps", "initial_rate_mbps", mbps, required=False, default=10.0)
        kphys = _one_of(fl, where, "physical_bw_pps", "physical_bw_mbps", mbps, required=False, default=None)
        stop = fl.get("stop_s", math.inf)
        stop = math.inf if stop in ("inf", "infinite") else stop
        count = fl.get("count", 1)
        check(isinstance(count, int) and count >= 1, f"{where}.count", count, "an integer >= 1")
        every = check_finite(f"{where}.start_every_s", fl.get("start_every_s", 0.0), nonneg=True)
        start = check_finite(f"{where}.start_s", fl.get("start_s", 0.0), nonneg=True)
        for k in range(count):
            nm = str(fl["name"]) if count == 1 else f"{fl['name']}_{k + 1}"
            fwd = fl.get("forward_delays_s")
            flows.append(Flow(nm, tuple(fl["route"]) if not isinstance(fl["route"], str) else (fl["route"],),
                              rtt, start_s=start + k * every, stop_s=stop, initial_rate_pps=x0,
                              forward_delays_s=tuple(fwd) if fwd is not None else None, physical_bw_pps=kphys,
                              protocol=proto))
    cts = []
    for i, ct in enumerate(data.get("cross_traffic", []) or []):
        where = f"cross_traffic[{i}]"
        _known(ct, where, {"link", "kind", "rate_pps", "rate_mbps", "schedule_pps", "schedule_mbps", "n_sources",
                           "mean_on_s", "mean_off_s", "realization", "seed", "bin_s"})
        check("link" in ct, f"{where}.link", None, "required")
        rate = _one_of(ct, where, "rate_pps", "rate_mbps", mbps, required=False, default=0.0)
        sched = ()
        if "schedule_pps" in ct or "schedule_mbps" in ct:
            raw = _one_of(ct, where, "schedule_pps", "schedule_mbps")
            conv = (lambda v: float(v)) if "schedule_pps" in ct else mbps
            try:
                sched = tuple((float(t), conv(r)) for t, r in raw)
            except (TypeError, ValueError):
                raise InputError(f"{where}.schedule", raw, "a list of [time_s, rate] pairs") from None
        kw = {k: ct[k] for k in ("n_sources", "mean_on_s", "mean_off_s", "realization", "seed", "bin_s") if k in ct}
        cts.append(CrossTraffic(str(ct["link"]), kind=ct.get("kind", "schedule" if sched else "constant"),
                                rate_pps=rate, schedule=sched, **kw))
    net = Network(tuple(links), tuple(flows), tuple(cts), delay_split=sc.get("delay_split", "feedback"),
                  packet_bytes=pb, name=str(sc["name"]))
    dur = check_finite("[scenario].duration_s", sc["duration_s"], positive=True)
    sw = sc.get("summary_window_s")
    if sw is not None:
        sw = check_finite("[scenario].summary_window_s", sw, positive=True)
        check(sw <= dur, "[scenario].summary_window_s", sw, f"at most duration_s = {dur}")
    od = sc.get("output_dt_s")
    if od is not None:
        od = check_finite("[scenario].output_dt_s", od, positive=True)
    from ..mixed import resolve_protocols
    members, _ = resolve_protocols(net, model, None, protocols)  # every protocol and its table, validated now
    if len(members) > 1 and params:
        # [params] belongs to [scenario].model; on a mixed network simulate wants it prefixed
        check(model.name in members, "[params]", sorted(params),
              f"empty: no flow runs [scenario].model = {model.name!r} (put parameters in [protocols.NAME])")
        params = {f"{model.name}__{k}": v for k, v in params.items()}
    return Scenario(name=str(sc["name"]), model=model.name, duration_s=dur, network=net, params=params,
                    description=sc.get("description", ""), source=sc.get("source", ""), summary_window_s=sw,
                    output_dt_s=od, notes=sc.get("notes", ""), protocols=protocols, reproduce=rep)


def _protocols_table(raw):
    """The ``[protocols.NAME]`` tables: ``{NAME: {"model": registry name, **parameters}}``, validated."""
    check(isinstance(raw, dict), "[protocols]", raw, "tables [protocols.NAME] with a model and its parameters")
    out = {}
    for nm, spec in raw.items():
        check(isinstance(spec, dict), f"[protocols.{nm}]", spec, "a table with a model and its parameters")
        check("model" in spec, f"[protocols.{nm}].model", None, "required: a registry name")
        m = get_model(spec["model"])
        fields = {k: v for k, v in spec.items() if k != "model"}
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
    return protocols[p]["model"] if p in protocols else p


DEFAULT = "aecp-dumbbell"
