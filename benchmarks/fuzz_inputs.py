"""The big fuzz run of malformed inputs: scenario files, CLI arguments, API calls (tests/fuzz_cases.py).

    PYTHONPATH=. python benchmarks/fuzz_inputs.py [--timeout-s 30] [--json out.json]

Every case is malformed by construction.  Outcomes: ``refused`` (an InputError, or exit status 2 from the
CLI with a one-line message) with or without the field named; ``traceback`` (any other exception, or a CLI
exit status other than 2); ``hang`` (no answer within --timeout-s); ``accepted`` (ran as if it were fine).
"""
from __future__ import annotations

import argparse
import collections
import json
import signal
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import fuzz_cases  # noqa: E402


class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang


def classify_call(fn, field, timeout_s):
    from ecocc.errors import InputError
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(int(timeout_s))
    try:
        fn()
        return "accepted", ""
    except InputError as exc:
        return ("refused" if field.lower() in str(exc).lower() else "refused, field not named"), str(exc)
    except Hang:
        return "hang", ""
    except Exception as exc:  # noqa: BLE001 - that is what we count
        return "traceback", f"{type(exc).__name__}: {exc}"
    finally:
        signal.alarm(0)


def classify_cli(argv, field, timeout_s):
    from click.testing import CliRunner

    from ecocc.cli import main
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(int(timeout_s))
    try:
        r = CliRunner().invoke(main, argv, catch_exceptions=True)
    except Hang:
        return "hang", ""
    finally:
        signal.alarm(0)
    if isinstance(r.exception, Hang):
        return "hang", ""
    text = r.output
    if r.exit_code == 0:
        return "accepted", text[-200:]
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        return "traceback", f"{type(r.exception).__name__}: {r.exception}"
    if r.exit_code != 2:
        return "traceback", f"exit {r.exit_code}: {text[-300:]}"
    if "Traceback" in text:
        return "traceback", text[-300:]
    return ("refused" if field.lower() in text.lower() else "refused, field not named"), text.strip().splitlines()[-1]


def run_all(timeout_s=30.0, verbose=False):
    from ecocc import scenarios
    rows = []
    with tempfile.TemporaryDirectory() as td:
        tmp = fuzz_cases.prepare_tmp(td)
        for label, data, field in fuzz_cases.scenario_cases():
            rows.append(("scenario dict", label, *classify_call(lambda d=data: scenarios.from_dict(d), field, timeout_s)))
            p = tmp / "case.toml"
            p.write_text(fuzz_cases.to_toml(data))
            rows.append(("scenario file", label, *classify_call(lambda p=p: scenarios.load(p), field, timeout_s)))
        for label, text, field in fuzz_cases.TOML_TEXTS:
            p = tmp / "text.toml"
            p.write_text(text)
            rows.append(("toml text", label, *classify_call(lambda p=p: scenarios.load(p), field, timeout_s)))
        for label, argv, field in fuzz_cases.cli_cases():
            argv = [a.replace("{tmp}", str(tmp)) for a in argv]
            rows.append(("cli", label, *classify_cli(argv, field, timeout_s)))
        for label, fn, field in fuzz_cases.api_cases():
            rows.append(("api", label, *classify_call(fn, field, timeout_s)))
    if verbose:
        for r in rows:
            if r[2] != "refused":
                print(" | ".join(r), file=sys.stderr)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--timeout-s", type=float, default=30.0)
    ap.add_argument("--json", default=None)
    ap.add_argument("-v", action="store_true")
    a = ap.parse_args()
    t0 = time.perf_counter()
    rows = run_all(a.timeout_s, a.v)
    counts = collections.Counter(r[2] for r in rows)
    by_kind = collections.defaultdict(collections.Counter)
    for r in rows:
        by_kind[r[0]][r[2]] += 1
    print(f"{len(rows)} malformed inputs in {time.perf_counter() - t0:.0f} s: " +
          ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    for k, c in by_kind.items():
        print(f"  {k:14s} " + ", ".join(f"{kk} {vv}" for kk, vv in sorted(c.items())))
    if a.json:
        Path(a.json).write_text(json.dumps({"counts": counts, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
