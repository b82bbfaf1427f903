"""Malformed inputs for the fuzz tests (tests/test_fuzz_inputs.py) and the big fuzz run
(benchmarks/fuzz_inputs.py): scenario files, CLI arguments and API calls, each malformed by construction
and paired with the name the error must mention.

Every case is ``(kind, label, payload, field)``: ``kind`` is ``"scenario"`` (payload: a dict written as a
TOML file), ``"toml"`` (payload: raw text), ``"cli"`` (payload: argv; ``{tmp}`` is replaced by a temporary
directory) or ``"api"`` (payload: a callable).
"""
from __future__ import annotations

import copy
import math

BASE = {
    "scenario": {"name": "fuzz", "model": "aecp", "duration_s": 2.0, "summary_window_s": 0.5, "output_dt_s": 0.01,
                 "packet_bytes": 1000},
    "params": {"alpha_per_s": 2.0, "beta_per_s": 1.0, "T_s": 2.0, "q0_pkts": 100.0},
    "links": [{"name": "a", "capacity_mbps": 100.0, "delay_ms": 1.0, "target_queue_pkts": 50.0},
              {"name": "b", "capacity_pps": 5000.0, "buffer_pkts": 1000.0}],
    "flows": [{"name": "f1", "route": ["a", "b"], "rtt_ms": 50.0, "start_s": 0.0, "stop_s": 10.0,
               "initial_rate_pps": 10.0},
              {"name": "f2", "route": ["b"], "rtt_s": 0.1, "count": 2, "start_every_s": 0.5}],
    "cross_traffic": [{"link": "a", "kind": "schedule", "schedule_mbps": [[0.5, 10.0], [1.0, 0.0]]},
                      {"link": "b", "kind": "constant", "rate_pps": 100.0}],
}

TYPE_BAD = [True, False, "abc", "", [50], [], {"x": 1}]  # wrong TOML types for a number
NAN, INF = float("nan"), float("inf")

# path -> (bad values beyond TYPE_BAD, field the error must name)
NUMBERS = {
    ("scenario", "duration_s"): [0, -1, NAN, INF, 1e12],
    ("scenario", "summary_window_s"): [0, -1, NAN, INF, 3.0],
    ("scenario", "output_dt_s"): [0, -1, NAN, INF, 1e-9],
    ("scenario", "packet_bytes"): [0, -1, NAN, INF, 1e9],
    ("params", "alpha_per_s"): [0, -1, NAN, INF, 1e9],
    ("params", "beta_per_s"): [0, -1, NAN, INF],
    ("params", "T_s"): [0, -1, NAN, INF],
    ("params", "q0_pkts"): [-1, NAN, INF],
    ("links", 0, "capacity_mbps"): [0, -1, NAN, INF, 1e300],
    ("links", 1, "capacity_pps"): [0, -1, NAN, INF, 1e300],
    ("links", 0, "delay_ms"): [-1, NAN, INF, 1e12],
    ("links", 0, "target_queue_pkts"): [-1, NAN, INF],
    ("links", 1, "buffer_pkts"): [0, -1, NAN, "infinity"],
    ("flows", 0, "rtt_ms"): [0, -1, NAN, INF, 1e-9, 1e-6],
    ("flows", 1, "rtt_s"): [0, -1, NAN, INF, 1e-12],
    ("flows", 0, "start_s"): [-1, NAN, INF, 10.0, 20.0],
    ("flows", 0, "stop_s"): [0, -1, NAN],
    ("flows", 0, "initial_rate_pps"): [0, -1, NAN, INF],
    ("flows", 1, "start_every_s"): [-1, NAN, INF],
    ("flows", 1, "count"): [0, -1, 1.5, 10 ** 9],
    ("cross_traffic", 1, "rate_pps"): [-1, NAN, INF],
}


def _get(d, path):
    for p in path[:-1]:
        d = d[p]
    return d


