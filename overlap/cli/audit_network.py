"""`overlap audit --instance task.json` with no PATH: the network route alone (overlap.audit.network).

With a PATH too, `--check-index` adds the same section to the audit's JSON (``network``, one per target)."""

from __future__ import annotations

import json
import sys

from ..errors import InputError
from .options import Format


def load_record(path: str) -> dict:
    try:
        with open(path, "rb") as fh:
            raw = fh.read(64 << 20)
        text = raw.decode("utf-8").strip()
        record = json.loads(text.splitlines()[0] if text.startswith("{") and "\n{" in text else text)
    except OSError as exc:
        raise InputError(f"--instance {path}: cannot read it ({exc.strerror or exc})") from None
    except (UnicodeDecodeError, ValueError, IndexError, RecursionError) as exc:
        raise InputError(f"--instance {path}: not a JSON object ({exc})") from None
    if not isinstance(record, dict):
        raise InputError(f"--instance {path}: expected one JSON object with SWE-bench fields")
    return record


def network_options(package: str | None, index_url: str | None, all_releases: bool):
    from ..audit.network import NetworkOptions

    return NetworkOptions(package=package, index_url=index_url, all_releases=all_releases)


def section_for(record: dict, network: str, options, *, progress: bool = False, checkout: str | None = None) -> dict:
    """The task's section; with ``progress`` a spinner on stderr names each release as it is read (off when
    stderr is not a terminal)."""
    import contextlib

    from ..audit.network import check_task, closed
    from ..progress import stage, status

    if network == "none":
        return closed(network)
    who = record.get("instance_id") or record.get("repo") or "the task"
    with status(f"network route: {who}") if progress else contextlib.nullcontext():
        return check_task(record, options, stage=stage if progress else None, checkout=checkout)


def render_line(record: dict, s: dict) -> str:
    """One line a reader can act on."""
    who = record.get("instance_id") or record.get("repo") or "task"
    if s["route"] == "open":
        f = s["first_release"]
        days = f"{f['days_after_created']:g} days after the task was opened" if f["days_after_created"] is not None \
            else "upload time unknown"
        extra = (" (matched on tokens: reformatted)" if f["match"] == "tokens" else "") + \
            (" (yanked: installs only with an exact pin)" if f["yanked"] else "")
        partial = "".join(f"; {p['version']} carries {p['lines_found']} of {p['lines_total']} lines"
                          for p in s["partial"])
        return (f"{who}: fix one install away: {s['ecosystem']}:{s['package']} {f['version']} "
                f"(uploaded {f['upload_time'] or '?'}, {days}){extra}{partial}; pin {s['pin']}\n")
    return f"{who}: network route {s['route']}: {s['reason']}\n"


def document(record: dict, section: dict) -> dict:
    from .. import __version__

    return {"schema": "overlap.audit.network/1", "tool": {"name": "overlap", "version": __version__},
            "targets": [{"instance_id": record.get("instance_id"), "repo": record.get("repo"), "network": section}]}


def run_network_only(instance: str, *, network: str, fmt: Format, output: str | None, package: str | None,
                     index_url: str | None, all_releases: bool) -> int:
    """Exit 0 when the route was checked (open or not), 2 when it could not be (no package, index unreachable)."""
    from ..outputs.atomic import write_text_atomic

    record = load_record(instance)
    section = section_for(record, network, network_options(package, index_url, all_releases),
                          progress=fmt != Format.json)
    text = json.dumps(document(record, section), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    if output:
        from pathlib import Path

        write_text_atomic(Path(output).absolute(), text)
    sys.stdout.write(text if fmt == Format.json else render_line(record, section))
    sys.stdout.flush()
    if section["route"] in ("unavailable", "unknown_package", "unknown_base"):
        print(f"overlap: network route not checked: {section['reason']}", file=sys.stderr)
        return 2
    return 0


def with_network(report_json: str, instance: str, network: str, package: str | None, index_url: str | None,
                 all_releases: bool, *, progress: bool = False, path: str | None = None) -> str:
    """The audit's JSON with a ``network`` section in each target; ``path``: the audited folder, whose own
    packaging metadata at the base commit names the package when it is a repository."""
    import os

    record = load_record(instance)
    checkout = path if path and os.path.isdir(path) else None
    section = section_for(record, network, network_options(package, index_url, all_releases), progress=progress,
                          checkout=checkout)
    doc = json.loads(report_json)
    for target in doc.get("targets") or ():
        target["network"] = section
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
