"""The dataset-card section and the machine-readable `.overlap/<bench>.json` for a training dataset.

The section sits between `<!-- overlap:begin <bench> -->` and `<!-- overlap:end <bench> -->`: a re-run
replaces it (never duplicates it), a card without it gets it appended once, and a card whose markers are
broken (one without the other, twice, out of order, or another bench's markers inside) is refused with a
message instead of being mangled. Nothing here reads a clock, so the same result gives the same bytes.

`.overlap/<bench>.json` follows `schemas/overlap-bench.schema.json` (`schema_version` 1, kind `bench-record`):
the counts, the method, the revisions, baselines when the result has them, and every pair with its keys and
evidence. Both are published, so they name inputs by repo id, revision and file sha256 only, never by a local
path (`published.public_provenance`, with `published.scrub_paths` as the net under free text).

The card keeps the input's line endings (a CRLF card stays CRLF) and its front matter as it is (none is added
to a card that has none: an empty `---\n{}\n---` block says nothing), and is written all or nothing (README.md
and every `.overlap/<bench>.json`, or none of them), never over the input card. Bench names become file names and
markers only through `published.safe_name`.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...errors import InputError, OverlapError
from ...jsonout import SCHEMA_VERSION, dumps_json, validate_output, versioned  # noqa: F401 - SCHEMA_VERSION re-exported
from ...model import PAIR_COLUMNS
from ...sources.formats.whole_file import read_text_file
from ...words import plural, word_for
from ..published import describe_source, public_provenance, safe_name, scrub_paths
from ..report.markdown import md_text
from ..report.sections import ResultView, fmt, null_models, stage_ran
from .hub import check_write_access, http_status
from .hub import hub_api as _hub_api  # the name tests replace

SCHEMA_FILE = Path(__file__).resolve().parent / "schemas" / "overlap-bench.schema.json"
# Evidence columns that are not text, typed again when pairs.csv is read back (it is read as text).
_EVIDENCE_TYPES = {"counted": "bool", "names_function": "bool", "names_file": "bool", "longest_run": "int"}
_MARKER = re.compile(r"<!--\s*overlap:(begin|end)\s+(\S+?)\s*-->")


def begin_marker(bench: str) -> str:
    return f"<!-- overlap:begin {safe_name(bench)} -->"


def end_marker(bench: str) -> str:
    return f"<!-- overlap:end {safe_name(bench)} -->"


def record_path(bench: str) -> str:
    return f".overlap/{safe_name(bench)}.json"


def _bench_block(view: ResultView, bench: str) -> dict[str, Any]:
    for block in view.summary.get("benches", []):
        if block.get("bench") == bench:
            return block
    names = ", ".join(str(b.get("bench")) for b in view.summary.get("benches", []))
    raise InputError(f"benchmark '{bench}' is not in this result; it has {names}")


def _where(prov: dict | None) -> str:
    return md_text(describe_source(prov))


def _code(text: str) -> str:
    """`text` as one Markdown code span whatever it holds: a fence longer than its longest run of backticks,
    its line breaks as spaces (a span is one line of a command)."""
    text = " ".join(str(text).splitlines())
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _typed(column: str, value: Any) -> Any:
    """An evidence value as its type (pairs.csv read back gives text: "False", "3")."""
    kind = _EVIDENCE_TYPES.get(column)
    if not isinstance(value, str) or kind is None:
        return value
    if kind == "bool" and value in ("True", "False", "true", "false"):
        return value.lower() == "true"
    if kind == "int":
        try:
            return int(float(value))
        except ValueError:
            return value
    return value


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
            "evidence": {c: _typed(c, r[c]) for c in evidence if fmt(r[c]) != ""},
        }
        for r in pairs.to_dict(orient="records")
    ]
    mapping = (summary.get("mapping") or {}).get("provenance")
    record = {
        "train": {"name": summary["train"].get("name"),
                  "provenance": public_provenance(summary["train"].get("provenance"))},
        "bench": {"name": bench, "items": block.get("bench_items", 0),
                  "provenance": public_provenance((block.get("dataset") or {}).get("provenance"))},
        "method": {
            "join": "equality on normalised source identities (kind, canonical value)",
            "key_kinds": sorted((block.get("shared_keys_by_kind") or {}).keys()),
            "mapping": public_provenance(mapping) if mapping else None,
        },
        "counts": {k: block.get(k) for k in ("bench_items_matched", "bench_share", "train_items_matched",
                                             "pairs", "shared_keys")} | {"plain_join": block.get("plain_join", {})},
        "baselines": block.get("baselines"),
        "train_ids": sorted({p["train_id"] for p in records}),
        "bench_ids": sorted({p["bench_id"] for p in records}),
        "pairs": records,
    }
    return scrub_paths(json.loads(dumps_json(versioned("bench-record", record))))


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
    mapping = summary.get("mapping") if stage_ran(summary.get("mapping")) else None
    train_name = train.get("name")
    name = md_text(bench)  # names come from the data (a file named `a<b>|c`): shown as written, never as markup
    lines = [
        begin_marker(bench),
        f"## Overlap with {name}",
        "",
        f"**{block.get('bench_items_matched', 0)} of {plural(block.get('bench_items', 0), f'{name} task')} "
        f"({block.get('bench_share', 0):.1%})** share a source identity with "
        f"{plural(block.get('train_items_matched', 0), 'row')} of this dataset "
        f"({plural(block.get('pairs', 0), 'pair')}). A plain join on ids as written finds "
        f"{plain.get('bench_items_matched', 0)} ({plain.get('bench_share', 0):.1%}).",
        "",
        *([_baseline_line(block.get("baselines")), ""] if _baseline_line(block.get("baselines")) else []),
        f"- Method: items joined on normalised source identities; shared keys by kind: {kinds}."
        + (f" OSS-Fuzz ids translated old→new with {_where(mapping.get('provenance'))}." if mapping else ""),
        f"- Revisions: this dataset {_where(train.get('provenance'))}; {name} "
        f"{_where((block.get('dataset') or {}).get('provenance'))}.",
        f"- Duplicates inside this dataset: {plural((train.get('duplicates') or {}).get('groups', 0), 'bug')} listed "
        "more than once.",
        f"- Every pair with its keys and evidence, and the contaminated {name} ids (`bench_ids`): "
        f"[{record_path(bench)}]({record_path(bench)}).",
        f"- Train without these rows: {_code(f'overlap filter {train_name} {bench}')} (it also writes "
        f"{_code(f'{bench}_clean_ids.txt')}, to score a model on the clean part).",
        "",
        f"<sub>Written by {summary.get('tool', {}).get('name', 'overlap')} "
        f"{summary.get('tool', {}).get('version', '')}; a re-run replaces this section.</sub>",
        end_marker(bench),
    ]
    return "\n".join(lines) + "\n"


def update_card_text(text: str, bench: str, section: str, where: str = "the card") -> str:
    """`text` with the bench's section replaced (or appended once when absent); broken markers refused."""
    markers = [(m.start(), m.end(), m.group(1), m.group(2)) for m in _MARKER.finditer(text)]
    bench = safe_name(bench)
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
    """The files of a card change: repo-relative path → text (README.md first). `source` is where the
    input card was read (a local path, or `hub:<repo>`)."""

    files: dict[str, str] = field(default_factory=dict)
    benches: list[str] = field(default_factory=list)
    description: str = ""
    source: str = ""

    def write(self, out: Path) -> list[Path]:
        """Write every file under `out`, all or nothing; never over the input card (refused)."""
        out = Path(out)
        targets = [out / relpath for relpath in self.files]
        if self.source and not self.source.startswith("hub:"):
            card = Path(self.source)
            if any(_same_file(t, card) for t in targets):
                raise InputError(f"{card}: the input card is never overwritten; give --out another folder "
                                 "(the updated card and .overlap/ go there)")
        return write_files_together(dict(zip(targets, self.files.values(), strict=True)))


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve() or (a.exists() and b.exists() and os.path.samefile(a, b))
    except OSError:
        return False


