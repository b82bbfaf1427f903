"""The first run after installing: N = 4 dumbbell, 60 s, whole processes, ecocc against jitcdde, every model.

For each model (default: aecp, cltcp, petcp, symbiosis, reno and a Symbiosis + Reno dumbbell, the list of
issue 14), the case of ``models_bench.py``: a dumbbell of 15,000 packets/s, RTTs 50/100/200/400 ms, flows
starting together at the default initial rate, drop-tail buffer 500 packets for Reno and the mixed row,
60 s; ecocc at its defaults (``engine="auto"``, rtol 1e-7), jitcdde at rtol 1e-7, atol 1e-7.

* **ecocc**: ``python first_run.py --case ...`` in a fresh process (``import ecocc``, build the network,
  ``simulate``, exit) with empty kernel caches (``ECOCC_CACHE_DIR`` and ``NUMBA_CACHE_DIR``: a fresh
  temporary directory per run), so the kernel comes from the module ``setup.py build_ext`` compiled at
  install time (``ecocc/dde/shipped``), else it is compiled now; each run records which (``installed``,
  ``compiled``), and whether numba, SymPy or SciPy were imported.
* **jitcdde**: ``jitc_models.py`` (the same model from the same laws, its C compilation included: every
  jitcdde run is a first run), a fresh process each time; the row ``aecp-hand`` times ``external.py``'s
  hand transcription of AECP instead (a leaner jitcdde process: it converts no laws with SymPy), against
  ecocc on its case (initial rate and r0 10 packets/s).

Both are timed by this script from spawn to exit; rounds interleave the two (load changes hit both);
the speed-up is the ratio of the medians of the runs made in this invocation.  Before timing, the package's
``.pyc`` files are written (``python -m compileall``), as ``pip install`` does for an installed package (an
editable install writes them on its first import instead; ``--no-pyc`` removes ecocc's and measures
processes that compile ecocc's sources every time).

Usage: ``python benchmarks/first_run.py [--rounds 5] [--models aecp,reno]``; writes ``first_run.json`` and
``first_run.md`` beside this file.
"""
from __future__ import annotations

import time

T_START = time.perf_counter()  # a --case process's clock starts before its imports

import json  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402

# a --case process imports only these before ecocc; the harness's modules are imported in main()
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MODELS = ("aecp", "cltcp", "petcp", "symbiosis", "reno", "symbiosis+reno", "aecp-hand")
TARGET = 3.0


#: the row whose jitcdde peer is ``external.py``'s hand transcription of AECP (the leaner jitcdde process: no
#: SymPy laws to convert; x0 = r0 = 10 packets/s, as there) rather than ``jitc_models.py``
HAND = "aecp-hand"


def _case(model: str) -> dict:
    """The N = 4 case of ``models_bench.py`` (its ``_case``), 60 s, rtol 1e-7 (ecocc's default)."""
    sys.path.insert(0, HERE)
    from models_bench import _case as mb_case
    if model == HAND:
        case = mb_case("aecp", 4, 60.0, 1e-7, None)
        case.update(initial_rate_pps=10.0, params=dict(r0_pps=10.0))
    else:
        case = mb_case(model, 4, 60.0, 1e-7, None)
    case["t_out_s"] = [float(x) for x in case["t_out_s"]]
    return case


def run_case(case: dict) -> None:
    """The ecocc side, in its own process: import, build, simulate at the defaults, print one JSON line."""
    from ecocc import dumbbell, simulate
    t_import = time.perf_counter()
    buf = case["buffer_pkts"]
    net = dumbbell(case["capacity_pps"], case["rtts_s"], buffer_pkts=float("inf") if buf is None else buf,
                   protocols=case.get("protocols"),
                   **({"initial_rate_pps": case["initial_rate_pps"]} if "initial_rate_pps" in case else {}))
    tr = simulate(net, case["model"], t_end_s=case["t_end_s"], protocols=case.get("members"),
                  **case.get("params", {}))
    t_done = time.perf_counter()
    print("RESULT " + json.dumps(dict(
        status=tr.status.value, import_s=t_import - T_START, simulate_s=t_done - t_import,
        solver_wall_s=tr.solver.get("wall_s"), n_steps=tr.solver.get("n_steps"),
        compiled=tr.solver.get("compiled"), installed=bool(tr.solver.get("installed")),
        built_now=bool(tr.solver.get("built_now")),
        imported={m: m in sys.modules for m in ("numba", "sympy", "scipy", "scipy.optimize", "scipy.sparse")})))