def _field(path):
    return path[-1] if isinstance(path[-1], str) else path[0]


def scenario_cases():
    """Malformed scenario dicts: ``(label, data, field)``."""
    out = []
    for path, extra in NUMBERS.items():
        bad = (TYPE_BAD if path[-1] != "buffer_pkts" else [v for v in TYPE_BAD if v != ""]) + extra
        for v in bad:
            d = copy.deepcopy(BASE)
            _get(d, path)[path[-1]] = v
            out.append((f"{'.'.join(map(str, path))} = {v!r}", d, _field(path)))
    # whole tables of the wrong type
    for key, vals in {"scenario": [3, "x", [1]], "params": [5, [1, 2], "x"], "links": [5, "x", {"name": "a"}, []],
                      "flows": [5, "x", {"name": "f"}, []], "cross_traffic": [5, "x", {"link": "a"}, [1]]}.items():
        for v in vals:
            d = copy.deepcopy(BASE)
            d[key] = v
            out.append((f"{key} = {v!r}", d, key))
    # strings, names, routes
    for path, vals in {("scenario", "name"): [5, "", True, ["x"]], ("scenario", "model"): [5, "nope", "", True],
                       ("scenario", "delay_split"): [5, "both"], ("links", 0, "name"): [5, "", True],
                       ("flows", 0, "name"): [5, "", False], ("flows", 0, "route"): [5, [], [1], ["nope"], "", [""]],
                       ("cross_traffic", 0, "link"): [5, "nope", ""], ("cross_traffic", 1, "kind"): [5, "burst"],
                       ("scenario", "description"): [5, [1]],
                       ("scenario", "load_rtt"): [5, "later", True], ("scenario", "past"): [5, "noisy", False],
                       ("scenario", "rtt_includes_queueing"): [1, "yes", "true", 0.0, [True]]}.items():
        for v in vals:
            d = copy.deepcopy(BASE)
            _get(d, path)[path[-1]] = v
            out.append((f"{'.'.join(map(str, path))} = {v!r}", d, _field(path) if path[-1] != "name" or path[0] == "scenario"
                        else "name"))
    # conflicting or missing keys
    conflicts = [
        (("links", 0), {"capacity_pps": 5.0}, "capacity"), (("flows", 0), {"rtt_s": 0.05}, "rtt"),
        (("flows", 0), {"initial_rate_mbps": 1.0}, "initial_rate"), (("links", 0), {"delay_s": 0.001}, "delay"),
        (("cross_traffic", 1), {"rate_mbps": 1.0}, "rate"), (("cross_traffic", 0), {"rate_pps": 10.0}, "rate_pps"),
        (("cross_traffic", 1), {"schedule_pps": [[0, 1]]}, "schedule_pps"),
        (("cross_traffic", 0), {"schedule_pps": [[0, 1]]}, "schedule"),
        (("cross_traffic", 1), {"n_sources": 5}, "n_sources"), (("cross_traffic", 1), {"seed": 1}, "seed"),
        (("flows", 0), {"start_every_s": 1.0}, "start_every_s"),
        (("flows", 0), {"forward_delays_s": [0.01]}, "forward_delays_s"),
        (("flows", 0), {"forward_delays_s": [0.01, 1.0]}, "forward_delays_s"),
        (("flows", 0), {"forward_delays_s": "x"}, "forward_delays_s"),
        (("flows", 0), {"colour": "red"}, "colour"), (("links", 0), {"speed": 1}, "speed"),
        (("scenario",), {"author": "me"}, "author"), (("params",), {"gamma": 1.0}, "gamma"),
        (("cross_traffic", 0), {"kind": "constant"}, "schedule_mbps"),
        (("cross_traffic", 1), {"kind": "schedule"}, "schedule"),
    ]
    for (table, *idx), add, field in conflicts:
        d = copy.deepcopy(BASE)
        t = d[table][idx[0]] if idx else d[table]
        t.update(add)
        out.append((f"{table}{idx}: + {add!r}", d, field))
    for path, field in [(("scenario", "name"), "name"), (("scenario", "model"), "model"),
                        (("scenario", "duration_s"), "duration_s"), (("links", 0, "name"), "name"),
                        (("links", 0, "capacity_mbps"), "capacity"), (("flows", 0, "route"), "route"),
                        (("flows", 0, "rtt_ms"), "rtt"), (("flows", 0, "name"), "name"),
                        (("cross_traffic", 0, "link"), "link"), (("cross_traffic", 1, "rate_pps"), "rate_pps")]:
        d = copy.deepcopy(BASE)
        del _get(d, path)[path[-1]]
        out.append((f"missing {'.'.join(map(str, path))}", d, field))
    d = copy.deepcopy(BASE)
    d["links"][1]["name"] = "a"
    out.append(("duplicate link name", d, "name"))
    d = copy.deepcopy(BASE)
    d["flows"][1]["name"] = "f1"
    d["flows"][1]["count"] = 1
    d["flows"][1].pop("start_every_s")
    out.append(("duplicate flow name", d, "name"))
    d = copy.deepcopy(BASE)
    d["cross_traffic"][0]["schedule_mbps"] = [[1.0, 5.0], [0.5, 0.0]]
    out.append(("schedule times decreasing", d, "schedule"))
    for bad in ([[0.5]], [["a", 1]], [[0.5, -1]], "x", [], [[True, 1]]):
        d = copy.deepcopy(BASE)
        d["cross_traffic"][0]["schedule_mbps"] = bad
        out.append((f"schedule_mbps = {bad!r}", d, "schedule"))
    return out