def write_files_together(files: dict[Path, str]) -> list[Path]:
    """Write each text to its path so that all appear or none: every file is first written in full to a
    temp file beside its target, and only then are they renamed into place. A failure before the renames
    leaves no file behind; text is written as given (line endings kept)."""
    staged: list[tuple[str, Path]] = []
    try:
        for path, text in files.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
            staged.append((tmp, path))
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
                handle.write(text)
            mask = os.umask(0)
            os.umask(mask)
            os.chmod(tmp, 0o666 & ~mask)
        for tmp, path in staged:
            os.replace(tmp, path)
    except OSError as exc:
        for tmp, _ in staged:
            Path(tmp).unlink(missing_ok=True)
        raise InputError(f"{next(iter(files), '')}: cannot write the card ({exc.strerror or exc}); nothing "
                         "was written") from None
    return list(files)


def read_card(card: str | Path | None, repo_id: str | None) -> tuple[str, str]:
    """The current card text and where it came from: a local README.md (or a folder holding one), else
    the Hub card of `card`/`repo_id` through `DatasetCard.load`. A missing local card starts empty."""
    if card is not None and (Path(card).exists() or str(card).endswith(".md")):
        path = Path(card)
        path = path / "README.md" if path.is_dir() else path
        if not path.exists() and not path.is_symlink():
            return "", str(path)
        return read_text_file(path, "card"), str(path)  # read as bytes: CRLF line endings are kept
    target = str(card or repo_id or "")
    if not target:
        raise InputError("no card given and the training set has no Hub repo; pass --card README.md")
    from huggingface_hub import DatasetCard  # imported here: heavy, needed only for a Hub card
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
    # `--bench x --bench x` asks for x once
    names = list(dict.fromkeys(benches or [str(b.get("bench")) for b in view.summary.get("benches", [])]))
    paths = [record_path(b) for b in names]
    if len(set(paths)) != len(paths):
        raise InputError(f"two benchmarks of this result share a file name ({', '.join(names)}); give --bench")
    update = CardUpdate(benches=names, source=where)
    eol = "\r\n" if "\r\n" in text else "\n"
    text = text.replace("\r\n", "\n")
    records = {}
    for bench in names:
        text = update_card_text(text, bench, scrub_paths(render_section(view, bench)), where)
        records[record_path(bench)] = dumps_json(bench_record(view, bench))
    update.files = {"README.md": text.replace("\n", eol), **records}
    update.description = pr_description(view, names)
    return update