def _timed(cmd, env, cwd, timeout):
    import subprocess
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=cwd, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"timeout after {timeout} s"
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        return None, f"exit status {p.returncode}: " + (p.stderr or p.stdout).strip()[-1000:]
    return wall, p.stdout


def _env(**extra):
    env = dict(os.environ, PYTHONPATH=ROOT, **extra)
    for k in ("ECOCC_AOT", "ECOCC_ENGINE"):  # the defaults, as a user has them
        env.pop(k, None)
    return env


def _pyc(no_pyc: bool, tmp: str):
    """Write the package's .pyc files (what pip install does), or (``--no-pyc``) remove them and turn
    writing off, so every process compiles ecocc's sources (the other packages keep their .pyc files)."""
    import shutil
    import subprocess
    from pathlib import Path
    if no_pyc:
        for d in (Path(ROOT) / "ecocc").rglob("__pycache__"):
            shutil.rmtree(d)
        return dict(PYTHONDONTWRITEBYTECODE="1")
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(Path(ROOT) / "ecocc")], check=True,
                   stdout=subprocess.DEVNULL, env=dict(os.environ, PYTHONDONTWRITEBYTECODE=""))
    return {}


def _fmt(v, f="{:.3f}"):
    return "—" if v is None else f.format(v)


def write_md(res, path):
    from pathlib import Path
    L = [f"# First run after installing: N = 4 dumbbell, 60 s, whole processes ({res['date_utc']} UTC)", "",
         "`python benchmarks/first_run.py` (the case of `models_bench.py`; ecocc at its defaults with empty kernel "
         "caches, jitcdde from the same laws with its C compilation; each run a fresh process timed from spawn "
         f"to exit; {res['rounds']} interleaved rounds; medians).  {res['pyc']}.  Load average "
         f"{res['loadavg_start']} at the start, {res['loadavg_end']} at the end, on {res['machine']}.", "",
         "| model | ecocc first run (s) | kernel | jitcdde (s) | speed-up | target 3x | imported by the ecocc run |",
         "|---|---|---|---|---|---|---|"]
    for r in res["rows"]:
        kern = ", ".join(sorted(set(r["kernels"]))) or "—"
        imp = sorted({k for run in r["ecocc_runs"] for k, v in run.get("imported", {}).items() if v})
        sp = r.get("speedup")
        L.append(f"| {r['model']} | {_fmt(r.get('median_ecocc_s'))} | {kern} | {_fmt(r.get('median_jitcdde_s'))} | "
                 f"{_fmt(sp, '{:.2f}x')} | {'—' if sp is None else ('met' if sp >= TARGET else 'missed')} | "
                 f"{', '.join(imp) or 'none of numba, SymPy, SciPy'} |")
    L += ["", "kernel: `aot installed` = the module `setup.py build_ext` compiled at install time (no numba imported); "
          "`aot` / `jit` = compiled during the run; `numpy` = the NumPy solver (no compiled kernel for the case).  "
          "Errors, if any, are in `first_run.json`."]
    errs = [f"{r['model']}: {len(r['errors'])} failed run(s) ({r['errors'][0][:80]})" for r in res["rows"] if r["errors"]]
    if errs:
        L += ["", "Failed runs (left out of the medians): " + "; ".join(errs) + "."]
    Path(path).write_text("\n".join(L) + "\n")


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--case":
        run_case(json.loads(argv[1]))
        return
    import argparse
    import platform
    import statistics
    import tempfile
    from pathlib import Path
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--no-pyc", action="store_true", help="remove ecocc's .pyc files and write none: every process "
                    "compiles ecocc's sources (an editable install's first import)")
    ap.add_argument("--timeout", type=float, default=600.0, help="per process, seconds")
    ap.add_argument("--out", default=os.path.join(HERE, "first_run"), help="results path without extension")
    a = ap.parse_args(argv)
    if a.rounds < 1:
        ap.error(f"--rounds must be >= 1, got {a.rounds}")
    models = [m.strip() for m in a.models.split(",") if m.strip()]
    tmp = tempfile.mkdtemp(prefix="ecocc-first-")
    pyc_env = _pyc(a.no_pyc, tmp)
    res = dict(case="N = 4 dumbbell, 60 s, whole process, empty kernel caches", rounds=a.rounds,
               pyc=("no .pyc for ecocc: every process compiled ecocc's sources" if a.no_pyc else
                    ".pyc files written before timing (python -m compileall, as pip install does)"),
               machine=platform.platform(), python=sys.version.split()[0],
               loadavg_start=" ".join(f"{x:.1f}" for x in os.getloadavg()),
               date_utc=time.strftime("%Y-%m-%d %H:%M", time.gmtime()), rows=[])
    rows = {m: dict(model=m, ecocc_s=[], jitcdde_s=[], ecocc_runs=[], kernels=[], errors=[]) for m in models}
    cases = {m: _case(m) for m in models}
    for r in range(a.rounds):
        for m in models:
            row, case = rows[m], cases[m]
            d = tempfile.mkdtemp(dir=tmp)
            w, out = _timed([sys.executable, str(Path(__file__).resolve()), "--case", json.dumps(case)],
                            _env(ECOCC_CACHE_DIR=d, NUMBA_CACHE_DIR=str(Path(d) / "numba"), **pyc_env), tmp,
                            a.timeout)
            if w is None:
                row["errors"].append(f"ecocc: {out}")
            else:
                info = json.loads(out.split("RESULT ", 1)[1])
                row["ecocc_s"].append(w)
                row["ecocc_runs"].append(info)
                row["kernels"].append("numpy" if info["compiled"] is None else
                                      f"{info['compiled']}{' installed' if info['installed'] else ''}")
            npz = str(Path(tmp) / f"j-{m}-{r}.npz")
            # jitcdde builds its C module with setuptools in the working directory: a temporary one, not the
            # checkout (whose pyproject.toml is not for that setuptools)
            if m == HAND:
                jcmd = [os.path.join(HERE, "external.py"), json.dumps(dict(
                    rtts=case["rtts_s"], starts=[0.0] * 4, t_end=case["t_end_s"], t_out=case["t_out_s"], rtol=1e-7,
                    atol=1e-7, out=npz))]
            else:
                jcmd = [os.path.join(HERE, "jitc_models.py"), json.dumps(dict(case, atol=1e-7)), npz]
            w, out = _timed([sys.executable] + jcmd, _env(**pyc_env), tmp, a.timeout)
            if w is None:
                row["errors"].append(f"jitcdde: {out}")
            else:
                row["jitcdde_s"].append(w)
            print(f"round {r + 1} {m}: ecocc {_fmt(row['ecocc_s'][-1] if row['ecocc_s'] else None)} s "
                  f"({row['kernels'][-1] if row['kernels'] else 'error'}), jitcdde "
                  f"{_fmt(row['jitcdde_s'][-1] if row['jitcdde_s'] else None)} s", flush=True)
    for m in models:
        row = rows[m]
        if row["ecocc_s"]:
            row["median_ecocc_s"] = statistics.median(row["ecocc_s"])
        if row["jitcdde_s"]:
            row["median_jitcdde_s"] = statistics.median(row["jitcdde_s"])
        if row["ecocc_s"] and row["jitcdde_s"]:
            row["speedup"] = row["median_jitcdde_s"] / row["median_ecocc_s"]
            row["meets_3x"] = row["speedup"] >= TARGET
        res["rows"].append(row)
    res["loadavg_end"] = " ".join(f"{x:.1f}" for x in os.getloadavg())
    Path(a.out + ".json").write_text(json.dumps(res, indent=1))
    write_md(res, a.out + ".md")
    print(Path(a.out + ".md").read_text())


if __name__ == "__main__":
    main()