TOML_TEXTS = [
    ("not TOML", "[scenario\nname=", "TOML"), ("empty file", "", "scenario"), ("binary", "\x00\x01", "TOML"),
    ("array at top", "x = [1,2]", "x"), ("no flows", "[scenario]\nname='x'\nmodel='aecp'\nduration_s=1\n"
                                              "[[links]]\nname='a'\ncapacity_pps=5\n", "flows"),
]


def cli_cases():
    """Malformed command lines: ``(label, argv, field)``; ``{tmp}`` is a fresh temporary directory."""
    ok = ["--out", "{tmp}/o", "--quiet"]
    c = []
    for v in ("", " ", "{tmp}", "{tmp}/missing.toml", "{tmp}/unreadable.toml", "{tmp}/dir.toml", "nosuch",
              "{tmp}/latin1.toml"):
        c.append((f"simulate {v!r}", ["simulate", v, *ok], "scenario" if v.strip() else "SCENARIO"))
    for opt, vals in {"--t-end-s": ["0", "-1", "nan", "inf", "1e12", "x"], "--rtol": ["0", "-1", "nan", "x"],
                      "--step-s": ["0", "-1", "nan"], "--set": ["alpha_per_s", "alpha_per_s=true", "alpha_per_s=-1",
                                                                    "nosuch=1", "alpha_per_s=x", "alpha_per_s=1e9",
                                                                    "=1"],
                      "--solver": ["rk4"], "--engine": ["gpu"]}.items():
        for v in vals:
            c.append((f"simulate {opt} {v}", ["simulate", "aecp-parking-lot", opt, v, *ok], opt.lstrip("-").split("-")[0]
                      if opt != "--set" else (v.split("=")[0] or "--set")))
    c.append(("simulate --set twice", ["simulate", "aecp-parking-lot", "--set", "alpha_per_s=1", "--set",
                                       "alpha_per_s=2", *ok], "alpha_per_s"))
    c.append(("simulate --rtt-includes-queueing with the fixed-step solver",
              ["simulate", "aecp-parking-lot", "--solver", "fixed", "--step-s", "0.001", "--rtt-includes-queueing",
               *ok], "rtt-includes-queueing"))
    for out in ("{tmp}/file", "/proc/ecocc-out", ""):
        c.append((f"simulate --out {out!r}", ["simulate", "aecp-parking-lot", "--out", out, "--quiet"], "out"))
    sw = ["sweep", "aecp-parking-lot", "--out", "{tmp}/s", "--quiet"]
    for ax in ("alpha_per_s", "alpha_per_s=", "alpha_per_s=1,,2", "alpha_per_s=a", "alpha_per_s=1:2",
               "alpha_per_s=1:2:0", "alpha_per_s=1:2:x", "alpha_per_s=1:2:100000000", "alpha_per_s=nan",
               "alpha_per_s=1,1", "alpha_per_s=-1", "alpha_per_s=1e9", "nosuch=1", "=1,2", "rtt_scale=0",
               "rtt_scale=1e-12", "alpha_per_s=true", "alpha_per_s=1:1:3"):
        c.append((f"sweep --axis {ax}", [*sw, "--axis", ax], "axis" if not ax.startswith("rtt_scale") else "rtt_scale"))
    c.append(("sweep repeated --axis", [*sw, "--axis", "alpha_per_s=1,2", "--axis", "alpha_per_s=3"], "alpha_per_s"))
    c.append(("sweep 1e8 points", [*sw, "--axis", "alpha_per_s=1:2:10000", "--axis", "beta_per_s=1:2:10000"], "axes"))
    c.append(("sweep 4 axes", [*sw] + sum((["--axis", f"{n}=1,2"] for n in ("alpha_per_s", "beta_per_s", "T_s",
                                                                             "q0_pkts")), []), "axes"))
    for opt, v, f in (("--t-end-s", "0", "t-end-s"), ("--t-end-s", "-3", "t-end-s"), ("--metric", "nosuch", "metric"),
                      ("--workers", "0", "workers"), ("--engine", "gpu", "engine")):
        c.append((f"sweep {opt} {v}", [*sw, "--axis", "alpha_per_s=1,2", opt, v], f))
    c.append(("sweep without --axis", [*sw], "axis"))
    c.append(("sweep --engine ns3 --constant-rtt", [*sw, "--axis", "alpha_per_s=1", "--engine", "ns3", "--constant-rtt"],
              "constant-rtt"))
    c.append(("sweep unreachable --scheduler", [*sw, "--axis", "alpha_per_s=1", "--scheduler", "tcp://127.0.0.1:9"],
              "scheduler"))
    c.append(("sweep --scheduler not an address", [*sw, "--axis", "alpha_per_s=1", "--scheduler", "::::"], "scheduler"))
    sm = ["sim-map", "aecp-parking-lot", "--out", "{tmp}/m", "--quiet", "--no-figure"]
    for args, f in ((["--axis", "alpha_per_s=1,2"], "axis"), (["--axis", "alpha_per_s=1,2", "--axis", "alpha_per_s=3"],
                    "alpha_per_s"), (["--axis", "alpha_per_s=1,2", "--axis", "rtt_scale=-1"], "rtt_scale"),
                    (["--axis", "alpha_per_s=1,2", "--axis", "nosuch=1"], "nosuch"),
                    (["--axis", "a=1", "--x", "alpha_per_s=1"], "axis"), (["--t-end-s", "0"], "t-end-s"),
                    (["--t-end-s", "5", "--window-s", "10"], "window-s"), (["--rtol", "-1"], "rtol"),
                    (["--threshold-pkts", "0"], "threshold"), (["--set", "alpha_per_s=true"], "alpha_per_s"),
                    (["--axis", "alpha_per_s=1,2", "--axis", "rtt_scale=1e-9"], "rtt_scale"),
                    (["--axis", "alpha_per_s=1e9", "--axis", "rtt_scale=1"], "alpha_per_s"),
                    (["--axis", "alpha_per_s=1:2:10000", "--axis", "rtt_scale=1:2:10000"], "points")):
        c.append((f"sim-map {' '.join(args)}", [*sm, *args], f))
    st = ["stability-map", "aecp", "--out", "{tmp}/sm"]
    for args, f in ((["--axis", "alpha_per_s=1,2"], "axis"), (["--axis", "nosuch=1,2", "--axis", "rtt_s=0.1"], "nosuch"),
                    (["--axis", "alpha_per_s=x", "--axis", "rtt_s=0.1"], "alpha_per_s"),
                    (["--axis", "alpha_per_s=1:2:10000", "--axis", "rtt_s=1:2:10000"], "points")):
        c.append((f"stability-map {' '.join(args)}", [*st, *args], f))
    c.append(("margins nosuch model", ["margins", "nosuch"], "model"))
    c.append(("claims --only nosuch", ["claims", "--only", "nosuch"], "only"))
    return c


