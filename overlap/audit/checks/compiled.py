"""Leftovers in compiled form (L3, L5): bytecode, binaries and archive members.

A mixin of ``leftovers._Scan`` (it uses ``self.ctx``, ``self.ref``, ``self.tokens``, ``self.hunks``,
``self.pycs`` and ``self.add``).
"""

from __future__ import annotations

import importlib.util
import os
import re

from ...words import plural
from ..content import pyc
from ..content.archives import COMPRESSED, HEAD_BYTES, members
from ..content.fixed import blob_id
from ..content.matchers import holds, stripped_lines
from ..model import worst
from ..tree import TooLarge, read_head, read_regular
from ..wording import capped, cut, iso

BINARY_SUFFIXES = (".so", ".o", ".a", ".class", ".jar", ".dll", ".exe", ".dylib")
BINARY_MAGIC = (b"\x7fELF", b"MZ", b"\xcf\xfa\xed\xfe", b"\xfe\xed\xfa\xcf", b"\xca\xfe\xba\xbe")

_BUNDLE_REF = re.compile(rb"^([0-9a-f]{40}|[0-9a-f]{64}) (\S.*)$")


class Compiled:
    def bundle(self, fe, shown: str) -> None:
        """L5: a git bundle whose refs name commits outside base history: `git fetch` from it restores them (the
        fix commit among them, perhaps). Its header lists the refs; the pack after it is not unpacked."""
        head = read_head(fe.path, 1 << 20)
        refs = []
        for line in head.split(b"\n\n", 1)[0].split(b"\n")[1:]:
            found = _BUNDLE_REF.match(line)
            if found and not line.startswith(b"-"):
                refs.append((found.group(1).decode(), found.group(2).decode("utf-8", "replace")))
        repo = self.ctx._repo
        outside = [(oid, name) for oid, name in refs if repo is None or not repo.in_hist(oid)]
        if not outside:
            return
        fc = self.ref.fix_commit
        sev = "critical" if fc and any(oid.startswith(fc) or fc.startswith(oid) for oid, _ in outside) else "high"
        title = f"a git bundle holds {plural(len(outside), 'ref')} to commits outside base history"
        refs = [{"ref": name, "commit": oid} for oid, name in outside]
        self.add("L5", shown, sev, "location", title, capped(refs, self.ctx.max_items),
                 f"git bundle list-heads {self.ctx.q(shown)}")

    def archive(self, fe, shown: str, outside: bool = False) -> bool:
        """L5: archive members (zip family, tars, compressed files) holding the fixed content, reference hunks or
        fix-only strings. Whether the file read as an archive (False: no member, so it is read as a file).
        Outside the repository the hunks and strings wait for the background (``Outside.settle``)."""
        fixed = self.ctx.fixed_blobs() if self.ref.given and self.ctx._repo is not None else {}
        hexlen = self.ctx._repo.hexlen if self.ctx._repo is not None else 40
        hits, sevs, skipped, names = [], [], 0, []
        for name, data in members(fe.path, self.ctx.limits["archive_member_bytes"]):
            names.append(name)
            if data is None:
                skipped += 1
                self.not_read(f"{shown}!/{name}", "archive member over archive_member_bytes or past the archive's "
                                                  "budget")
                continue
            blob = blob_id(data, hexlen)
            text = data.decode("utf-8", "replace") if b"\0" not in data[:8192] else ""
            if blob in fixed:
                sevs.append("critical")
                hits.append({"member": name, "equals_fixed": fixed[blob].path})
                continue
            if outside:
                found, whole = self.outside_member(data, text)
                tokens = [t for t in self.tokens if t.encode("utf-8", "replace") in data]
                if found:
                    hits.append({"member": name, "found": found, "whole": whole})
                elif tokens:
                    hits.append({"member": name, "tokens": tokens})
                continue
            lines = stripped_lines(text) if text and self.hunks else []
            held = [h for h in self.hunks if holds(lines, h)]
            tokens = [t for t in self.tokens if t.encode("utf-8", "replace") in data]
            if held:
                sevs.append("critical" if len(held) == len(self.hunks) else "high")
                hits.append({"member": name, "hunks": len(held)})
            elif tokens:
                sevs.append("high")
                hits.append({"member": name, "tokens": [cut(t, 120) for t in tokens]})
        if hits and outside:
            self.pending.append(("archive", shown, (hits, skipped, self._listing(fe.path, shown, names))))
        elif hits:
            self.add("L5", shown, worst(sevs), "content", f"archive members hold the fix ({len(hits)})",
                     {**capped(hits, self.ctx.max_items), "members_skipped": skipped},
                     self._listing(fe.path, shown, names))
        return bool(names)

    def _listing(self, path, shown: str, names: list[str]) -> str:
        """The command that shows an archive's members, by its format."""
        head, where = read_head(path, HEAD_BYTES), self.ctx.q(shown)
        suffix = next((suffix for magic, suffix in COMPRESSED.items() if head.startswith(magic)), None)
        if suffix is not None and names == [path.name.removesuffix(suffix)]:  # one compressed file, not a tar
            tool = {".gz": "gzip", ".bz2": "bzip2", ".xz": "xz", ".zst": "zstd"}[suffix]
            return f"{tool} -dc {where} | head -c 4096"
        if suffix is not None or head[257:262] == b"ustar":
            return f"tar -tvf {where}"
        return f"python3 -m zipfile -l {where}"

    def binary(self, rel: str, shown: str, name: str, data: bytes, outside: bool = False) -> None:
        """L5: printable strings of a compiled file holding fix-only strings (outside the repository, graded
        against the background by ``Outside.settle``)."""
        if not self.tokens or not (name.endswith(BINARY_SUFFIXES) or data.startswith(BINARY_MAGIC)):
            return
        maybe = [t for t in self.tokens if t.encode("utf-8", "replace") in data]  # cheap test before the strings
        if not maybe:
            return
        strings = re.findall(rb"[\x20-\x7e]{8,}", data)
        found = sorted({t for t in maybe for s in strings if t.encode("utf-8", "replace") in s})
        if found and outside:
            self.pending.append(("binary", shown, found))
        elif found:
            self.add("L5", shown, "high", "content", "a compiled file holds strings only the fix adds",
                     {"tokens": [cut(t, 120) for t in found]}, f"strings {self.ctx.q(shown)} | grep -F -e "
                     + self.ctx.q(found[0][:40]))

    def bytecode(self) -> None:
        """L3: own-magic pycs compared in the isolated child; foreign ones searched for fix-only strings."""
        root, fixed = self.ctx.root, {f.path: f.data for f in self.ref.fixed if f.kind == "fix" and f.data}
        own = []
        for shown, src, item in self.pycs:
            header = pyc.read_header(item["pyc"])
            if header is None:
                continue
            if not header.magic_ok:
                strings = re.findall(rb"[\x20-\x7e]{8,}", item["pyc"])
                found = sorted({t for t in self.tokens for x in strings if t.encode("utf-8", "replace") in x})
                if found:
                    self.add("L3", shown, "high", "content", f"bytecode of {src} (another Python) holds fix-only "
                             "strings", {"source": src, "tokens": [cut(t, 120) for t in found]},
                             f"strings {self.ctx.q(shown)}")
                continue
            try:
                item["current"] = read_regular(root / src, self.ctx.limits["scan_file_bytes"]) if root else None
            except TooLarge:
                item["current"] = None
            if item["current"] is not None:
                item["source_mtime"] = int(os.lstat(root / src).st_mtime)
            item["fixed"] = fixed.get(src)
            own.append((shown, src, item, header))
        results = pyc.compare([{"pyc": it["pyc"], "current": it["current"], "fixed": it["fixed"]}
                               for _, _, it, _ in own])
        unreadable = 0
        for (shown, src, item, header), res in zip(own, results, strict=True):
            if "error" in res:
                unreadable += 1
                continue
            current = item["current"]
            stale = current is not None and (
                (header.hash_based and importlib.util.source_hash(current) != item["pyc"][8:16])
                or (not header.hash_based and header.size != len(current) & 0xFFFFFFFF))
            # checkouts and `touch` change mtimes: a pyc that compiles to the current source and differs only
            # in its recorded source mtime is no leak (info)
            mtime_only = (not stale and res.get("current") is True and not header.hash_based
                          and header.mtime is not None and "source_mtime" in item
                          and header.mtime != item["source_mtime"] & 0xFFFFFFFF)
            if res.get("fixed"):
                sev, title = "critical", f"bytecode of {src} equals the compiled fix"
            elif current is None:
                sev, title = ("critical" if src in self.ref.added_paths() else "medium"), f"orphan bytecode of {src}"
            elif res.get("current") is False or stale:
                sev, title = "medium", f"bytecode of {src} was compiled from another version of the source"
            elif mtime_only:
                sev, title = "info", f"bytecode of {src} matches the source; only the recorded mtime differs"
            else:
                continue
            extra = {"pyc_source_mtime": iso(header.mtime), "source_mtime": iso(item["source_mtime"])} \
                if mtime_only else {}
            self.add("L3", shown, sev, "content", title, {"source": src, "equals_fixed": bool(res.get("fixed")),
                                                          "equals_current": res.get("current"), "stale_header": stale,
                                                          "mtime_only": mtime_only, **extra},
                     "python3 -c " + self.ctx.q(f"import dis, marshal; dis.dis(marshal.loads(open({shown!r}, "
                                                f"'rb').read()[16:]))"))
        self.unreadable_pyc = unreadable
