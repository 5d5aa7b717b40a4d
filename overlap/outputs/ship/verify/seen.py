"""Where the kept rows' ids and `dup` keys were first seen, in bounded memory: a dict, then an SQLite file."""

from __future__ import annotations

import sqlite3
import tempfile
from contextlib import contextmanager
from pathlib import Path

from ....errors import InputError


class _Seen:
    """Every id and `dup` key of the kept rows with where it was first seen (file index, position, where): a
    dict up to `HELD` values (most splits), then an SQLite file in the temp folder, removed after, so a split of
    tens of millions of rows is checked in bounded memory (the dict costs ~200 bytes a value, ~1 GB at HELD;
    an SQLite insert ~10 µs, so the dict stays as long as memory allows)."""

    HELD = 5_000_000

    def __init__(self) -> None:
        self.held: dict[tuple[str, str], tuple] = {}
        self.db: sqlite3.Connection | None = None
        self._folder: tempfile.TemporaryDirectory | None = None

    def first(self, kind: str, value: str, here: tuple) -> tuple | None:
        """Where (kind, value) was seen before, or None, when it is recorded as seen `here`."""
        if self.db is None:
            earlier = self.held.setdefault((kind, value), here)
            if earlier is not here:
                return earlier
            if len(self.held) > self.HELD:
                self._to_disk()
            return None
        blob = value.encode("utf-8", "surrogatepass")
        with self._room():
            if self.db.execute("INSERT OR IGNORE INTO seen VALUES (?, ?, ?, ?, ?)", (kind, blob, *here)).rowcount:
                return None
            return tuple(self.db.execute("SELECT file, position, place FROM seen WHERE kind = ? AND value = ?",
                                         (kind, blob)).fetchone())

    @contextmanager
    def _room(self):
        """A full temp folder (SQLite's own error, not an OSError) as one line naming it and TMPDIR."""
        try:
            yield
        except (sqlite3.Error, OSError) as exc:
            where = self._folder.name if self._folder is not None else tempfile.gettempdir()
            raise InputError(f"{where}: {exc} while checking the written split's repeats (past {self.HELD:,} ids "
                             "they wait there); free some space there or set TMPDIR to a folder with room") from None

    def _to_disk(self) -> None:
        with self._room():
            self._held_to_disk()

    def _held_to_disk(self) -> None:
        self._folder = tempfile.TemporaryDirectory(prefix="overlap-verify-")
        self.db = sqlite3.connect(Path(self._folder.name) / "seen.db", isolation_level=None)
        for pragma in ("journal_mode = OFF", "synchronous = OFF", "locking_mode = EXCLUSIVE",
                       "cache_size = -131072"):  # 128 MB of pages: values arrive in no order
            self.db.execute(f"PRAGMA {pragma}")
        self.db.execute("CREATE TABLE seen (kind TEXT, value BLOB, file INTEGER, position INTEGER, place TEXT, "
                        "PRIMARY KEY (kind, value)) WITHOUT ROWID")
        self.db.execute("BEGIN")
        self.db.executemany("INSERT INTO seen VALUES (?, ?, ?, ?, ?)",
                            ((kind, value.encode("utf-8", "surrogatepass"), *here)
                             for (kind, value), here in self.held.items()))
        self.held = {}

    def __enter__(self) -> _Seen:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.db is not None:
            self.db.close()
        if self._folder is not None:
            self._folder.cleanup()
