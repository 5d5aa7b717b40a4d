"""Loading the compiled kernels skips numba's BLAS probe (its import of scipy.linalg), and leaves scipy whole."""

import subprocess
import sys

CHILD = """
import sys
import numpy as np, pyarrow as pa
from overlap.keyjoin.hashing import hash64, _kernel
assert _kernel() is not None
hashes = hash64(pa.array([f"owner__repo-{n}" for n in range(100_000)]))
print(len(set(hashes.tolist())), "scipy.linalg" in sys.modules)
import scipy.linalg
print(float(scipy.linalg.det(np.eye(2))))
"""


def test_kernels_load_without_importing_scipy_linalg_and_scipy_still_imports():
    done = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["100000", "False", "1.0"]
