"""Run an independent reference solver (jitcdde) in a child process, so that it cannot take the test with it.

jitcdde compiles C code and loads it into the process that calls it.  One CI run (slow step, head 74ffe71) lost
an xdist worker to a fatal signal in ``test_state_dependent_delays.py::test_reno_queueing_delay_matches_jitcdde
[numba]``, right after that worker had compiled and loaded its fourth jitcdde module; the part of the output kept
did not say whether jitcdde's integration or ecocc's kernel compilation (``numba.pycc``, in the same process) died.
Five runs of that test here (fresh caches each time, one with numba's bounds checks on) did not crash.
The cause was found later (2026-11-27) in jitcdde itself: a delayed value inside a branch of a ``Piecewise`` (that
test's RED ramp) leaves jitcdde's search cursor on a freed anchor, a use-after-free that crashes some runs and
changes the numbers of others.  References with such branches are built with :func:`jitcdde_hoisted` (those delayed
values computed at every evaluation; ``benchmarks/jitc_models.py``), which removes both; the child process stays
as the guard against whatever else a compiled reference can do.

:func:`reference` runs ``fn(*args)`` in a spawned child.  A child killed by a signal is reported on stderr with
the signal and run once more (the reference is deterministic: a second run either gives the same numbers or
crashes again); two crashes fail the test and name the reference.  A crash of the test process itself is then
ecocc's.  Results are kept per process, keyed by the function and its arguments, so the parametrizations of one
test (NumPy and compiled engines) that land in one worker integrate the reference once.
"""
from __future__ import annotations

import multiprocessing as mp
import sys
import traceback

import pytest

_CACHE: dict = {}


def jitc_models():
    """``benchmarks/jitc_models.py`` (the model laws written for jitcdde), imported from the checkout."""
    from pathlib import Path
    bench = str(Path(__file__).resolve().parents[1] / "benchmarks")
    if bench not in sys.path:
        sys.path.insert(0, bench)
    import jitc_models as mod
    return mod


def jitcdde_hoisted(f, **kwargs):
    """``jitcdde(f, **kwargs)`` without jitcdde 1.8.3's use-after-free at delayed values inside branches
    (``benchmarks/jitc_models.py``'s :func:`jitcdde_hoisted`, docs/notes/jitcuaf.md)."""
    return jitc_models().jitcdde_hoisted(f, **kwargs)


def _child(conn, fn, args):
    import faulthandler
    faulthandler.enable()  # a crash in the child prints its stack on the test's stderr
    try:
        conn.send(("ok", fn(*args)))
    except BaseException:  # noqa: BLE001  (sent to the parent as text, raised there)
        conn.send(("error", traceback.format_exc()))
    finally:
        conn.close()


def _once(fn, args):
    ctx = mp.get_context("spawn")  # a fresh interpreter: nothing of the test process (loaded modules, threads)
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(send, fn, args), daemon=True)
    proc.start()
    send.close()
    try:
        kind, value = recv.recv()
    except EOFError:  # the child died before it answered
        kind, value = "crash", None
    proc.join()
    return kind, value, proc.exitcode


def reference(fn, *args, module: str = "jitcdde"):
    """``fn(*args)`` computed in a spawned child process.

    Parameters
    ----------
    fn : callable
        A module-level function (the child imports it by name).
    *args
        Its arguments (picklable).
    module : str
        The reference's package; the test is skipped where it is not installed.

    Returns
    -------
    object
        What ``fn`` returned.
    """
    pytest.importorskip(module)
    key = (fn.__module__, fn.__qualname__, repr(args))
    if key in _CACHE:
        return _CACHE[key]
    for attempt in (1, 2):
        kind, value, code = _once(fn, args)
        if kind == "ok":
            _CACHE[key] = value
            return value
        if kind == "error":
            raise RuntimeError(f"the reference {fn.__qualname__} raised in its child process:\n{value}")
        sys.stderr.write(f"reference_child: the reference {fn.__qualname__} died in its child process (exit code "
                         f"{code}; a negative code is the signal), attempt {attempt} of 2\n")
    pytest.fail(f"the reference {fn.__qualname__} ({module}) died twice in a child process (exit code {code}): "
                f"the reference, not ecocc, crashed")