def pr_description(view: ResultView, benches: list[str]) -> str:
    summary = view.summary
    lines = [f"Adds the overlap {word_for(len(benches), 'section')} for {', '.join(benches)} to the dataset card, "
             "and the pairs in "
             f"{', '.join(record_path(b) for b in benches)}.", "", "Provenance:",
             f"- train: {_where(summary['train'].get('provenance'))}"]
    for bench in benches:
        lines.append(f"- {bench}: {_where((_bench_block(view, bench).get('dataset') or {}).get('provenance'))}")
    if stage_ran(summary.get("mapping")):
        lines.append(f"- mapping: {_where(summary['mapping'].get('provenance'))}")
    tool = summary.get("tool", {})
    lines += [f"- tool: {tool.get('name', 'overlap')} {tool.get('version', '')}", "", "```json",
              json.dumps({"parameters": summary.get("parameters")}, sort_keys=True), "```"]
    return scrub_paths("\n".join(lines) + "\n")


def push_card(update: CardUpdate, repo_id: str, *, api=None, token: str | None = None) -> str:
    """One Hub commit holding README.md and the `.overlap/` files, opened as a pull request (never the
    main branch). Returns the PR URL. No token / no access → OverlapError before anything is sent."""
    from huggingface_hub import CommitOperationAdd  # imported here: heavy, needed only to publish
    from huggingface_hub import errors as hf_errors

    api = api or _hub_api(token)
    check_write_access(api, repo_id)
    operations = [CommitOperationAdd(path_in_repo=path, path_or_fileobj=text.encode("utf-8"))
                  for path, text in update.files.items()]
    try:
        info = api.create_commit(repo_id, operations, commit_message=f"overlap: card section for "
                                 f"{', '.join(update.benches)}", commit_description=update.description,
                                 repo_type="dataset", create_pr=True)
    except hf_errors.HfHubHTTPError as exc:
        raise OverlapError(f"{repo_id}: the Hub refused the commit ({http_status(exc)}); nothing was changed") from None
    url = getattr(info, "pr_url", None)
    if not url:
        raise OverlapError(f"{repo_id}: the Hub made no pull request; check the repo and push again")
    return str(url)


def validate_record(record: dict[str, Any]) -> None:
    """Validate a `.overlap/<bench>.json` record against the shipped JSON schema (jsonschema)."""
    validate_output("bench-record", record)
