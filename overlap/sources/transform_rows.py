"""The row transforms declarations name (`extra.transform`), each a few lines: see `transforms`."""

from __future__ import annotations

from collections.abc import Callable

from .spec import DatasetSpec
from .transforms import Transform

TRANSFORMS: dict[str, Callable[[DatasetSpec], Transform]] = {}
