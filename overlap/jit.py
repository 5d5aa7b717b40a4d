"""numba, as this package's compiled kernels load it: without numba's BLAS probe.

The first kernel a process loads makes numba set up its CPU target, which imports `numba.np.arraymath`; that
module probes for BLAS by importing `scipy.linalg` (0.3-0.5 CPU s, a twentieth of a 10M-row key scan) to
choose how a `np.dot` inside compiled code is done. No kernel here uses BLAS, so arraymath is imported first
with the probe's module marked absent: the probe fails at once and numba's dot falls back to its own loop
(same results). Nothing else changes: the mark is removed at once, so scipy imports as usual afterwards, and
where scipy.linalg is already loaded (a chance baseline ran first) nothing is done.
"""

from __future__ import annotations

import sys

_PROBED = "scipy.linalg.cython_blas"


def _import_arraymath_without_blas_probe() -> None:
    if "numba.np.arraymath" in sys.modules or "scipy.linalg" in sys.modules:
        return
    sys.modules[_PROBED] = None  # type: ignore[assignment]  # an import of it raises ImportError
    try:
        import numba.np.arraymath  # noqa: F401
    finally:
        if sys.modules.get(_PROBED, 0) is None:
            del sys.modules[_PROBED]


_import_arraymath_without_blas_probe()

import numba  # noqa: E402
from numba import njit  # noqa: E402

__all__ = ["numba", "njit"]
