"""Which package a repository publishes: the option, the task record, its own packaging metadata at the base
commit, else `mappings/repo_packages.csv` (never guessed).

Read as text, never run: ``pyproject.toml`` ``[project] name`` (tomllib), ``setup.cfg`` ``[metadata] name``
(configparser, no interpolation), ``setup.py`` ``setup(name=...)`` (ast: a string literal, or a module-level
name bound to one), ``package.json`` ``name`` (json; a ``"private": true`` package is never published, so it
names nothing), ``go.mod`` ``module``. Files are read from the top of the tree only: a monorepo's nested
packages are the mapping's business.
"""

from __future__ import annotations

import ast
import configparser
import csv
import json
import re
import tempfile
import tomllib
from pathlib import Path, PurePosixPath

from ..errors import InputError
from ..resources import packages_file
from .index import ECOSYSTEMS

# the order a name is taken in when a tree has several (the fix's own ecosystem first, see ``pick``)
FILES = (("pyproject.toml", "pypi"), ("setup.cfg", "pypi"), ("setup.py", "pypi"), ("package.json", "npm"),
         ("go.mod", "go"))
FILE_LIMIT = 1 << 20
SUFFIX_ECOSYSTEM = {".py": "pypi", ".pyx": "pypi", ".js": "npm", ".mjs": "npm", ".cjs": "npm", ".ts": "npm",
                    ".tsx": "npm", ".jsx": "npm", ".go": "go"}
_MODULE = re.compile(r"^\s*module\s+(\"[^\"]+\"|\S+)", re.MULTILINE)


def _text(data: bytes) -> str | None:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None


def _pyproject(text: str) -> str | None:
    try:
        project = tomllib.loads(text).get("project")
    except (tomllib.TOMLDecodeError, RecursionError):
        return None
    name = project.get("name") if isinstance(project, dict) else None
    return name if isinstance(name, str) else None


def _setup_cfg(text: str) -> str | None:
    parser = configparser.RawConfigParser(strict=False)
    try:
        parser.read_string(text)
        return parser.get("metadata", "name", fallback=None)
    except configparser.Error:
        return None


def _setup_py(text: str) -> str | None:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    bound: dict[str, str] = {}  # NAME = "literal" at module level: setup(name=NAME) is common
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    bound[t.id] = node.value.value
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        called = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
        if called != "setup":
            continue
        for kw in node.keywords:
            if kw.arg != "name":
                continue
            if isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str):
                return kw.value.value
            if isinstance(kw.value, ast.Name):
                return bound.get(kw.value.id)
    return None


def _package_json(text: str) -> str | None:
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(doc, dict) or doc.get("private") is True:
        return None
    name = doc.get("name")
    return name if isinstance(name, str) else None


def _go_mod(text: str) -> str | None:
    found = _MODULE.search(re.sub(r"//[^\n]*", "", text))
    return found.group(1).strip('"') if found else None


PARSERS = {"pyproject.toml": _pyproject, "setup.cfg": _setup_cfg, "setup.py": _setup_py,
           "package.json": _package_json, "go.mod": _go_mod}


def names(files: dict[str, bytes]) -> list[tuple[str, str, str]]:
    """(ecosystem, name, file) for each metadata file that names a package, in ``FILES`` order."""
    out = []
    for fname, eco in FILES:
        data = files.get(fname)
        text = _text(data) if data is not None and len(data) <= FILE_LIMIT else None
        name = PARSERS[fname](text) if text is not None else None
        if name and name.strip() and not any(c.isspace() for c in name.strip()):
            out.append((eco, name.strip(), fname))
    return out


def pick(found: list[tuple[str, str, str]], ecosystems: set[str]) -> tuple[str, str, str] | None:
    """The name to use: the first in the fix's own ecosystem (by its files' suffixes), else the first."""
    for item in found:
        if item[0] in ecosystems:
            return item
    return found[0] if found else None


def _git_dir(folder: Path) -> Path | None:
    dot = folder / ".git"
    if dot.is_dir():
        return dot
    if dot.is_file():
        text = dot.read_text(encoding="utf-8", errors="replace").strip()
        if text.startswith("gitdir:"):
            target = Path(text[7:].strip())
            target = target if target.is_absolute() else folder / target
            return target if target.is_dir() else None
    if (folder / "HEAD").is_file() and (folder / "objects").is_dir():
        return folder
    return None


def read_at_base(folder: str | Path, base: str | None, git: str | None = None) -> dict[str, bytes]:
    """The metadata files at the top of ``base``'s tree in the repository at ``folder`` (empty when there is no
    repository or no base), read with the audit's hardened git (``cat-file --batch``: nothing from the repo
    runs)."""
    from .git.cmd import GitError, GitRunner

    gitdir = _git_dir(Path(folder))
    if gitdir is None or not base or not re.fullmatch(r"[0-9a-fA-F]{7,64}", base):
        return {}
    with tempfile.TemporaryDirectory(prefix="overlap-meta-") as home:
        runner = GitRunner(Path(home), binary=git, timeout=60)
        query = "".join(f"{base}:{name}\n" for name, _ in FILES).encode()
        try:
            out = runner.run(["cat-file", "--batch"], git_dir=gitdir, input=query, max_output=8 << 20).stdout
        except GitError:
            return {}
    return _parse_batch(bytes(out), [name for name, _ in FILES])


def _parse_batch(out: bytes, names_asked: list[str]) -> dict[str, bytes]:
    found, pos = {}, 0
    for name in names_asked:
        end = out.find(b"\n", pos)
        if end < 0:
            break
        head = out[pos:end].split()
        pos = end + 1
        if len(head) == 3 and head[2].isdigit():  # "<oid> <type> <size>", then the content (a tree's too)
            size = int(head[2])
            if head[1] == b"blob":
                found[name] = out[pos:pos + size]
            pos += size + 1
    return found


def _mapping_rows() -> list[dict]:
    with open(packages_file(), encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def package_for(record: dict, option: str | None, fix_paths: list[str],
                metadata: dict[str, bytes] | None = None) -> tuple[str, str, str] | None:
    """(ecosystem, name, where it came from) or None when no package is known (never guessed): the option, the
    record's ``package``, the project's own packaging metadata at the base (``metadata``: file name -> bytes),
    the mapping."""
    def split(value: str) -> tuple[str | None, str]:
        eco, sep, name = value.partition(":")
        if sep and eco.lower() in ECOSYSTEMS:
            return eco.lower(), name.strip()
        return None, value.strip()

    by_suffix = {SUFFIX_ECOSYSTEM.get(PurePosixPath(p).suffix) for p in fix_paths} - {None}
    for value, source in ((option, "option"), (record.get("package"), "record")):
        if isinstance(value, str) and value.strip():
            eco, name = split(value)
            eco = eco or (record.get("ecosystem") if record.get("ecosystem") in ECOSYSTEMS else None)
            if eco is None and len(by_suffix) == 1:
                eco = next(iter(by_suffix))
            if eco is None:
                raise InputError(f"--package {value}: say which index, e.g. pypi:{name}, npm:{name} or go:{name}")
            return eco, name, source
    own = pick(names(metadata or {}), by_suffix)
    if own is not None:
        return own[0], own[1], f"metadata:{own[2]}"
    repo = str(record.get("repo") or "").strip().lower()
    if not repo:
        return None
    for row in _mapping_rows():
        if row["repo"].strip().lower() == repo:
            return row["ecosystem"].strip(), row["package"].strip(), "mapping"
    return None
