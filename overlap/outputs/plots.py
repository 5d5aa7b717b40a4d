"""matplotlib as the report and the atlas draw with it: its non-interactive backend, loaded so that drawing
writes nothing outside the output folder.

matplotlib keeps a list of the machine's fonts in its cache folder (`~/.cache/matplotlib`) and writes it
there on its first import. A user who has that folder (matplotlib used before) keeps it; for one who has not,
and has not chosen a folder with MPLCONFIGDIR, the import builds the list in a temporary folder removed at
exit (~0.2 s more to draw the first plot of a process), and nothing is left in their home folder.
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
from typing import Any


def pyplot() -> Any:
    """matplotlib.pyplot on the Agg backend, or None when matplotlib is not installed."""
    try:
        folder = _private_folder()
        if folder is not None:
            os.environ["MPLCONFIGDIR"] = folder
            try:
                _import_pyplot()  # the font list is made now, once for the process, in `folder`
            finally:
                del os.environ["MPLCONFIGDIR"]
        return _import_pyplot()
    except ImportError:
        return None


def _private_folder() -> str | None:
    """A temporary folder for matplotlib's first import in this process, or None: matplotlib loaded already,
    a folder chosen with MPLCONFIGDIR, a cache of the user's to use, or no temporary folder to be had (then
    matplotlib finds a place itself, as it does anywhere)."""
    if "matplotlib" in sys.modules or "MPLCONFIGDIR" in os.environ or os.path.isdir(_cache()):
        return None
    try:
        folder = tempfile.mkdtemp(prefix="overlap-matplotlib-")
    except OSError:
        return None
    atexit.register(shutil.rmtree, folder, True)
    return folder


def _import_pyplot() -> Any:
    import matplotlib  # imported here: heavy, loaded only to draw (and optional at run time)

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _cache() -> str:
    """Where matplotlib keeps its cache when MPLCONFIGDIR is not set (`matplotlib.get_cachedir` on Linux and
    macOS: the XDG cache folder)."""
    return os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
                        "matplotlib")
