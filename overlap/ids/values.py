"""How an id cell becomes text: the one place, so every adapter reads a parquet, CSV or JSON id the same way.

Id columns come as text, integers, or floats: a parquet or CSV column of integer ids with one missing value
is stored as float (`10055.0`). `str(10055.0)` is `"10055.0"`, whose trailing integer is 0, which made
every such id OSS-Fuzz issue 0. A whole float is therefore the integer it holds; a fraction is refused,
never rounded.
"""

from __future__ import annotations

import math
import sys

from ..errors import InputError

# Past 2**53 not every integer is a float: a float id that large may already differ from the id written.
_EXACT_FLOAT_LIMIT = 2**53


def ascii_int(digits: str, max_digits: int) -> int | None:
    """The int written as exactly `digits`, or None: 1 to `max_digits` ASCII digits, nothing else.

    Every id scheme turns digits into a number here, because int(), str.isdigit() and `\\d` also take
    `１０３４０` and `١٠٣٤٠`, signs, spaces and `_`, and int() raises past 4,300 digits.
    """
    if not isinstance(digits, str) or not 0 < len(digits) <= max_digits:
        return None
    return int(digits) if digits.isascii() and digits.isdigit() else None


def id_text(value: object) -> str | None:
    """The id text of one cell; None for a missing cell (None, NaN, pandas NA, blank text).

    Raises InputError for a value that is not an id (a fraction, inf, a boolean, a list…); the message
    reads after "id " and the caller adds the file and row.
    """
    if value is None:
        return None
    if isinstance(value, str):
        return value if value.strip() else None
    if type(value).__module__ == "numpy" and hasattr(value, "item"):  # numpy.int64, numpy.bool_…
        return id_text(value.item())
    if isinstance(value, bool):
        raise InputError(f"holds the boolean {value}, not an id; ids must be whole numbers or text")
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _float_text(value)
    if _is_pandas_missing(value):
        return None
    raise InputError(f"holds a {type(value).__name__} value, not an id; ids must be whole numbers or text")


def _float_text(value: float) -> str | None:
    if math.isnan(value):
        return None  # how pandas and parquet readers spell a missing number
    if not value.is_integer():  # fractions and ±inf
        raise InputError(f"holds the number {value}, not an id; ids must be whole numbers or text")
    if abs(value) > _EXACT_FLOAT_LIMIT:
        raise InputError(f"holds the number {value:.17g}, too large to be stored exactly as a float; "
                         "store ids as whole numbers or text")
    return str(int(value))


def _is_pandas_missing(value: object) -> bool:
    """pandas.NA / pandas.NaT. Only a loaded pandas makes them, so this never imports it."""
    pandas = sys.modules.get("pandas")
    return pandas is not None and (value is pandas.NA or value is pandas.NaT)
