"""Results on disk that are never lost, never half-written and never stale.

* :func:`atomic_path` / :func:`atomic_write_text`: every file is written under
  a temporary name in the same directory, flushed to disk, then renamed over
  its final name (``os.replace`` is atomic on POSIX and Windows), so a reader,
  or a run resumed after a kill, sees the old file or the new one, never half
  of one.
* :class:`OutputLock`: an exclusive lock on an output directory
  (``OUT/.ecocc.lock``, ``fcntl.flock``); a second process on the same
  ``--out`` is refused with a message naming the process that holds it.  The
  operating system releases the lock when its holder dies, even by SIGKILL,
  so a killed run never leaves a stale lock behind.
* :func:`run_key`: the key of a resumable result, a hash of everything that
  determines it (the scenario's contents, the version of the code that
  computes it, the solver settings, the engine, the duration, the point).
* :func:`safe_name`: a scenario name made into a file name that stays inside
  the output directory.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import re
from pathlib import Path

from .errors import InputError

#: sub-packages and modules whose source determines a simulated result (the code version of a run key);
#: command-line, plotting, claims and documentation code is left out so that editing it keeps old results
RESULT_SOURCES = ("models", "dde", "system.py", "network.py", "simulate.py", "results.py", "batch.py",
                  "sweeps.py", "scenarios/__init__.py", "units.py")

_CODE_VERSION = None


def code_version() -> str:
    """Version string plus a SHA-256 (16 hex digits) of the source files that compute results.

    Any edit of a model, the solvers, the network or the result code changes it, so results computed by
    other code are never reused.  Compiled kernels are built from the same sources (``ecocc/dde``), so
    they are covered too.

    Returns
    -------
    str
        ``"<version>+<hash>"``, e.g. ``"0.1.0+3f2a..."`` (computed once per process).
    """
    global _CODE_VERSION
    if _CODE_VERSION is None:
        from . import __version__
        root = Path(__file__).resolve().parent
        h = hashlib.sha256()
        for rel in RESULT_SOURCES:
            p = root / rel
            files = sorted(p.rglob("*.py")) if p.is_dir() else [p]
            for f in files:
                if f.exists():
                    h.update(str(f.relative_to(root)).encode())
                    h.update(f.read_bytes())
        _CODE_VERSION = f"{__version__}+{h.hexdigest()[:16]}"
    return _CODE_VERSION


def canonical(obj) -> str:
    """Canonical JSON of ``obj`` for hashing.

    Parameters
    ----------
    obj : dict, list, number, str, bool or None
        Nested data; numpy scalars are read as floats, anything else by its ``repr``.

    Returns
    -------
    str
        Compact JSON with sorted keys; non-finite floats as the strings ``"inf"``, ``"-inf"``, ``"nan"``.
    """
    def fix(v):
        if isinstance(v, dict):
            return {str(k): fix(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [fix(x) for x in v]
        if isinstance(v, bool) or v is None or isinstance(v, str):
            return v
        if isinstance(v, int):
            return v
        try:
            f = float(v)
        except (TypeError, ValueError):
            return repr(v)
        return repr(f) if not math.isfinite(f) else f
    return json.dumps(fix(obj), sort_keys=True, separators=(",", ":"))


def run_key(**parts) -> tuple[str, dict]:
    """Key of a stored result: a hash of everything that determines it.

    Parameters
    ----------
    **parts
        Everything that determines the result: the scenario digest, the point, the duration (s), the engine,
        the solver settings.  :func:`code_version` is added.

    Returns
    -------
    key : str
        20 hex digits of the SHA-256 of the canonical JSON of ``parts``.
    record : dict
        What was hashed, to be stored beside the result.
    """
    record = dict(parts, code_version=code_version())
    return hashlib.sha256(canonical(record).encode()).hexdigest()[:20], json.loads(canonical(record))


_SAFE = re.compile(r"[^A-Za-z0-9._+-]+")


def safe_name(name: str, field: str = "[scenario].name") -> str:
    """``name`` as one file-name component that stays inside its directory.

    Parameters
    ----------
    name : str
        A scenario name, e.g. ``"../../escaped"``.
    field : str
        The field named in the error message.

    Returns
    -------
    str
        Characters outside ``A-Za-z0-9._+-`` replaced by ``_``, dots, dashes and underscores stripped from
        the start, at most 100 characters: ``"../../escaped"`` becomes ``"escaped"``.

    Raises
    ------
    InputError
        When nothing is left (a name of dots and separators only).
    """
    s = _SAFE.sub("_", str(name)).lstrip("._-")[:100]
    if not s:
        raise InputError(field, name, "a name with at least one letter or digit (used as a file name)")
    return s


def inside(out_dir, name: str) -> Path:
    """``out_dir / name``, refused unless it stays inside ``out_dir``.

    Parameters
    ----------
    out_dir : path
        The output directory.
    name : str
        A file name.

    Returns
    -------
    pathlib.Path
        ``out_dir / name``.

    Raises
    ------
    InputError
        When the resolved path is not directly inside ``out_dir``.
    """
    out = Path(out_dir).resolve()
    p = (out / name).resolve()
    if p.parent != out:
        raise InputError("output name", name, f"a file name inside {out}")
    return out / name


def _tmp_name(path: Path) -> Path:
    # same directory (rename is atomic only within a file system), same suffix (savefig and to_netcdf read
    # the format from it), a leading dot and the pid so it is recognisable and unique per process
    return path.with_name(f".{path.stem}.tmp-{os.getpid()}{path.suffix}")


@contextlib.contextmanager
def atomic_path(path):
    """Context manager yielding a temporary path; on success it is renamed over ``path``.

    Parameters
    ----------
    path : path
        The final file.  The temporary one is in the same directory (a rename is atomic only within one
        file system) and has the same suffix (writers that infer the format from it keep working).

    Yields
    ------
    pathlib.Path
        Where to write.  On an exception the temporary file is removed and ``path`` is left as it was.
    """
    path = Path(path)
    tmp = _tmp_name(path)
    try:
        yield tmp
        with contextlib.suppress(OSError):  # flush to disk before the rename (not possible on every FS)
            fd = os.open(tmp, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def atomic_write_text(path, text: str) -> None:
    """Write ``text`` to ``path`` atomically.

    Parameters
    ----------
    path : path
        The file.
    text : str
        Its contents, written as UTF-8.
    """
    with atomic_path(path) as tmp:
        Path(tmp).write_text(text, encoding="utf-8")


def read_json(path):
    """The JSON in ``path``, or ``None`` when it is missing or unreadable.

    Parameters
    ----------
    path : path
        A JSON file.

    Returns
    -------
    object or None
        The parsed JSON; ``None`` for a missing file or one that does not parse (e.g. written by an older,
        non-atomic version and cut by a kill): the caller recomputes it.
    """
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def writable_dir(out_dir, field: str = "--out") -> Path:
    """Create ``out_dir`` if needed and check that files can be written there.

    Parameters
    ----------
    out_dir : path
        The output directory.
    field : str
        The option named in the error message.

    Returns
    -------
    pathlib.Path
        The directory.

    Raises
    ------
    InputError
        For an empty path, a path that is a file, or a directory that cannot be created or written.
    """
    out = Path(out_dir)
    if str(out_dir) == "":
        raise InputError(field, str(out_dir), "a directory path (not empty)")
    if out.exists() and not out.is_dir():
        raise InputError(field, str(out_dir), "a directory (this path is a file)")
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / f".ecocc-write-test-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise InputError(field, str(out_dir), f"a directory this user can create and write ({exc.strerror})") from None
    return out


class OutputLock:
    """Exclusive lock on an output directory, held for the life of the ``with`` block.

    Raises :class:`InputError` naming ``field`` when another process holds it.  Where ``fcntl`` is missing
    (Windows) no lock is taken; the atomic writes still keep every file whole.

    Parameters
    ----------
    out_dir : str or path-like
        The output directory (created if missing; removed again on exit if nothing was written in it).
    field : str, optional
        The option's name for error messages (``--out``).
    """

    def __init__(self, out_dir, field: str = "--out"):
        self._created = not Path(out_dir).exists()  # made by us: removed again if nothing was written in it
        self.out = writable_dir(out_dir, field)
        self.field = field
        self.path = self.out / ".ecocc.lock"
        self._fd = None

    def __enter__(self):
        try:
            import fcntl
        except ImportError:  # pragma: no cover - Windows
            return self
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            try:
                holder = os.read(fd, 200).decode(errors="replace").strip() or "another process"
            finally:
                os.close(fd)
            raise InputError(self.field, str(self.out),
                             f"a directory no other ecocc run is writing to (locked by {holder}; wait for it to "
                             "finish or use another --out)") from None
        os.ftruncate(fd, 0)
        os.write(fd, f"pid {os.getpid()}".encode())
        self._fd = fd
        return self

    def __exit__(self, *exc):
        if self._fd is not None:
            import fcntl
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, 0)
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None
            if self._created and [p.name for p in self.out.iterdir()] == [self.path.name]:
                with contextlib.suppress(OSError):  # a run refused before writing anything leaves no trace
                    self.path.unlink()
                    self.out.rmdir()
        return False


def save_dataset(path, ds, key: str | None = None) -> None:
    """Write an xarray Dataset to NetCDF (h5netcdf) atomically.

    Parameters
    ----------
    path : path
        The NetCDF file.
    ds : xarray.Dataset
        The data (not modified).
    key : str, optional
        A :func:`run_key`, stored in ``attrs["run_key"]`` so that a later run can tell whether the file
        holds its own results.
    """
    if key is not None:
        ds = ds.copy()
        ds.attrs["run_key"] = key
    with atomic_path(path) as tmp:
        ds.to_netcdf(tmp, engine="h5netcdf")


def load_dataset(path, key: str | None = None):
    """Load a NetCDF result if it is readable and holds the results of ``key``.

    Parameters
    ----------
    path : path
        The NetCDF file.
    key : str, optional
        The :func:`run_key` the file must carry in ``attrs["run_key"]``.

    Returns
    -------
    dataset : xarray.Dataset or None
        Loaded into memory (the file is closed), or None.
    note : str or None
        Why nothing was loaded: the file is unreadable (e.g. cut by a kill under an older, non-atomic
        version) or holds results of other inputs; None when it was loaded or is missing.  A bad file never
        raises: the caller recomputes.
    """
    path = Path(path)
    if not path.exists():
        return None, None
    try:
        import xarray as xr
        with xr.open_dataset(path, engine="h5netcdf") as old:
            ds = old.load()
    except Exception as exc:  # any failure to read (truncated HDF5, not NetCDF, ...) means: recompute
        return None, f"{path} is unreadable ({type(exc).__name__}); computing every point"
    if key is not None and ds.attrs.get("run_key") != key:
        return None, (f"{path} holds results of other inputs (scenario contents, settings or code version); "
                      "computing every point")
    return ds, None


__all__ = ["OutputLock", "load_dataset", "save_dataset", "atomic_path", "atomic_write_text", "canonical", "code_version", "inside", "read_json",
           "run_key", "safe_name", "writable_dir"]
