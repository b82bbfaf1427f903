"""Count the public functions and methods of ecocc whose docstring lacks numpydoc sections.

    PYTHONPATH=. python docs/check_docstrings.py [MODULE_PREFIX ...]

A callable taking arguments needs a ``Parameters`` section; one returning something (not ``None``, not
``__init__``) a ``Returns`` section (or ``Yields``).  Private names (``_x``) and Click commands are skipped.
"""
import importlib
import inspect
import pkgutil
import sys

import numpydoc.docscrape as ds

import ecocc


def public_callables(prefixes=()):
    for info in pkgutil.walk_packages(ecocc.__path__, "ecocc."):
        name = info.name
        if any(part.startswith("_") for part in name.split(".")[1:]):
            continue
        if prefixes and not name.startswith(tuple(prefixes)):
            continue
        try:
            mod = importlib.import_module(name)
        except Exception:  # optional dependencies
            continue
        for attr, obj in vars(mod).items():
            if attr.startswith("_") or getattr(obj, "__module__", None) != name:
                continue
            if inspect.isfunction(obj):
                yield f"{name}.{attr}", obj
            elif inspect.isclass(obj):
                for m, f in vars(obj).items():
                    if not m.startswith("_") and inspect.isfunction(f):
                        yield f"{name}.{attr}.{m}", f


def missing_sections(fn):
    doc = inspect.getdoc(fn)
    if not doc:
        return ["docstring"]
    parsed = ds.FunctionDoc(fn, doc=doc) if True else None
    sig = inspect.signature(fn)
    args = [p for p in sig.parameters.values() if p.name not in ("self", "cls")]
    miss = []
    if args and not parsed["Parameters"]:
        miss.append("Parameters")
    src = inspect.getsource(fn) if hasattr(fn, "__code__") else ""
    returns = "return " in src.replace("return None", "")
    if returns and not (parsed["Returns"] or parsed["Yields"]):
        miss.append("Returns")
    return miss


def main(prefixes):
    rows = []
    for name, fn in public_callables(prefixes):
        try:
            if getattr(fn, "__click_params__", None) is not None:
                continue
            miss = missing_sections(fn)
        except Exception as exc:  # a docstring numpydoc cannot parse counts as lacking sections
            miss = [f"unparsable ({type(exc).__name__})"]
        rows.append((name, miss))
    lacking = [r for r in rows if r[1]]
    for name, miss in lacking:
        print(f"{name}: no {', '.join(miss)}")
    print(f"{len(lacking)} of {len(rows)} public functions/methods lack numpydoc sections")
    return len(lacking)


if __name__ == "__main__":
    import warnings
    warnings.simplefilter("ignore")
    main(sys.argv[1:])