def api_cases():
    """Malformed API calls: ``(label, callable, field)``."""
    from ecocc import Flow, Link, Network, dumbbell, simulate
    from ecocc.sweeps import parse_axis, run_sweep
    net = dumbbell(1000.0, [0.05, 0.1])
    c = []
    for v in (True, "1", None, NAN, INF, -1, 0, [1]):
        c.append((f"simulate t_end_s={v!r}", lambda v=v: simulate(net, "aecp", t_end_s=v), "t_end_s"))
    for v in (True, "x", NAN, -1, 1e9):
        c.append((f"simulate alpha_per_s={v!r}", lambda v=v: simulate(net, "aecp", t_end_s=1, alpha_per_s=v),
                  "alpha_per_s"))
    c.append(("simulate rtt 1e-9", lambda: simulate(dumbbell(1000.0, [1e-9]), "aecp", t_end_s=10), "rtt_s"))
    c.append(("simulate output_dt_s 1e-9", lambda: simulate(net, "aecp", t_end_s=100, output_dt_s=1e-9),
              "output_dt_s"))
    c.append(("simulate network=5", lambda: simulate(5, "aecp", t_end_s=1), "network"))
    c.append(("simulate model=5", lambda: simulate(net, 5, t_end_s=1), "model"))
    c.append(("simulate solver", lambda: simulate(net, "aecp", t_end_s=1, solver="x"), "solver"))
    c.append(("simulate fixed no step", lambda: simulate(net, "aecp", t_end_s=1, solver="fixed"), "step_s"))
    for v in (True, "5", NAN, -1, 0):
        c.append((f"Link capacity {v!r}", lambda v=v: Link("a", v), "capacity_pps"))
        c.append((f"Flow rtt {v!r}", lambda v=v: Flow("f", ("a",), v), "rtt_s"))
    c.append(("Network no flows", lambda: Network((Link("a", 1.0),), ()), "flows"))
    c.append(("dumbbell rtts=[]", lambda: dumbbell(10.0, []), "rtt"))
    c.append(("parse_axis 5", lambda: parse_axis(5), "axis"))
    more = {
        "rtol": dict(rtol=-1), "rtol ": dict(rtol=math.nan), "rtol  ": dict(rtol="x"), "rtol   ": dict(rtol=5.0),
        "atol": dict(atol=-1.0), "max_step_s": dict(max_step_s=0), "max_step_s ": dict(max_step_s=1e-12),
        "summary_window_s": dict(summary_window_s=-1), "engine": dict(engine="x"),
        "output_dt_s": dict(output_dt_s=True), "checkpoint_every_s": dict(checkpoint="/nonexistent/ck.npz",
                                                                             checkpoint_every_s=-1),
        "step_s": dict(solver="fixed", step_s=True), "step_s ": dict(solver="fixed", step_s=1e-12),
    }
    for field, kw in more.items():
        c.append((f"simulate {kw}", lambda kw=kw: simulate(net, "aecp", t_end_s=100, **kw), field.strip()))
    c.append(("simulate params=5", lambda: simulate(net, "aecp", 5, t_end_s=1), "params"))
    c.append(("dumbbell capacity True", lambda: dumbbell(True, [0.1]), "capacity"))
    c.append(("dumbbell rtts 'a'", lambda: dumbbell(100.0, "a"), "rtts_s"))
    c.append(("dumbbell rtts ['a']", lambda: dumbbell(100.0, ["a"]), "rtts_s"))
    from ecocc import CrossTraffic, parking_lot, random_network
    c.append(("parking_lot negative", lambda: parking_lot([100.0, -1.0], 0.01), "capacity"))
    c.append(("random_network n_flows=-1", lambda: random_network(-1, 3), "n_flows"))
    c.append(("random_network n_flows=1e9", lambda: random_network(10 ** 9, 3, max_hops=2), "n_flows"))
    c.append(("random_network n_links=True", lambda: random_network(3, True), "n_links"))
    c.append(("CrossTraffic schedule [(1,)]", lambda: CrossTraffic("a", kind="schedule", schedule=[(1,)]), "schedule"))
    c.append(("CrossTraffic n_sources True", lambda: CrossTraffic("a", kind="onoff", rate_pps=1.0, n_sources=True),
              "n_sources"))
    c.append(("Flow route 5", lambda: Flow("f", 5, 0.1), "route"))
    c.append(("Flow forward_delays 'x'", lambda: Flow("f", ("a",), 0.1, forward_delays_s="x"), "forward_delays_s"))
    c.append(("Network links 5", lambda: Network(5, ()), "links"))
    c.append(("Network.scaled rtt 0", lambda: net.scaled(rtt_scale=0), "rtt_scale"))
    c.append(("run_sweep axes list", lambda: run_sweep("aecp-parking-lot", ["alpha_per_s"], "/tmp/x", progress=False),
              "axes"))
    from ecocc import scenarios
    c.append(("scenarios.load 5", lambda: scenarios.load(5), "scenario"))
    c.append(("scenarios.load ''", lambda: scenarios.load(""), "scenario"))
    return c


