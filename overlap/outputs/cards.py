"""The dataset-card section and the machine-readable `.overlap/<bench>.json` for a training dataset.

The section sits between `<!-- overlap:begin <bench> -->` and `<!-- overlap:end <bench> -->`: a re-run
replaces it (never duplicates it), a card without it gets it appended once, and a card whose markers are
broken (one without the other, twice, out of order, or another bench's markers inside) is refused with a
message instead of being mangled. Nothing here reads a clock, so the same result gives the same bytes.

`.overlap/<bench>.json` follows `schemas/overlap-bench.schema.json` (`schema_version` 1): the counts, the
method, the revisions, baselines when the result has them, and every pair with its keys and evidence.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError, OverlapError
from ..model import PAIR_COLUMNS
from .atomic import write_text_atomic
from .markdown import ResultView, fmt, null_models
from .report import dumps_json

SCHEMA_VERSION = 1
SCHEMA_FILE = Path(__file__).resolve().parent / "schemas" / "overlap-bench.schema.json"
_MARKER = re.compile(r"<!--\s*overlap:(begin|end)\s+(\S+?)\s*-->")


def begin_marker(bench: str) -> str:
    return f"<!-- overlap:begin {bench} -->"


def end_marker(bench: str) -> str:
    return f"<!-- overlap:end {bench} -->"


def record_path(bench: str) -> str:
    return f".overlap/{bench}.json"


def _bench_block(view: ResultView, bench: str) -> dict[str, Any]:
    for block in view.summary.get("benches", []):
        if block.get("bench") == bench:
            return block
    names = ", ".join(str(b.get("bench")) for b in view.summary.get("benches", []))
    raise InputError(f"benchmark '{bench}' is not in this result; it has {names}")


def _where(prov: dict | None) -> str:
    prov = prov or {}
    return f"{prov.get('repo_id') or prov.get('location') or prov.get('name')}@{prov.get('revision') or 'local copy'}"


def _split(value: Any) -> list[str]:
    return [v for v in str(value or "").split(";") if v]


def bench_record(view: ResultView, bench: str) -> dict[str, Any]:
    """The content of `.overlap/<bench>.json` (see the schema file)."""
    block = _bench_block(view, bench)
    summary = view.summary
    pairs = view.pairs[view.pairs["bench"].astype(str) == bench] if len(view.pairs) else view.pairs
    evidence = [c for c in pairs.columns if c not in PAIR_COLUMNS]
    records = [
        {
            "train_id": str(r["train_id"]),
            "bench_id": str(r["bench_id"]),
            "kinds": _split(r["kinds"]),
            "match_type": str(r["match_type"]),
            "train_raw": _split(r.get("train_raw")),
            "bench_raw": _split(r.get("bench_raw")),
            "evidence": {c: r[c] for c in evidence if fmt(r[c]) != ""},
        }
        for r in pairs.to_dict(orient="records")
    ]
    mapping = summary.get("mapping")
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": summary.get("tool", {}),
        "train": {"name": summary["train"].get("name"), "provenance": summary["train"].get("provenance", {})},
        "bench": {"name": bench, "items": block.get("bench_items", 0),
                  "provenance": (block.get("dataset") or {}).get("provenance", {})},
        "method": {
            "join": "equality on normalised source identities (kind, canonical value)",
            "key_kinds": sorted((block.get("shared_keys_by_kind") or {}).keys()),
            "mapping": (mapping or {}).get("provenance"),
        },
        "counts": {k: block.get(k) for k in ("bench_items_matched", "bench_share", "train_items_matched",
                                             "pairs", "shared_keys")} | {"plain_join": block.get("plain_join", {})},
        "baselines": block.get("baselines"),
        "train_ids": sorted({p["train_id"] for p in records}),
        "bench_ids": sorted({p["bench_id"] for p in records}),
        "pairs": records,
    }


def _baseline_line(baselines: Any) -> str:
    models = null_models(baselines)
    if not models:
        return ""
    observed = models[0][1].get("observed")
    parts = []
    for label, model in models:
        interval = model.get("expected_interval")
        spread = f"95% range {interval[0]}–{interval[1]}; " if isinstance(interval, list) and len(interval) == 2 else ""
        p = model.get("p_upper", model.get("p"))
        parts.append(f"{fmt(model.get('expected'))} ({label}; {spread}P(X ≥ {observed}) = {fmt(p)})")
    return (f"Chance baseline: {observed} shared bugs are in the reference pool; two independent draws from "
            f"the pool would share {' or '.join(parts)}.")


def render_section(view: ResultView, bench: str) -> str:
    """The Markdown section for one benchmark, markers included."""
    block = _bench_block(view, bench)
    summary = view.summary
    train = summary["train"]
    plain = block.get("plain_join") or {}
    kinds = ", ".join(f"{k} ({n})" for k, n in sorted((block.get("shared_keys_by_kind") or {}).items())) or "none"
    mapping = summary.get("mapping")
    lines = [
        begin_marker(bench),
        f"## Overlap with {bench}",
        "",
        f"**{block.get('bench_items_matched', 0)} of {block.get('bench_items', 0)} {bench} tasks "
        f"({block.get('bench_share', 0):.1%})** share a source identity with "
        f"{block.get('train_items_matched', 0)} rows of this dataset "
        f"({block.get('pairs', 0)} pairs). A plain join on ids as written finds "
        f"{plain.get('bench_items_matched', 0)} ({plain.get('bench_share', 0):.1%}).",
        "",
        *([_baseline_line(block.get("baselines")), ""] if _baseline_line(block.get("baselines")) else []),
        f"- Method: items joined on normalised source identities; shared keys by kind: {kinds}."
        + (f" OSS-Fuzz ids translated old→new with {_where(mapping.get('provenance'))}." if mapping else ""),
        f"- Revisions: this dataset {_where(train.get('provenance'))}; {bench} "
        f"{_where((block.get('dataset') or {}).get('provenance'))}.",
        f"- Duplicates inside this dataset: {(train.get('duplicates') or {}).get('groups', 0)} bug(s) listed "
        "more than once.",
        f"- Every pair with its keys and evidence, and the contaminated {bench} ids (`bench_ids`): "
        f"[{record_path(bench)}]({record_path(bench)}).",
        f"- Train without these rows: `overlap filter {train.get('name')} {bench}` (it also writes "
        f"`{bench}_clean_ids.txt`, to score a model on the clean part).",
        "",
        f"<sub>Written by {summary.get('tool', {}).get('name', 'overlap')} "
        f"{summary.get('tool', {}).get('version', '')}; a re-run replaces this section.</sub>",
        end_marker(bench),
    ]
    return "\n".join(lines) + "\n"


def update_card_text(text: str, bench: str, section: str, where: str = "the card") -> str:
    """`text` with the bench's section replaced (or appended once when absent); broken markers refused."""
    markers = [(m.start(), m.end(), m.group(1), m.group(2)) for m in _MARKER.finditer(text)]
    mine = [m for m in markers if m[3] == bench]
    begins = [m for m in mine if m[2] == "begin"]
    ends = [m for m in mine if m[2] == "end"]
    fix = "fix or delete the overlap markers by hand, then run again"
    if not mine:
        return (text.rstrip("\n") + "\n\n" if text.strip() else "") + section
    if len(begins) != 1 or len(ends) != 1:
        raise InputError(f"{where}: broken overlap markers for '{bench}' ({len(begins)} begin, {len(ends)} end); {fix}")
    start, stop = begins[0][0], ends[0][1]
    if start > stop:
        raise InputError(f"{where}: the overlap end marker for '{bench}' comes before its begin marker; {fix}")
    inside = [m for m in markers if start < m[0] < stop and m[3] != bench]
    if inside:
        raise InputError(f"{where}: the overlap section for '{bench}' contains markers of '{inside[0][3]}'; {fix}")
    rest = text[stop:]
    return text[:start] + section + (rest[1:] if rest.startswith("\n") else rest)


