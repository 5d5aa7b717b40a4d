"""The library's entry points, one per command; the CLI (`overlap.cli`) is a thin layer over these.

    from overlap.api import compare, filter_train, keep_mask, matrix, text_check, audit, named

`compare` (`overlap.api.compare`), `filter_train` and `keep_mask` (`overlap.api.filtering`), `matrix`
(`overlap.api.matrix`), the n-gram text check `text_check` (`overlap.text.api`) and `audit` (`overlap.audit`);
`named` names an in-memory dataset (`overlap.sources.formats.in_memory`). The results they return
(`CompareResult`, `BenchComparison`, `MatrixResult`) are defined in `overlap.results`, where every layer can
read them; `filter_train` returns a `FilteredSplit` (`overlap.api.filtered`: comparison, decision, report).
"""

from ..audit import audit
from ..results import BenchComparison, CompareResult, MatrixResult
from ..sources.formats.in_memory import named
from ..text.api import text_check
from .compare import compare
from .filtered import FilteredSplit
from .filtering import filter_train, keep_mask
from .matrix import matrix

__all__ = ["BenchComparison", "CompareResult", "FilteredSplit", "MatrixResult", "audit", "compare", "filter_train",
           "keep_mask", "matrix", "named", "text_check"]
