"""Package indexes as the agent's installer sees them, read without installing or executing anything.

One module per protocol, each a class with ``releases(name) -> list[Release]`` (one archive per version, the
one the check reads): ``pypi`` (the simple API pip speaks: PEP 503 HTML or PEP 691 JSON, PEP 700 upload times,
PEP 592 yanking, hashes verified), ``npm`` (the registry's package document: ``time`` map, tarball
``integrity``) and ``goproxy`` (the module proxy protocol: ``@v/list``, ``@v/VERSION.info``,
``@v/VERSION.zip``). ``archive`` reads an archive's members as a stream; ``cache`` keeps archives by digest;
``config`` finds the index URL the user's own tools are configured with.
"""

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


def client(ecosystem: str, url: str, cache):
    """The index client of an ecosystem over ``cache`` (an :class:`~.cache.IndexCache`)."""
    if ecosystem == "pypi":
        from .pypi import SimpleIndex

        return SimpleIndex(url, cache)
    if ecosystem == "npm":
        from .npm import NpmRegistry

        return NpmRegistry(url, cache)
    if ecosystem == "go":
        from .goproxy import GoProxy

        return GoProxy(url, cache)
    raise ValueError(f"unknown ecosystem {ecosystem!r} (known: {', '.join(ECOSYSTEMS)})")
