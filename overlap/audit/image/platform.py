"""Which platform of an image is audited: an index entry's platform, the one ``--platform`` asks for (default
linux/amd64), and the check that a single-platform image is that one."""

from __future__ import annotations

from ...errors import InputError
from .model import Image

DEFAULT_PLATFORM = "linux/amd64"


def platform_of(desc: dict) -> str:
    """An index entry's platform as `os/architecture[/variant]`."""
    p = desc.get("platform") if isinstance(desc.get("platform"), dict) else {}
    return "/".join(str(x) for x in (p.get("os"), p.get("architecture"), p.get("variant")) if x)


def wanted_platform(platform: str | None) -> list[str]:
    """`--platform` (default linux/amd64) as its parts, or one line saying how to write it."""
    want = (platform or DEFAULT_PLATFORM).split("/")
    if not 2 <= len(want) <= 3 or not all(want):
        raise InputError(f"--platform {platform}: give os/architecture[/variant], e.g. linux/amd64 or "
                         "linux/arm64/v8")
    return want


def check_platform(img: Image, platform: str | None, where: str) -> None:
    """An image of one platform (no index to choose from) audited for an explicit `--platform`: its config
    must say that platform, else the audit would read another platform's files than the one asked for."""
    if platform is None or img.platform is not None:
        return
    want = wanted_platform(platform)
    have = platform_of({"platform": img.config})
    if have and have.split("/")[:len(want)] != want[:len(have.split("/"))]:
        raise InputError(f"{where}: the image is for {have}, not {'/'.join(want)}; leave out --platform or give "
                         f"--platform {have}")


def choose_platform(descs: list[dict], platform: str | None, where: str) -> dict:
    """The entry of an image index for `platform` (`os/architecture[/variant]`, default linux/amd64; an entry
    whose platform starts with it, so linux/arm64 takes linux/arm64/v8); without --platform, an index of one
    entry is that entry. Else one line naming the platforms the index has."""
    want = wanted_platform(platform)
    match = [d for d in descs if platform_of(d).split("/")[:len(want)] == want]
    if not match and platform is None and len(descs) == 1:
        match = descs
    if not match:
        have = ", ".join(sorted({platform_of(d) or "?" for d in descs})) or "none"
        raise InputError(f"{where}: no manifest for platform {'/'.join(want)} (the index has: {have}); "
                         "choose one with --platform")
    return match[0]