def to_toml(d: dict) -> str:
    """A small TOML writer for the cases (top-level values, tables, arrays of tables; nan/inf as TOML)."""
    def val(v):
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, (int,)):
            return str(v)
        if isinstance(v, float):
            return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf") if math.isinf(v) else repr(v)
        if isinstance(v, str):
            return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
        if isinstance(v, list):
            return "[" + ", ".join(val(x) for x in v) + "]"
        if isinstance(v, dict):
            return "{" + ", ".join(f"{k} = {val(x)}" for k, x in v.items()) + "}"
        raise TypeError(type(v))
    lines, tables, arrays = [], [], []
    for k, v in d.items():
        if isinstance(v, dict):
            tables.append((k, v))
        elif isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
            arrays.append((k, v))
        else:
            lines.append(f"{k} = {val(v)}")
    for k, t in tables:
        lines.append(f"[{k}]")
        lines += [f"{kk} = {val(vv)}" for kk, vv in t.items()]
    for k, arr in arrays:
        for t in arr:
            lines.append(f"[[{k}]]")
            lines += [f"{kk} = {val(vv)}" for kk, vv in t.items()]
    return "\n".join(lines) + "\n"


def prepare_tmp(tmp):
    """The files the CLI cases name: a FIFO (not a regular file), a directory named .toml, a Latin-1 file,
    a plain file where a directory is expected."""
    import os
    from pathlib import Path
    tmp = Path(tmp)
    (tmp / "dir.toml").mkdir(exist_ok=True)
    if not (tmp / "unreadable.toml").exists():
        os.mkfifo(tmp / "unreadable.toml")
    (tmp / "latin1.toml").write_bytes(b"[scenario]\nname = '\xe9'\n")
    (tmp / "file").write_text("x")
    return tmp


__all__ = ["BASE", "TOML_TEXTS", "api_cases", "cli_cases", "prepare_tmp", "scenario_cases", "to_toml"]
