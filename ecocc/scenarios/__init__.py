"""Scenario files (TOML): a network, a model with parameters, a run length.

Format (all keys optional unless marked)::

    [scenario]
    name = "aecp-dumbbell"          # required
    description = "..."
    source = "004 Section 6.1, Fig. 6"
    model = "aecp"                  # required: a registry name
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

    [[cross_traffic]]
    link = "bottleneck"
    kind = "schedule"               # constant | schedule | onoff
    schedule_mbps = [[100, 160], [200, 0]]   # or schedule_pps / rate_mbps / rate_pps
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
    #: SHA-256 (16 hex digits) of the scenario's contents (the parsed TOML, so comments and layout do not
    #: count): part of the key of every stored result computed from it (:mod:`ecocc.store`)
    digest: str = ""

    @property
    def file_stem(self) -> str:
        """``name`` made safe as a file name inside an output directory (:func:`ecocc.store.safe_name`)."""
        from ..store import safe_name
        return safe_name(self.name)

    def run(self, progress=False, **overrides):
        """Simulate the scenario; ``overrides`` change model parameters."""
        from ..simulate import simulate
        params = dict(self.params)
        params.update(overrides)
        return simulate(self.network, self.model, t_end_s=self.duration_s, output_dt_s=self.output_dt_s,
                        summary_window_s=self.summary_window_s, name=self.name, progress=progress, **params)


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
    _known(data, origin, {"scenario", "params", "links", "flows", "cross_traffic"})
    sc = data.get("scenario")
    check(isinstance(sc, dict), f"{origin}: [scenario]", sc, "a [scenario] table")
    _known(sc, "[scenario]", {"name", "description", "source", "model", "duration_s", "summary_window_s",
                              "output_dt_s", "packet_bytes", "delay_split", "notes"})
    for req in ("name", "model", "duration_s"):
        check(req in sc, f"[scenario].{req}", None, "required")
    model = get_model(sc["model"])
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
                           "physical_bw_mbps"})
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
                              forward_delays_s=tuple(fwd) if fwd is not None else None, physical_bw_pps=kphys))
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
    import hashlib

    from ..store import canonical
    return Scenario(name=str(sc["name"]), model=model.name, duration_s=dur, network=net, params=params,
                    description=sc.get("description", ""), source=sc.get("source", ""), summary_window_s=sw,
                    output_dt_s=od, notes=sc.get("notes", ""),
                    digest=hashlib.sha256(canonical(data).encode()).hexdigest()[:16])


DEFAULT = "aecp-dumbbell"
