"""Registry credentials from the user's container auth files (the files `docker login`, `podman login`
and `skopeo login` write), read only: ``auths.<key>.auth`` = base64 ``user:password``.

Order (the containers tools' order): ``REGISTRY_AUTH_FILE`` alone when set; else
``$XDG_RUNTIME_DIR/containers/auth.json``, ``$XDG_CONFIG_HOME/containers/auth.json``,
``$DOCKER_CONFIG/config.json`` (default ``~/.docker/config.json``); the first file with an entry for the
host wins. A key may name ``host/namespace``: the longest match of the repository wins. Credential helpers
(``credsStore``, ``credHelpers``) are programs and are never run: the caller is told instead.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
from pathlib import Path

from .reference import DOCKER_HUB, DOCKER_HUB_AUTH_KEYS, RegistryRef


def auth_files() -> list[Path]:
    explicit = os.environ.get("REGISTRY_AUTH_FILE")
    if explicit:
        return [Path(explicit)]
    out = []
    if os.environ.get("XDG_RUNTIME_DIR"):
        out.append(Path(os.environ["XDG_RUNTIME_DIR"]) / "containers" / "auth.json")
    config_home = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    out.append(Path(config_home) / "containers" / "auth.json")
    docker = os.environ.get("DOCKER_CONFIG") or os.path.join(os.path.expanduser("~"), ".docker")
    out.append(Path(docker) / "config.json")
    return out


def _read(path: Path) -> bytes | None:
    """The user's own file (a symlink into a dotfiles folder is fine), at most 4 MiB."""
    try:
        if not path.is_file() or path.stat().st_size > 4 << 20:
            return None
        return path.read_bytes()
    except OSError:
        return None


def _norm_key(key: str) -> str:
    """``https://host/v1/`` → ``host``; ``host/ns`` stays (containers auth files scope by namespace)."""
    for prefix in ("https://", "http://"):
        if key.startswith(prefix):
            key = key[len(prefix):].split("/", 1)[0]  # a URL key is a whole registry
            break
    key = key.rstrip("/")
    return DOCKER_HUB if key in DOCKER_HUB_AUTH_KEYS or key.startswith("index.docker.io") else key


def _decode(entry: dict) -> tuple[str, str] | None:
    raw = entry.get("auth")
    if not isinstance(raw, str) or not raw:
        return None
    try:
        user, sep, password = base64.b64decode(raw, validate=False).decode("utf-8").partition(":")
    except (binascii.Error, UnicodeDecodeError):
        return None
    return (user, password) if sep and user else None


def lookup(ref: RegistryRef) -> tuple[tuple[str, str] | None, str | None]:
    """((user, password) or None, a note for an auth error message: which helper keeps the credentials)."""
    wanted = f"{ref.host}/{ref.repo}"
    note = None
    for path in auth_files():
        data = _read(path)
        if not data:
            continue
        # a file that cannot be read as one, or an entry for this registry without a usable `auth`, is said in
        # the 401 message: "no credentials" would send the user to log in again rather than to the file
        try:
            doc = json.loads(data)
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
            note = note or f"{path} is not valid JSON (not read)"
            continue
        if not isinstance(doc, dict):
            note = note or f"{path} is not a JSON object (not read)"
            continue
        auths = doc.get("auths") if isinstance(doc.get("auths"), dict) else {}
        best, best_len, broken = None, -1, None
        for key, entry in auths.items():
            if not isinstance(key, str):
                continue
            k = _norm_key(key)
            if (wanted == k or wanted.startswith(k + "/")) and len(k) > best_len:
                creds = _decode(entry) if isinstance(entry, dict) else None
                if creds is not None:
                    best, best_len = creds, len(k)
                elif not isinstance(entry, dict) or entry.get("auth"):  # `{}` is what a login through a helper writes
                    broken = key
        if best is not None:
            return best, None
        helpers = doc.get("credHelpers") if isinstance(doc.get("credHelpers"), dict) else {}
        helper = helpers.get(ref.host) or doc.get("credsStore")
        if isinstance(helper, str) and helper and note is None:
            note = f"{path} keeps credentials in the helper docker-credential-{helper}, which overlap does not run"
        if broken is not None and note is None:
            note = f"{path}: the entry {broken!r} has no base64 user:password in 'auth' (not used)"
    return None, note
