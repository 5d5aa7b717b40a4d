"""Where the data files shipped with overlap are: the demo inputs and the identity mappings.

They live at the top of the repository (`data/`, `mappings/`) and pyproject.toml maps those folders to the
packages `overlap._data` and `overlap._mappings`, so `importlib.resources` finds them the same way in an
editable install (the repository) and in an installed wheel.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path


def _folder(package: str) -> Path:
    root = files(package)
    if not isinstance(root, Path):  # e.g. a zip import: the demo reads folders, so it needs real files
        raise RuntimeError(f"{package} is not installed as plain files ({root!r})")
    return root


def demo_root() -> Path:
    """The demo datasets' folder (`data/demo/`): one subfolder per dataset name."""
    return _folder("overlap._data") / "demo"


def renames_file() -> Path:
    """The known GitHub repository renames (`mappings/repo_renames.csv`)."""
    return _folder("overlap._mappings") / "repo_renames.csv"


def packages_file() -> Path:
    """The repository → package table of the audit's network route (`mappings/repo_packages.csv`): the one beside
    these sources when they are a checkout (an editable install made from another checkout would otherwise read
    that checkout's table), else the installed one."""
    beside = Path(__file__).resolve().parents[1] / "mappings" / "repo_packages.csv"
    return beside if beside.is_file() else _folder("overlap._mappings") / "repo_packages.csv"
