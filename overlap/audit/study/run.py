"""``run_batch``: audit many targets, each against its own reference, several at once.

Every target has a key (its inputs and the options that change a result). With an output folder each result
is written, atomically, to ``targets/<id>-<key>.json`` as soon as it ends, and a re-run reuses every
result of the same key that ran (a failed target is tried again). The document lists every target (sorted,
so ``--jobs`` and ``--engine`` never change a byte) and the per-set table.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from ... import __version__
from ...errors import InputError
from ..arguments import parse_limits
from ..model import text_safe
from .execute import run_local, run_ray
from .render import render_csv, render_html, render_md
from .summary import COLUMNS, entry_of, summarise, worst_verdict
from .targets import BatchTarget, file_name

SCHEMA = "overlap.audit.batch/1"
DEFAULT_TIMEOUT = 3600.0


@dataclass(frozen=True)
class BatchOptions:
    network: str = "any"
    repo_path: str | None = None
    limits: tuple[str, ...] = ()
    git: str | None = None
    timeout: float = DEFAULT_TIMEOUT
    jobs: int | None = None  # None: one per CPU this process may use
    engine: str = "local"  # local | ray
    ray_address: str | None = None
    fail_on: str | None = None
    # transport only: which hosts may be reached over plain HTTP changes whether a pull succeeds, never what
    # the audit finds, so it is passed to each target but kept out of the key (a failed target runs again)
    insecure_registries: tuple[str, ...] = ()
    # the network route (--check-index): each target also gets the first package release carrying its fix
    check_index: bool = False
    package: str | None = None
    index_url: str | None = None
    all_releases: bool = False

    def result_fields(self) -> dict:
        """The options that change a target's result (its key); jobs, engine and timeout do not."""
        fields = {"network": self.network, "repo_path": self.repo_path, "limits": sorted(self.limits), "git": self.git}
        if self.check_index:  # only then: a run without the route keeps the keys of earlier runs
            fields["index"] = {"package": self.package, "index_url": self.index_url, "all_releases": self.all_releases}
        return fields

    def check(self) -> None:
        if self.network not in ("any", "none"):
            raise InputError(f"--network {self.network}: expected 'any' or 'none'")
        parse_limits(list(self.limits))
        if self.jobs is not None and self.jobs < 1:
            raise InputError(f"--jobs {self.jobs}: give 1 or more")
        if not self.timeout > 0:
            raise InputError(f"--timeout {self.timeout:g}: give a number of seconds above 0")
        if self.engine not in ("local", "ray"):
            raise InputError(f"--engine {self.engine}: expected local or ray")


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def write_atomic(path: Path, text: str) -> None:
    """Write through a temporary file in the same folder: a reader never sees half a result."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _dumps(data) -> str:
    # text_safe: a target's name or id read from the targets file may hold an escaped lone surrogate
    return json.dumps(text_safe(data), sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def _previous(path: Path, key: str) -> dict | None:
    """A result of the same key that ran, from an earlier run; None when absent, unreadable or failed."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    entry = data.get("entry") if isinstance(data, dict) else None
    if isinstance(entry, dict) and entry.get("key") == key and entry.get("status") == "ok":
        return entry
    return None


def _image_digests(targets: list[BatchTarget], insecure: tuple[str, ...]) -> dict[str, str]:
    """The manifest digest each image target's reference resolves to now (part of its key, so a re-run audits a
    tag pushed again with other content): one manifest request per image, a few at a time. An image that does
    not resolve (a registry error) has none; its audit fails with the reason, and a failed result is never reused."""
    images = sorted({t.target for t in targets if t.kind == "image" and t.target and t.error is None})
    if not images:
        return {}
    from ..image.pull import resolve  # imported here: a batch of local targets never loads the HTTP client

    def one(ref: str) -> tuple[str, str | None]:
        try:
            return ref, resolve(ref, insecure_registries=insecure)
        except Exception:  # noqa: BLE001  (the target's own audit meets the same fault and reports it)
            return ref, None

    with ThreadPoolExecutor(max_workers=min(8, len(images))) as pool:
        return {ref: digest for ref, digest in pool.map(one, images) if digest is not None}


def _refuse_inside(out: Path, targets: list[BatchTarget]) -> None:
    """The audit never writes into what it audits: an output folder inside a local target is refused."""
    resolved = out.resolve()
    for t in targets:
        if t.kind == "path" and t.target:
            try:
                tree = Path(t.target).resolve()
            except (OSError, ValueError):  # no file has such a name (a NUL byte): the row fails on its own
                continue
            if resolved == tree or tree in resolved.parents:
                raise InputError(f"--out {out}: is inside the audited {t.target}; write the results somewhere else")


