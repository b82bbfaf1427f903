"""Error types raised for user mistakes.

Every user-facing validation error names the field, the value it got and
what is allowed, so that the CLI can print it without a traceback.
"""


class EcoccError(Exception):
    """Base class of all errors ecocc raises on purpose."""


class InputError(EcoccError, ValueError):
    """Bad input: a parameter, a network description or a scenario file."""

    def __init__(self, field: str, value, allowed: str):
        self.field = field
        self.value = value
        self.allowed = allowed
        super().__init__(f"{field} = {value!r} is not allowed: {allowed}")


def check(condition: bool, field: str, value, allowed: str) -> None:
    """Raise :class:`InputError` unless ``condition`` holds.

    Parameters
    ----------
    condition : bool
        What must hold.
    field : str
        The input's name as the user wrote it (``flows[1].rtt_ms``, ``--t-end-s``).
    value : object
        The value given.
    allowed : str
        What is allowed, in words.
    """
    if not condition:
        raise InputError(field, value, allowed)


def check_finite(field: str, value, *, positive=False, nonneg=False) -> float:
    """Check a real scalar; return it as float.

    Parameters
    ----------
    field : str
        The input's name for the error message.
    value : object
        The value to check.
    positive, nonneg : bool
        Require ``> 0`` or ``>= 0``.

    Returns
    -------
    float
        The value.

    Raises
    ------
    InputError
        For a non-number, a non-finite number or one out of range.

    Notes
    -----
    ``True``/``False`` are refused (Python would read them as 1 and 0, TOML and JSON keep them apart), as are
    strings (``float("1e3")`` would accept text where a number is meant) and complex numbers.
    """
    if isinstance(value, (bool, str, bytes)) or (hasattr(value, "dtype") and getattr(value.dtype, "kind", "") == "b"):
        raise InputError(field, value, "a real number (not a boolean or text)")
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise InputError(field, value, "a real number") from None
    if v != v or v in (float("inf"), float("-inf")):
        raise InputError(field, value, "a finite real number")
    if positive and not v > 0:
        raise InputError(field, value, "a number > 0")
    if nonneg and not v >= 0:
        raise InputError(field, value, "a number >= 0")
    return v


def check_int(field: str, value, *, minimum: int = 1) -> int:
    """Check a whole number ``>= minimum`` (an integral float such as ``4.0`` is accepted; ``2.7``, ``True``
    and strings are not); return it as int.

    Parameters
    ----------
    field : str
        The input's name for the error message.
    value : object
        The value to check.
    minimum : int, optional
        The smallest value allowed.

    Returns
    -------
    int
        The value.

    Raises
    ------
    InputError
        For a non-number, a non-integral number or one below ``minimum``.
    """
    import math
    import numbers

    from .dde.options import integer  # the integer check itself (lazy: options imports this module)
    if (isinstance(value, numbers.Real) and not isinstance(value, (bool, numbers.Integral))
            and math.isfinite(value) and float(value).is_integer()):
        value = int(value)  # 4.0 is the whole number 4 here (options.integer refuses floats)
    return integer(field, value, lo=minimum)