@dataclass
class CardUpdate:
    """The files of a card change: repo-relative path → text (README.md first)."""

    files: dict[str, str] = field(default_factory=dict)
    benches: list[str] = field(default_factory=list)
    description: str = ""

    def write(self, out: Path) -> list[Path]:
        written = []
        for relpath, text in self.files.items():
            write_text_atomic(Path(out) / relpath, text)
            written.append(Path(out) / relpath)
        return written


def read_card(card: str | Path | None, repo_id: str | None) -> tuple[str, str]:
    """The current card text and where it came from: a local README.md (or a folder holding one), else
    the Hub card of `card`/`repo_id` through `DatasetCard.load`. A missing local card starts empty."""
    if card is not None and (Path(card).exists() or str(card).endswith(".md")):
        path = Path(card)
        path = path / "README.md" if path.is_dir() else path
        if not path.exists():
            return "", str(path)
        try:
            return path.read_text(encoding="utf-8"), str(path)
        except UnicodeDecodeError:
            raise InputError(f"{path}: not UTF-8 text; re-encode the card as UTF-8") from None
    target = str(card or repo_id or "")
    if not target:
        raise InputError("no card given and the training set has no Hub repo; pass --card README.md")
    from huggingface_hub import DatasetCard
    from huggingface_hub import errors as hf_errors

    try:
        return str(DatasetCard.load(target, repo_type="dataset")), f"hub:{target}"
    except (hf_errors.LocalEntryNotFoundError, hf_errors.OfflineModeIsEnabled):
        raise OverlapError(f"{target}: cannot load its dataset card (the Hub is unreachable and it is not "
                           "cached); pass --card with a local README.md") from None
    except hf_errors.EntryNotFoundError:  # the repo has no README.md yet: start an empty card
        return "", f"hub:{target}"
    except (hf_errors.HfHubHTTPError, OSError, ValueError) as exc:
        raise OverlapError(f"{target}: cannot load its dataset card ({type(exc).__name__}); pass --card "
                           "with a local README.md") from None


