"""Registry references in skopeo's ``docker://`` transport syntax: ``docker://[HOST[:PORT]/]PATH[:TAG][@DIGEST]``.

Names are normalised as docker does: a first component without ``.`` or ``:`` (and not ``localhost``) is
part of the path on Docker Hub, and a one-component Docker Hub path gets ``library/``. The grammar is
the distribution project's reference grammar, so a name that docker refuses is refused here too, before
any network access.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

from ...errors import InputError

SCHEME = "docker://"
DOCKER_HUB = "docker.io"
DOCKER_HUB_API = "registry-1.docker.io"  # docker.io is served from here
# one Docker Hub auth-file key is historic: docker writes it for `docker login` without a host
DOCKER_HUB_AUTH_KEYS = ("https://index.docker.io/v1/", "index.docker.io", "docker.io", "registry-1.docker.io")

_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_PATH = re.compile(rf"{_COMPONENT}(?:/{_COMPONENT})*")
_LABEL = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_HOST = re.compile(rf"(?:{_LABEL}(?:\.{_LABEL})*|\[[0-9a-fA-F:.]+\])(?::[0-9]{{1,5}})?")
_TAG = re.compile(r"[\w][\w.-]{0,127}")
_DIGEST = re.compile(r"sha256:[a-f0-9]{64}")


@dataclass(frozen=True)
class RegistryRef:
    host: str  # as written, normalised: docker.io for Docker Hub; may hold :PORT or an [IPv6] literal
    repo: str  # the repository path, library/ added on Docker Hub
    tag: str | None
    digest: str | None
    given: str  # the reference as the user wrote it (for messages and the report)

    @property
    def api_host(self) -> str:
        """host[:port] that serves the distribution API."""
        return DOCKER_HUB_API if self.host == DOCKER_HUB else self.host

    @property
    def reference(self) -> str:
        """What goes after /manifests/: the digest when given (it pins the content), else the tag."""
        return self.digest or self.tag or "latest"

    @property
    def hostname(self) -> str:
        """The host without port or brackets."""
        h = self.api_host
        if h.startswith("["):
            return h[1:h.index("]")]
        return h.rsplit(":", 1)[0] if ":" in h else h

    def canonical(self) -> str:
        return f"{self.host}/{self.repo}" + (f":{self.tag}" if self.tag else "") + \
            (f"@{self.digest}" if self.digest else "")


def is_registry_ref(value: object) -> bool:
    return isinstance(value, str) and value.startswith(SCHEME)


def parse_ref(given: str) -> RegistryRef:
    """Parse ``docker://…``; a malformed one is an InputError naming it and the expected form."""
    def bad(why: str) -> InputError:
        return InputError(f"{given}: {why}; expected docker://[HOST[:PORT]/]REPO[:TAG] or "
                          "docker://[HOST[:PORT]/]REPO@sha256:DIGEST (e.g. docker://ghcr.io/org/task:1)")

    if not is_registry_ref(given):
        raise bad("not a docker:// reference")
    rest = given[len(SCHEME):]
    if not rest or any(c.isspace() for c in rest) or rest.startswith("/"):
        raise bad("no image name")
    name, _, digest = rest.partition("@")
    if digest and not _DIGEST.fullmatch(digest):
        raise bad("the digest is not sha256: followed by 64 lowercase hex digits")
    slash = name.rfind("/")
    colon = name.rfind(":")
    tag = None
    if colon > slash:  # a colon after the last slash is a tag, not a port
        name, tag = name[:colon], name[colon + 1:]
        if not _TAG.fullmatch(tag):
            raise bad(f"bad tag {tag!r}")
    first, sep, remainder = name.partition("/")
    if sep and ("." in first or ":" in first or first == "localhost" or first.startswith("[")):
        host, path = first, remainder
        port = host.rpartition(":")[2] if not host.endswith("]") else ""
        if not _HOST.fullmatch(host) or (port.isdigit() and not 0 < int(port) < 65536):
            raise bad(f"bad registry host {host!r}")
    else:
        host, path = DOCKER_HUB, name
    if host in ("index.docker.io", "registry-1.docker.io"):
        host = DOCKER_HUB
    if not _PATH.fullmatch(path or "") or len(path) > 255:
        raise bad(f"bad repository name {path!r} (lowercase letters, digits and . _ - separators)")
    if host == DOCKER_HUB and "/" not in path:
        path = "library/" + path
    if tag is None and not digest:
        tag = "latest"
    return RegistryRef(host, path, tag, digest or None, given)


def is_loopback(hostname: str) -> bool:
    """localhost, 127.0.0.0/8 and ::1: the only hosts spoken to over plain HTTP without --insecure-registry."""
    if hostname == "localhost":
        return True
    try:
        return ipaddress.ip_address(hostname).is_loopback
    except ValueError:
        return False
