"""Package indexes as the agent's installer sees them, read without installing or executing anything.

One module per protocol, each a class with ``releases(name) -> list[Release]`` (one archive per version, the
one the check reads): ``pypi`` (the simple API pip speaks: PEP 503 HTML or PEP 691 JSON, PEP 700 upload times,
PEP 592 yanking, hashes verified), ``npm`` (the registry's package document: ``time`` map, tarball
``integrity``) and ``goproxy`` (the module proxy protocol: ``@v/list``, ``@v/VERSION.info``,
``@v/VERSION.zip``). ``archive`` reads an archive's members as a stream; ``cache`` keeps archives by digest;
``config`` finds the index URL the user's own tools are configured with.
"""

from __future__ import annotations

from .release import ECOSYSTEMS, MAX_RELEASES, Release, parse_version, version_or_none

__all__ = ["ECOSYSTEMS", "MAX_RELEASES", "Release", "client", "parse_version", "version_or_none"]


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
