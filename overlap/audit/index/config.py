"""The index URL each ecosystem's own tools are configured with, so the check reads what the agent's
installer would: pip (``PIP_INDEX_URL``, else ``index-url`` in ``PIP_CONFIG_FILE``, the user's and the site's
pip.conf), npm (``NPM_CONFIG_REGISTRY``, else ``registry=`` in ``~/.npmrc``; an ``//host/:_authToken=`` line
there is the only credential read) and Go (the first proxy of ``GOPROXY`` that is a URL). ``--index-url``
overrides all of them. Credentials are never printed: every URL shown goes through ``http.redact``.
"""

from __future__ import annotations

import configparser
import os
import urllib.parse
from pathlib import Path

DEFAULTS = {"pypi": "https://pypi.org/simple/", "npm": "https://registry.npmjs.org/",
            "go": "https://proxy.golang.org/"}


def _pip_files() -> list[Path]:
    home = Path.home()
    files = [Path("/etc/pip.conf"), Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config") / "pip" / "pip.conf",
             home / ".pip" / "pip.conf"]
    if os.environ.get("VIRTUAL_ENV"):
        files.append(Path(os.environ["VIRTUAL_ENV"]) / "pip.conf")
    if os.environ.get("PIP_CONFIG_FILE"):
        files.append(Path(os.environ["PIP_CONFIG_FILE"]))
    return files


def pip_index() -> str | None:
    if os.environ.get("PIP_INDEX_URL", "").strip():
        return os.environ["PIP_INDEX_URL"].strip()
    found = None
    for path in _pip_files():  # later files win, as in pip
        cp = configparser.ConfigParser(interpolation=None)
        try:
            cp.read(path, encoding="utf-8")
        except (configparser.Error, OSError, UnicodeDecodeError):
            continue
        for section in ("global", "install"):
            if cp.has_option(section, "index-url"):
                found = cp.get(section, "index-url").strip() or found
    return found


def _npmrc() -> dict[str, str]:
    out: dict[str, str] = {}
    try:
        text = (Path.home() / ".npmrc").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return out
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep and not line.lstrip().startswith(("#", ";")):
            out[key.strip()] = value.strip()
    return out


def npm_registry() -> str | None:
    return os.environ.get("NPM_CONFIG_REGISTRY", "").strip() or _npmrc().get("registry")


def npm_auth() -> dict[str, str]:
    """host → Authorization value from ``//host/…:_authToken=`` lines of ``~/.npmrc``."""
    out = {}
    for key, value in _npmrc().items():
        if key.startswith("//") and key.endswith(":_authToken") and value and "${" not in value:
            host = urllib.parse.urlsplit("https:" + key[: -len(":_authToken")]).hostname
            if host:
                out[host.lower()] = f"Bearer {value}"
    return out


def go_proxy() -> str | None:
    raw = os.environ.get("GOPROXY", "")
    for item in raw.replace("|", ",").split(","):
        item = item.strip()
        if item and item not in ("direct", "off"):
            return item
    return None


def index_url(ecosystem: str, given: str | None = None) -> str:
    """``--index-url`` if given, else the configured one, else the public default."""
    if given:
        if "://" not in given and os.path.isdir(given):  # a local folder laid out as an index
            return Path(os.path.abspath(given)).as_uri() + "/"
        return given
    found = {"pypi": pip_index, "npm": npm_registry, "go": go_proxy}[ecosystem]()
    return found or DEFAULTS[ecosystem]
