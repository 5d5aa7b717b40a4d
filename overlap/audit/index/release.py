"""A release as every index client lists it: its version, the one archive the check reads, and when it was
uploaded."""

from __future__ import annotations

from dataclasses import dataclass, field

from packaging.version import InvalidVersion, Version

ECOSYSTEMS = ("pypi", "npm", "go")
MAX_RELEASES = 20_000  # versions listed for one package past this: the page is refused (no project has that many)


@dataclass
class Release:
    version: str
    url: str
    filename: str
    kind: str  # sdist | wheel | npm-tarball | go-zip
    digests: dict[str, str] = field(default_factory=dict)
    size: int | None = None
    upload_time: str | None = None  # ISO 8601, UTC
    upload_time_source: str | None = None  # index | last-modified
    yanked: str | None = None  # None, or the reason ("" when the index gave none)

    @property
    def parsed(self) -> Version:
        return parse_version(self.version)


def parse_version(text: str) -> Version:
    return Version(text.strip().lstrip("vV") if text.strip()[:1] in "vV" else text)


def version_or_none(text: str) -> Version | None:
    try:
        return parse_version(text)
    except InvalidVersion:
        return None
