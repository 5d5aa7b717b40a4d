"""Who the agent runs as, and whether it can read a file.

The agent user is ``--agent-user NAME|UID``, else the image config's ``User``, else unknown: then the agent is
assumed to run as root, and the report says so. A name is looked up in the image's own ``/etc/passwd`` (and
its groups in ``/etc/group``). Readability follows the kernel's rule: root reads everything; anyone else needs
the read bit of the class they fall in (owner, group, other) on the file and the search bit on every folder
above it. Owners and modes come from the tar headers in an image (the copy on disk is the tool's own) and from
``lstat`` in a folder or root filesystem."""

from __future__ import annotations

import os
import posixpath
import stat
from dataclasses import dataclass, field

from ..context import Ctx
from ..targets import inside
from ..tree import TooLarge, read_regular

NO_USER_HINT = "the image sets no user: run the agent as a non-root user"
# a folder no tar header names (a parent made implicitly) is created by runtimes as root, mode 0755
IMPLICIT_DIR = (0, 0, 0o755)


@dataclass(frozen=True)
class AgentUser:
    spec: str | None  # as given (`1000`, `agent`, `agent:agent`), None when unknown
    source: str  # option | config | default
    uid: int | None  # None: a name the image's /etc/passwd does not know
    gids: frozenset[int] = field(default_factory=frozenset)

    @property
    def declared(self) -> bool:
        return self.source != "default"

    @property
    def is_root(self) -> bool:
        return self.uid == 0

    def describe(self) -> dict:
        shown = {"option": "--agent-user", "config": "the image config's User",
                 "default": "none set: assumed root"}[self.source]
        return {"user": self.spec if self.spec is not None else "root", "uid": self.uid, "source": shown}


def _table(ctx: Ctx, path: str) -> list[list[str]]:
    root = ctx.fsroot
    if root is None:
        return []
    p = inside(root, path)
    try:
        data = read_regular(p, 1 << 20) if p is not None else None
    except TooLarge:
        data = None
    return [ln.split(":") for ln in (data or b"").decode("utf-8", "replace").splitlines() if ln.count(":") >= 2]


def _number(text: str) -> int | None:
    return int(text) if text.isdigit() else None


def agent_user(ctx: Ctx) -> AgentUser:
    """The agent's user for this target (cached)."""
    cached = ctx.__dict__.get("_agent_user")
    if cached is not None:
        return cached
    spec, source = ctx.agent_user, "option"
    if not spec and ctx.image is not None:
        spec, source = str((ctx.image.config.get("config") or {}).get("User") or "") or None, "config"
    if not spec:
        user = AgentUser(None, "default", 0, frozenset({0}))
    else:
        name, _, group = spec.partition(":")
        passwd = _table(ctx, "/etc/passwd")
        groups = _table(ctx, "/etc/group")
        uid = _number(name)
        gid = None
        for row in passwd:
            if (uid is None and row[0] == name) or (uid is not None and _number(row[2]) == uid):
                uid, gid = _number(row[2]), _number(row[3]) if len(row) > 3 else None
                name = row[0]
                break
        if group:
            gid = _number(group)
            if gid is None:
                gid = next((_number(r[2]) for r in groups if r[0] == group), None)
        gids = {g for g in (gid,) if g is not None}
        gids |= {g for r in groups if len(r) > 3 and name in r[3].split(",") and (g := _number(r[2])) is not None}
        user = AgentUser(spec, source, uid, frozenset(gids))
    ctx._agent_user = user
    return user


def owner_mode(ctx: Ctx, rel: str) -> tuple[int, int, int]:
    """(uid, gid, permission bits) of a scanned path (relative to the scan scope)."""
    if ctx.merged is not None:
        e = ctx.merged.entries.get(rel.strip("/"))
        return (e.uid, e.gid, e.mode & 0o7777) if e is not None else IMPLICIT_DIR
    base = ctx.scope
    try:
        st = os.lstat(base / rel) if base is not None else None
    except OSError:
        st = None
    return (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) if st is not None else IMPLICIT_DIR


def _allows(user: AgentUser, uid: int, gid: int, mode: int, bit: int) -> bool:
    """Whether ``user`` has the permission ``bit`` (4 read, 1 search) on an entry."""
    if user.uid is not None and user.uid == uid:
        return bool(mode & (bit << 6))
    if gid in user.gids:
        return bool(mode & (bit << 3))
    return bool(mode & bit)


def readable(ctx: Ctx, rel: str, user: AgentUser) -> bool:
    """Whether ``user`` can read the scanned file ``rel``: read on the file, search on each folder above."""
    if user.is_root:
        return True
    rel = rel.strip("/")
    parent = posixpath.dirname(rel)
    folders = []
    while parent:
        folders.append(parent)
        parent = posixpath.dirname(parent)
    if ctx.fsroot is None or ctx.merged is None:  # the scope's own folder counts too
        folders.append("")
    for folder in folders:
        if not _allows(user, *owner_mode(ctx, folder), 1):
            return False
    return _allows(user, *owner_mode(ctx, rel), 4)


def who_reads(ctx: Ctx, rel: str) -> dict:
    """The access evidence of a file: its owner and mode, the agent, whether the agent can read it and whether
    any user that is not root can."""
    user = agent_user(ctx)
    uid, gid, mode = owner_mode(ctx, rel)
    anyone = AgentUser("nobody", "default", 65534, frozenset({65534}))
    return {"owner": uid, "group": gid, "mode": f"{mode:04o}", "agent": user.describe(),
            "readable_by_agent": readable(ctx, rel, user), "readable_by_non_root": readable(ctx, rel, anyone)}


def grade_by_reader(ctx: Ctx, access: dict, readable_grade: str) -> tuple[str, str | None]:
    """(severity, hint) of an answer carrier: ``readable_grade`` when the agent can read it (an unknown agent
    counts as root only when some non-root user could read it too); medium when only root can and the image
    sets no user; info when the declared agent cannot read it."""
    user = agent_user(ctx)
    if not user.declared:
        if access["readable_by_non_root"]:
            return readable_grade, None
        return "medium", NO_USER_HINT
    if access["readable_by_agent"]:
        return readable_grade, None
    return "info", f"{user.describe()['user']} cannot read it (owner {access['owner']}, mode {access['mode']})"
