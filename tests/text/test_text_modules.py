"""The n-gram modules as a whole: the public names of ``overlap.text.ngram``, and a light worker import."""

import subprocess
import sys

from overlap.text import ngram as ngrams


def test_every_public_name_is_importable_from_ngrams():
    missing = [name for name in ngrams.__all__ if not hasattr(ngrams, name)]
    assert missing == []
    assert {"build_index", "scan", "scan_chunk", "scan_long_row", "BenchIndex", "ScanResult"} <= set(ngrams.__all__)


def test_scan_worker_imports_no_pandas():
    """A spawned scan worker imports its module fresh: pandas there would cost every worker start."""
    code = "import sys, overlap.text.ngram.workers; print('pandas' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