def run_batch(targets: list[BatchTarget], options: BatchOptions, out: Path | None = None,
              progress: Callable[[int, int], None] | None = None, sampling: dict | None = None) -> dict:
    """Audit ``targets``; the document (see the module). ``progress(done, total)`` after each target;
    ``sampling``: set -> how its tasks were drawn (``population``: the whole set's size), for the estimates."""
    options.check()
    if not targets:
        raise InputError("no target to audit")
    if out is not None:
        _refuse_inside(out, targets)
    fields = options.result_fields()
    digests = _image_digests(targets, options.insecure_registries)
    keyed: dict[str, BatchTarget] = {}
    for t in targets:  # the same inputs twice are audited once (and counted, in `repeated_rows`)
        keyed.setdefault(t.key(fields, digests.get(t.target) if t.kind == "image" else None), t)
    repeated = len(targets) - len(keyed)
    entries: dict[str, dict] = {}
    todo = []
    folder = out / "targets" if out is not None else None
    for key, t in keyed.items():
        prev = _previous(folder / file_name(t, key), key) if folder is not None else None
        if prev is not None:
            entries[key] = prev
        else:
            todo.append((key, {"target": t.to_dict(),
                               "options": {**fields, "insecure_registries": list(options.insecure_registries)}}))

    def done(key: str, result: dict) -> None:
        t = keyed[key]
        entry = entry_of(t, key, result)
        entries[key] = entry
        if folder is not None:
            write_atomic(folder / file_name(t, key), _dumps({"entry": entry, "report": result.get("report")}))
        if progress is not None:
            progress(len(entries), len(keyed))

    if todo:
        workers = min(options.jobs or default_jobs(), len(todo))
        if options.engine == "ray":
            run_ray(todo, options.jobs, options.timeout, done, options.ray_address)
        else:
            run_local(todo, workers, options.timeout, done)
    return document(list(entries.values()), options, repeated, order=[t.set for t in targets], sampling=sampling)


def exit_code(entries: list[dict], fail_on: str | None) -> int:
    """1 when ``--fail-on`` is reached by a target, else 2 when a target failed, else 0."""
    verdicts = {e["verdict"] for e in entries}
    if fail_on == "leak" and "leak" in verdicts or fail_on == "suspect" and verdicts & {"leak", "suspect"}:
        return 1
    return 2 if any(e["status"] != "ok" for e in entries) else 0


def document(entries: list[dict], options: BatchOptions, repeated_rows: int = 0, order: list[str] | None = None,
             sampling: dict | None = None) -> dict:
    """The batch document; `repeated_rows`: rows of the targets file whose inputs an earlier row had (one target,
    audited once); `order`: the sets as given; `sampling`: set -> how its tasks were drawn."""
    entries = sorted(entries, key=lambda e: (e["set"], e["instance_id"] or "", e.get("image") or e.get("path") or "",
                                             e["key"]))
    ok = sum(e["status"] == "ok" for e in entries)
    return text_safe({
        "schema": SCHEMA, "tool": {"name": "overlap", "version": __version__},
        "options": {**options.result_fields(), "fail_on": options.fail_on},
        "columns": [{"id": cid, "title": title, "codes": list(codes)} for cid, title, codes in COLUMNS]
        + ([{"id": "network", "title": "fix one install away", "codes": []}] if options.check_index else []),
        "verdict": worst_verdict(entries), "exit_code": exit_code(entries, options.fail_on),
        "counts": {"targets": len(entries), "ok": ok, "error": len(entries) - ok, "repeated_rows": repeated_rows},
        "sets": summarise(entries, order, sampling), "targets": entries,
    })


def document_json(doc: dict) -> str:
    return _dumps(doc)


def write_document(doc: dict, out: Path, contamination: dict | None = None) -> list[Path]:
    """The document, the per-set table and the routes table in every form, beside ``targets/``."""
    from .routes import routes_table
    from .routes_render import render_routes_csv, render_routes_html, render_routes_md

    routes = routes_table(doc, contamination)
    files = {"audit.json": document_json(doc), "sets.csv": render_csv(doc), "sets.md": render_md(doc),
             "sets.html": render_html(doc), "routes.json": _dumps(routes), "routes.csv": render_routes_csv(routes),
             "routes.md": render_routes_md(routes), "routes.html": render_routes_html(routes)}
    for name, text in files.items():
        write_atomic(out / name, text)
    return [out / n for n in files]