def card_update(view: ResultView, text: str, benches: list[str] | None = None, where: str = "the card") -> CardUpdate:
    """The updated README and one `.overlap/<bench>.json` per benchmark."""
    names = benches or [str(b.get("bench")) for b in view.summary.get("benches", [])]
    update = CardUpdate(benches=names)
    records = {}
    for bench in names:
        text = update_card_text(text, bench, render_section(view, bench), where)
        records[record_path(bench)] = dumps_json(bench_record(view, bench))
    update.files = {"README.md": text, **records}
    update.description = pr_description(view, names)
    return update


def pr_description(view: ResultView, benches: list[str]) -> str:
    summary = view.summary
    lines = [f"Adds the overlap section(s) for {', '.join(benches)} to the dataset card, and the pairs in "
             f"{', '.join(record_path(b) for b in benches)}.", "", "Provenance:",
             f"- train: {_where(summary['train'].get('provenance'))}"]
    for bench in benches:
        lines.append(f"- {bench}: {_where((_bench_block(view, bench).get('dataset') or {}).get('provenance'))}")
    if summary.get("mapping"):
        lines.append(f"- mapping: {_where(summary['mapping'].get('provenance'))}")
    tool = summary.get("tool", {})
    lines += [f"- tool: {tool.get('name', 'overlap')} {tool.get('version', '')}", "", "```json",
              json.dumps({"parameters": summary.get("parameters")}, sort_keys=True), "```"]
    return "\n".join(lines) + "\n"


def push_card(update: CardUpdate, repo_id: str, *, api=None, token: str | None = None) -> str:
    """One Hub commit holding README.md and the `.overlap/` files, opened as a pull request (never the
    main branch). Returns the PR URL. No token / no access → OverlapError before anything is sent."""
    from huggingface_hub import CommitOperationAdd
    from huggingface_hub import errors as hf_errors

    from .splits import _hub_api, _status, check_write_access

    api = api or _hub_api(token)
    check_write_access(api, repo_id)
    operations = [CommitOperationAdd(path_in_repo=path, path_or_fileobj=text.encode("utf-8"))
                  for path, text in update.files.items()]
    try:
        info = api.create_commit(repo_id, operations, commit_message=f"overlap: card section for "
                                 f"{', '.join(update.benches)}", commit_description=update.description,
                                 repo_type="dataset", create_pr=True)
    except hf_errors.HfHubHTTPError as exc:
        raise OverlapError(f"{repo_id}: the Hub refused the commit ({_status(exc)}); nothing was changed") from None
    url = getattr(info, "pr_url", None)
    if not url:
        raise OverlapError(f"{repo_id}: the Hub made no pull request; check the repo and push again")
    return str(url)


def validate_record(record: dict[str, Any]) -> None:
    """Validate a `.overlap/<bench>.json` record against the shipped JSON schema (jsonschema)."""
    import jsonschema

    jsonschema.validate(record, json.loads(SCHEMA_FILE.read_text(encoding="utf-8")))
