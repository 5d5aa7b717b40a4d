"""Generated training sets and benchmarks for the `overlap filter` property tests, in the real schemas
(the columns the datasets' declarations name), written at test time into a temp folder laid out like the
Hub repos.

Every generated source row comes with its **truth**: the id the row holds and the canonical task keys it
carries, worked out here from the task the row was rendered from (never by the tool's own parsers). The
oracle (`prop_oracle.py`) decides from the truths alone which training rows join a benchmark.

Canonical keys, as docs/architecture.md defines the identities:

- `ossfuzz:<n>`   the new tracker id when the OSS-Fuzz mapping knows the old id, else the id as given;
- `cve:<CVE-YYYY-N>`;
- `repo_pr:<owner/name>#<n>`  lowercased repo after the known renames, plus the PR number;
- `base_pr:<sha>#<n>`  lowercased base commit plus the PR number (needs no repo name).

A shared base commit alone is not the same task (many PRs start from one commit). It joins only when one
side has no PR number and both carry the identical fix (SWE-bench Pro's rule), so a truth also records the
base commit, whether the row has a PR number, and its patch.

The generated content covers, per layout: exact repeated rows, the same id twice with other content,
rows without an id, rows whose id cannot be parsed, non-JSON lines in JSON-lines files, rows spread across
several files, repo names in mixed case and under their old names, and the old and new OSS-Fuzz ids of one
bug on the two sides.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from dataclasses import dataclass, field, replace
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import strategies as st

REPO_ROOT = Path(__file__).resolve().parents[2]
# The demo's OSS-Fuzz mapping (old Monorail id -> new tracker id), read-only; passed as `--data arvo=...`.
DEMO_ARVO = REPO_ROOT / "data" / "demo" / "arvo"
DEMO_MAPPING_CSV = DEMO_ARVO / "arvo" / "oss_fuzz_mappings.csv"


def demo_mapping() -> dict[int, int]:
    rows = csv.reader(io.StringIO(DEMO_MAPPING_CSV.read_text()))
    return {int(r[0]): int(r[1]) for r in rows if len(r) >= 2 and r[0].isdigit() and r[1].isdigit()}


MAPPING = demo_mapping()
# The shipped rename table's entries that the generated data uses (mappings/repo_renames.csv).
RENAMES = {"kbknapp/clap-rs": "clap-rs/clap", "jlongster/prettier": "prettier/prettier"}


@dataclass(frozen=True)
class Truth:
    """What a source row is, worked out when it was generated."""

    item_id: str | None  # the id the row holds (None: the row has none)
    keys: frozenset[str] = frozenset()  # canonical task keys (see the module doc)
    base: str | None = None  # lowercased base commit (SWE rows)
    has_pr: bool = False
    patch: str | None = None


@dataclass
class Layout:
    """One dataset on disk: its registered name, the folder given as `--data NAME=FOLDER`, and every source
    row of every file, in file order: (row dict, truth), or (text of a line that is not JSON, None)."""

    name: str
    folder: Path
    files: dict[str, list[tuple[object, Truth | None]]] = field(default_factory=dict)
    extra_data: dict[str, Path] = field(default_factory=dict)  # other `--data` entries this layout needs

    def truths(self) -> list[Truth]:
        return [t for rows in self.files.values() for _, t in rows if t is not None]


def sha(tag: str) -> str:
    return hashlib.sha1(tag.encode()).hexdigest()


def diff(path: str, removed: str, added: str) -> str:
    return (f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -1,3 +1,3 @@\n context one\n"
            f"-{removed}\n+{added}\n context two\n")


# --- OSS-Fuzz bugs ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Bug:
    old: int | None  # Monorail id (< 1,000,000)
    new: int | None  # new tracker id
    project: str

    @property
    def canonical(self) -> int:
        if self.old is not None and self.old in MAPPING:
            return MAPPING[self.old]
        return self.new if self.new is not None else self.old  # type: ignore[return-value]


_PROJECTS = ["libxml2", "libxslt", "harfbuzz", "php", "mruby", "binutils", "lcms", "freetype2", "openjpeg",
             "wireshark", "graphicsmagick", "libpng"]
# Every pair of the demo mapping (known under both ids), two old ids the mapping does not know, a migrated
# new id without a known old one, and two bugs filed after the migration (new scheme only).
BUGS = ([Bug(old, new, _PROJECTS[i % len(_PROJECTS)]) for i, (old, new) in enumerate(sorted(MAPPING.items()))]
        + [Bug(19999, None, "openjpeg"), Bug(20001, None, "freetype2"), Bug(None, 42479999, "lcms"),
           Bug(None, 386128948, "php"), Bug(None, 401234567, "wireshark")])


def ossfuzz_truth(item_id: str, number: int | None) -> Truth:
    if number is None:
        return Truth(item_id)
    canonical = MAPPING.get(number, number)
    return Truth(item_id, frozenset({f"ossfuzz:{canonical}"}))


def bug_number(bug: Bug, prefer_old: bool) -> int:
    """The id one dataset writes for the bug: old or new scheme, whichever the bug has."""
    if bug.old is not None and (prefer_old or bug.new is None):
        return bug.old
    return bug.new  # type: ignore[return-value]


def crash_spec(bug: Bug, variant: int) -> str:
    return (f"AddressSanitizer: heap-buffer-overflow in function `parse_{bug.project}_{variant}` in file "
            f"`src/{bug.project}.c`")


# --- GitHub pull requests --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Repo:
    canonical: str  # lowercased owner/name after renames
    spellings: tuple[str, ...]  # as datasets write it: GitHub case, lowercase, old names
    language: str  # Multi-SWE-bench folder


REPOS = [
    Repo("clap-rs/clap", ("kbknapp/clap-rs", "clap-rs/clap", "KBKnapp/Clap-RS"), "rust"),
    Repo("prettier/prettier", ("jlongster/prettier", "prettier/prettier", "Prettier/Prettier"), "ts"),
    Repo("burntsushi/ripgrep", ("BurntSushi/ripgrep", "burntsushi/ripgrep"), "rust"),
    Repo("tokio-rs/tokio", ("tokio-rs/tokio", "Tokio-RS/Tokio"), "rust"),
    Repo("alibaba/fastjson2", ("alibaba/fastjson2", "Alibaba/FastJSON2"), "java"),
    Repo("mui/material-ui", ("mui/material-ui", "MUI/Material-UI"), "ts"),
    Repo("kotlin/kotlinx.coroutines", ("Kotlin/kotlinx.coroutines", "kotlin/kotlinx.coroutines"), "kotlin"),
    Repo("cli/cli", ("cli/cli", "CLI/cli"), "go"),
    Repo("jqlang/jq", ("jqlang/jq", "JQLang/jq"), "c"),
]


@dataclass(frozen=True)
class Task:
    repo: Repo
    pr: int
    base: str  # lowercase 40-hex
    patch: str


def _tasks() -> list[Task]:
    out = []
    for r_index, repo in enumerate(REPOS):
        for pr in (100 + r_index * 37, 2000 + r_index * 11):
            key = f"{repo.canonical}#{pr}"
            out.append(Task(repo, pr, sha("base " + key), diff(f"src/{repo.canonical.split('/')[1]}_{pr}.rs",
                                                                  f"old {key}", f"new {key}")))
    # Two PRs of one repo at one base commit: the same base, another PR, is not the same task.
    tokio = REPOS[3]
    shared = sha("tokio shared base")
    out += [Task(tokio, 2146, shared, diff("tokio/src/a.rs", "a", "b")),
            Task(tokio, 2150, shared, diff("tokio/src/c.rs", "c", "d"))]
    return out


TASKS = _tasks()


def alt_base(task: Task) -> str:
    """Another base commit of the same PR (a set that rebuilt the task elsewhere)."""
    return sha("other base " + task.repo.canonical + str(task.pr))


def other_patch(task: Task) -> str:
    return diff(f"docs/{task.pr}.md", "unrelated", "change")


def pr_truth(item_id: str | None, repo: str | None, pr: int | None, base: str | None, patch: str | None) -> Truth:
    """The truth of an SWE row from what the row holds (repo as written, PR, base commit)."""
    keys = set()
    base = base.lower() if base else None
    if pr is not None and repo:
        lowered = repo.lower()
        keys.add(f"repo_pr:{RENAMES.get(lowered, lowered)}#{pr}")
    if pr is not None and base:
        keys.add(f"base_pr:{base}#{pr}")
    return Truth(item_id, frozenset(keys), base, pr is not None, patch)


def instance_id(repo: str, pr: int | str, lower: bool) -> str:
    owner, name = repo.split("/")
    text = f"{owner}__{name}-{pr}"
    return text.lower() if lower else text


# --- row plans: what hypothesis draws --------------------------------------------------------------------


@dataclass(frozen=True)
class RowPlan:
    """One training row, before rendering. `kind`:

    - `task`: a well-formed row of `index` (a bug or a PR task);
    - `no_id`: the row has no id;
    - `bad_id`: the id cannot be parsed (SWE: no PR number in it; the row keeps its base commit and, with
      `same_fix`, the task's own patch);
    - `repeat`: an exact copy of an earlier row (`index` picks which);
    - `same_id`: an earlier row's id again with other content (`index` picks which);
    - `bad_line`: a line that is not JSON (JSON-lines layouts only).
    """

    kind: str
    index: int
    spelling: int = 0  # which spelling of the repo / which id scheme of the bug
    variant: int = 0  # text variant; SWE: 1 = the PR at another base commit, 2 = no base commit
    same_fix: bool = False
    shard: int = 0


SPECIAL_KINDS = ("no_id", "bad_id", "repeat", "same_id")


@st.composite
def row_plans(draw, universe: int, jsonl: bool, shards: int = 1):
    """Well-formed rows, then 0-2 of each special kind inserted at drawn places (so that every few examples
    hold each of them, whatever the draw)."""

    def plan(kind: str) -> RowPlan:
        return RowPlan(kind=kind, index=draw(st.integers(0, 10 * universe)), spelling=draw(st.integers(0, 5)),
                       variant=draw(st.integers(0, 3)), same_fix=draw(st.booleans()),
                       shard=draw(st.integers(0, shards - 1)))

    plans = [plan("task") for _ in range(draw(st.integers(2, 8)))]
    for kind in SPECIAL_KINDS + (("bad_line",) if jsonl else ()):
        for _ in range(draw(st.integers(0, 2))):
            # copies go after the first row so there is something to copy
            plans.insert(draw(st.integers(1, len(plans))), plan(kind))
    return plans


@st.composite
def bench_choice(draw, universe: int):
    """Which tasks/bugs the benchmark holds: none, all, or some of the universe; plus spelling draws."""
    mode = draw(st.sampled_from(["none", "all", "some", "some"]))
    if mode == "none":
        chosen: list[int] = []
    elif mode == "all":
        chosen = list(range(universe))
    else:
        chosen = sorted(draw(st.sets(st.integers(0, universe - 1), min_size=1, max_size=universe)))
    spellings = [draw(st.integers(0, 5)) for _ in chosen]
    return list(zip(chosen, spellings, strict=True))


# --- file writers ----------------------------------------------------------------------------------------


def write_parquet(path: Path, rows: list[dict], schema: pa.Schema | None = None, row_group_size: int | None = None):
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path, row_group_size=row_group_size)


def write_jsonl(path: Path, rows: list[object]) -> None:
    """Rows as JSON lines; a str row is written as it is (a line that is not JSON)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [r if isinstance(r, str) else json.dumps(r) for r in rows]
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")


def write_csv(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    columns = list(dict.fromkeys(c for r in rows for c in r))
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        for row in rows:
            writer.writerow({c: "" if row.get(c) is None else row[c] for c in columns})


# Truncated lines as a damaged download leaves them.
BAD_LINES = ['{"instance_id": "php.ossfuzz-4249', '{"org": "mui", "repo": "material-ui", "number": 1',
             "not json at all"]


def resolve_copies(plans: list[RowPlan], render):
    """Render plans in order; `repeat` and `same_id` copy an earlier rendered row (of any shard).

    `render(plan)` → (row, truth); `same_id` rows are made by `render.other_content(row, truth, plan)`.
    Returns [(plan, row, truth)] with truth None for a bad line.
    """
    out: list[tuple[RowPlan, object, Truth | None]] = []
    for plan in plans:
        earlier = [(r, t) for _, r, t in out if t is not None]
        if plan.kind == "bad_line":
            out.append((plan, BAD_LINES[plan.index % len(BAD_LINES)], None))
        elif plan.kind == "repeat" and earlier:
            row, truth = earlier[plan.index % len(earlier)]
            out.append((plan, json.loads(json.dumps(row)), truth))
        elif plan.kind == "same_id" and [e for e in earlier if e[1].item_id]:
            with_id = [e for e in earlier if e[1].item_id]
            row, truth = with_id[plan.index % len(with_id)]
            out.append((plan, *render.other_content(json.loads(json.dumps(row)), truth, plan)))
        else:
            kind = plan.kind if plan.kind in ("task", "no_id", "bad_id") else "task"
            out.append((plan, *render(replace(plan, kind=kind))))
    return out


# --- cyber layouts ---------------------------------------------------------------------------------------


class MimoRows:
    """MiMo-V2.6-RL-oss `cyber.parquet` rows: `extra_info.instance_id` = `arvo_<old or new id>`."""

    def __call__(self, plan: RowPlan):
        bug = BUGS[plan.index % len(BUGS)]
        number = bug_number(bug, prefer_old=plan.spelling % 2 == 0)
        if plan.kind == "no_id":
            return self.row(None, bug, plan.variant, plan.index), Truth(None)
        if plan.kind == "bad_id":
            item_id = f"arvo_{bug.project}"  # no trailing number
            return self.row(item_id, bug, plan.variant, plan.index), Truth(item_id)
        item_id = f"arvo_{number}"
        return self.row(item_id, bug, plan.variant, plan.index), ossfuzz_truth(item_id, number)

    @staticmethod
    def row(item_id: str | None, bug: Bug, variant: int, index: int = 0) -> dict:
        spec = crash_spec(bug, variant)
        return {"data_source": "cyber", "prompt": [{"role": "user", "content": spec}],
                "extra_info": {"index": index, "instance_id": item_id,
                               "instance_json": json.dumps({"problem_statement": f"Fix the crash: {spec}",
                                                            "project_name": bug.project})}}

    def other_content(self, row: dict, truth: Truth, plan: RowPlan):
        row["prompt"][0]["content"] += f" (variant {plan.variant + 10})"
        return row, truth


MIMO_SCHEMA = pa.schema([
    ("data_source", pa.string()),
    ("prompt", pa.list_(pa.struct([("role", pa.string()), ("content", pa.string())]))),
    ("extra_info", pa.struct([("index", pa.int64()), ("instance_id", pa.string()), ("instance_json", pa.string())])),
])


def write_mimo(folder: Path, rows: list[dict]) -> None:
    write_parquet(folder / "cyber.parquet", rows, MIMO_SCHEMA)


class CyberGymRows:
    """CyberGym `tasks.json` objects: `task_id` = `arvo:<old id>` or `oss-fuzz:<new id>`."""

    def __call__(self, plan: RowPlan):
        bug = BUGS[plan.index % len(BUGS)]
        if plan.kind == "no_id":
            return self.row(None, bug, plan.variant), Truth(None)
        if plan.kind == "bad_id":
            item_id = f"arvo:{bug.project}"
            return self.row(item_id, bug, plan.variant), Truth(item_id)
        # CyberGym writes bugs known under an old id as `arvo:<old>`, the others as `oss-fuzz:<new>`.
        number = bug_number(bug, prefer_old=True)
        item_id = f"arvo:{number}" if number == bug.old else f"oss-fuzz:{number}"
        return self.row(item_id, bug, plan.variant), ossfuzz_truth(item_id, number)

    @staticmethod
    def row(task_id: str | None, bug: Bug, variant: int) -> dict:
        kind, _, number = (task_id or "arvo:0").partition(":")
        base = f"data/{kind}/{number}"
        return {
            "task_id": task_id, "project_name": bug.project, "project_homepage": f"https://{bug.project}.example",
            "project_main_repo": f"https://git.example/{bug.project}", "project_language": "c",
            "vulnerability_description": f"A memory error in {bug.project} on crafted input ({variant}).",
            "task_difficulty": {"level0": [f"{base}/repo-vul.tar.gz"],
                                "level1": [f"{base}/repo-vul.tar.gz", f"{base}/description.txt"],
                                "level2": [f"{base}/repo-vul.tar.gz", f"{base}/description.txt", f"{base}/error.txt"],
                                "level3": [f"{base}/repo-vul.tar.gz", f"{base}/repo-fix.tar.gz", f"{base}/error.txt",
                                           f"{base}/description.txt", f"{base}/patch.diff"]},
        }

    def other_content(self, row: dict, truth: Truth, plan: RowPlan):
        row["vulnerability_description"] += f" Also seen with variant {plan.variant + 10}."
        return row, truth


def write_cybergym(folder: Path, rows: list[dict]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tasks.json").write_text(json.dumps(rows, indent=1), encoding="utf-8")


class SecBenchRows:
    """SEC-bench jsonl rows: `<project>.ossfuzz-<new id>` (always the new scheme) or `<project>.cve-<y>-<n>`."""

    def __call__(self, plan: RowPlan):
        bug = BUGS[plan.index % len(BUGS)]
        if plan.kind == "no_id":
            return self.row(None, bug, plan.variant), Truth(None)
        if plan.kind == "bad_id":
            item_id = f"{bug.project}.build-failure"
            return self.row(item_id, bug, plan.variant), Truth(item_id)
        if bug.new is None or plan.spelling == 5:  # a CVE task
            year, number = 2020 + plan.index % 5, 40000 + plan.index
            item_id = f"{bug.project}.cve-{year}-{number}"
            return self.row(item_id, bug, plan.variant), Truth(item_id, frozenset({f"cve:CVE-{year}-{number}"}))
        item_id = f"{bug.project}.ossfuzz-{bug.new}"
        return self.row(item_id, bug, plan.variant), ossfuzz_truth(item_id, bug.new)

    @staticmethod
    def row(item_id: str | None, bug: Bug, variant: int) -> dict:
        return {"instance_id": item_id, "repo": f"{bug.project}/{bug.project}",
                "base_commit": sha(f"secbench {bug.project} {bug.canonical}"),
                "patch": diff(f"src/{bug.project}.c", f"len = {bug.canonical};", f"len = {bug.canonical} + 1;"),
                "sanitizer_report": f"==1==ERROR: AddressSanitizer: heap-buffer-overflow in parse_{bug.project}",
                "bug_description": f"Overflow in {bug.project} ({variant})", "bug_report": "", "work_dir": "/src"}

    def other_content(self, row: dict, truth: Truth, plan: RowPlan):
        row["bug_description"] += f" (reported again, {plan.variant + 10})"
        return row, truth


# --- SWE layouts -----------------------------------------------------------------------------------------


def _pr_row_parts(plan: RowPlan) -> tuple[Task, str, str | None]:
    task = TASKS[plan.index % len(TASKS)]
    spelling = task.repo.spellings[plan.spelling % len(task.repo.spellings)]
    base = {0: task.base, 1: alt_base(task), 2: None}.get(plan.variant, task.base.upper())
    return task, spelling, base


class RebenchRows:
    """SWE-rebench-V2 rows: `instance_id` = lowercase `owner__repo-PR` (the PR comes from the id), `repo`
    in GitHub case (old names included), `base_commit`, `problem_statement`, `patch`, `language`."""

    def __call__(self, plan: RowPlan):
        task, repo, base = _pr_row_parts(plan)
        patch = task.patch
        if plan.kind == "no_id":
            return self.row(None, repo, base, patch, plan.variant, task), Truth(None)
        if plan.kind == "bad_id":
            # No PR number in the id: only the base commit is known, joined only with the identical fix.
            item_id = instance_id(repo, "main", lower=True)
            patch = task.patch if plan.same_fix else other_patch(task)
            return (self.row(item_id, repo, task.base, patch, plan.variant, task),
                    Truth(item_id, frozenset(), task.base, False, patch))
        item_id = instance_id(repo, task.pr, lower=True)
        return self.row(item_id, repo, base, patch, plan.variant, task), pr_truth(item_id, repo, task.pr, base, patch)

    @staticmethod
    def row(item_id, repo, base, patch, variant, task) -> dict:
        return {"instance_id": item_id, "repo": repo, "base_commit": base or "",
                "problem_statement": f"Issue of {task.repo.canonical}#{task.pr} ({variant})", "patch": patch,
                "language": task.repo.language}

    def other_content(self, row: dict, truth: Truth, plan: RowPlan):
        row["problem_statement"] += f" Rewritten ({plan.variant + 10})."
        return row, truth


REBENCH_SCHEMA = pa.schema([(c, pa.string()) for c in
                            ("instance_id", "repo", "base_commit", "problem_statement", "patch", "language")])


class PrsRows(RebenchRows):
    """SWE-rebench-V2-PRs rows: as V2 plus an int64 `pull_number` column (the PR comes from it)."""

    def __call__(self, plan: RowPlan):
        row, truth = super().__call__(plan)
        task = TASKS[plan.index % len(TASKS)]
        row = {k: v for k, v in row.items() if k != "language"}
        # A row without an id has no PR number either (else the tool makes its id from repo + PR).
        row["pull_number"] = task.pr if truth.has_pr else None
        row["problem_statement"] = "LLM-written: " + row["problem_statement"]
        return row, truth


PRS_SCHEMA = pa.schema([("instance_id", pa.string()), ("repo", pa.string()), ("pull_number", pa.int64()),
                        ("base_commit", pa.string()), ("problem_statement", pa.string()), ("patch", pa.string())])


class MsbRows:
    """Multi-SWE-bench rows (`<language>/<org>__<repo>_dataset.jsonl`): `org`, `repo`, `number`,
    `base.sha`, `resolved_issues`, `fix_patch`, `test_patch`, `instance_id` = `{org}__{repo}-{number}`."""

    def __call__(self, plan: RowPlan):
        task, repo, base = _pr_row_parts(plan)
        if plan.kind == "no_id":  # neither an id nor a number to make one from
            return self.row(repo, None, base, task, plan.variant, with_id=False), Truth(None)
        if plan.kind == "bad_id":
            # No number, and an id without one: only the base commit is known. (`number` stays an integer
            # column: JSON lines of one file whose types drift are another question.)
            row = self.row(repo, None, task.base, task, plan.variant)
            row["instance_id"] = instance_id(repo, "unknown", lower=False)
            if not plan.same_fix:
                row["fix_patch"] = other_patch(task)
            return row, Truth(row["instance_id"], frozenset(), task.base, False, row["fix_patch"])
        row = self.row(repo, task.pr, base, task, plan.variant)
        return row, pr_truth(row["instance_id"], repo, task.pr, base, task.patch)

    @staticmethod
    def row(repo, number, base, task, variant, with_id=True) -> dict:
        org, name = repo.split("/")
        row = {"org": org, "repo": name, "number": number, "state": "closed", "title": f"Fix #{number}",
               "body": f"PR body ({variant})", "base": {"label": f"{org}:master", "ref": "master", "sha": base or ""},
               "resolved_issues": [{"number": 1, "title": f"Bug in {name}", "body": f"Details ({variant})"}],
               "fix_patch": task.patch, "test_patch": diff("tests/t.rs", "t0", "t1"),
               "fixed_tests": {"t": {"run": "PASS", "test": "FAIL", "fix": "PASS"}}}
        if with_id:
            row["instance_id"] = instance_id(repo, number, lower=False)
        return row

    def other_content(self, row: dict, truth: Truth, plan: RowPlan):
        row["body"] += f" Edited ({plan.variant + 10})."
        return row, truth


class PolyRows:
    """SWE-PolyBench `test.csv` rows: `instance_id` `owner__repo-PR`, `repo`, `pull_number` often written
    as a float (`19284.0`), `base_commit`, `problem_statement`, `patch` and the harness columns."""

    def __call__(self, plan: RowPlan):
        task, repo, base = _pr_row_parts(plan)
        if plan.kind == "no_id":
            row = self.row(None, repo, "", base, task, plan.variant)
            return row, Truth(None)
        if plan.kind == "bad_id":
            item_id = instance_id(repo, "abc", lower=False)
            patch = task.patch if plan.same_fix else other_patch(task)
            row = self.row(item_id, repo, "abc", task.base, task, plan.variant, patch)
            return row, Truth(item_id, frozenset(), task.base, False, patch)
        # Some rows lack the repo: base_pr still names the task. (Such a row keeps the task's own base, so
        # that reading the PR from its id or not gives the same answer.)
        written = "" if plan.spelling == 5 else repo
        base = task.base if not written else base
        item_id = instance_id(repo, task.pr, lower=False)
        number = f"{task.pr}.0" if plan.spelling % 2 == 0 else str(task.pr)
        row = self.row(item_id, written, number, base, task, plan.variant)
        return row, pr_truth(item_id, written, task.pr, base, task.patch)

    @staticmethod
    def row(item_id, repo, pull_number, base, task, variant, patch=None) -> dict:
        return {"instance_id": item_id or "", "repo": repo, "base_commit": base or "",
                "patch": patch or task.patch, "test_patch": diff("test_a.py", "t", "u"),
                "problem_statement": f"Problem of {task.repo.canonical}#{task.pr} ({variant})",
                "F2P": "['test_a']", "P2P": "[]", "language": "Python", "Dockerfile": "FROM python:3.11",
                "test_command": "pytest", "task_category": "Bug Fix", "pull_number": pull_number}

    def other_content(self, row: dict, truth: Truth, plan: RowPlan):
        row["problem_statement"] += f" Rewritten ({plan.variant + 10})."
        return row, truth


# --- benchmarks ------------------------------------------------------------------------------------------


# A bug no training row holds: every benchmark has it, so one that matches nothing still has an item.
OUTSIDE = Bug(None, 42499999, "mruby")


def bench_cyber(name: str, folder: Path, chosen: list[tuple[int, int]]) -> Layout:
    """A cyber benchmark holding the chosen bugs (and OUTSIDE), in its own id scheme."""
    layout = Layout(name, folder)
    bugs = [(BUGS[i % len(BUGS)], s) for i, s in chosen]
    if name == "cybergym":
        rendered = [CyberGymRows()(RowPlan("task", BUGS.index(b), s)) for b, s in bugs]
        rendered.append(outside_row(CyberGymRows.row("oss-fuzz:42499999", OUTSIDE, 0), "oss-fuzz:42499999"))
        layout.files["tasks.json"] = rendered
        write_cybergym(folder, [r for r, _ in rendered])
    elif name == "mimo-cyber":
        rendered = [MimoRows()(RowPlan("task", BUGS.index(b), s)) for b, s in bugs]
        rendered.append(outside_row(MimoRows.row("arvo_42499999", OUTSIDE, 0), "arvo_42499999"))
        layout.files["cyber.parquet"] = rendered
        write_mimo(folder, [r for r, _ in rendered])
    else:  # sec-bench: its OSS-Fuzz ids are new ids, so only bugs known in the new scheme
        rendered = [SecBenchRows()(RowPlan("task", BUGS.index(b), 0)) for b, _ in bugs if b.new is not None]
        rendered.append(outside_row(SecBenchRows.row("mruby.ossfuzz-42499999", OUTSIDE, 0), "mruby.ossfuzz-42499999"))
        layout.files["data/eval-oss.jsonl"] = [x for x in rendered if "ossfuzz" in str(x[1].item_id)]
        layout.files["data/eval-cve.jsonl"] = [x for x in rendered if "ossfuzz" not in str(x[1].item_id)]
        for relpath, rows in layout.files.items():
            write_jsonl(folder / relpath, [r for r, _ in rows])
    return layout


def outside_row(row: dict, item_id: str) -> tuple[dict, Truth]:
    return row, ossfuzz_truth(item_id, OUTSIDE.new)


UNRELATED = Task(Repo("psf/requests", ("psf/requests",), "python"), 2317, sha("requests base"),
                 diff("requests/api.py", "a", "b"))


def bench_swe(name: str, folder: Path, chosen: list[tuple[int, int]]) -> Layout:
    """An SWE benchmark holding the chosen tasks (plus one unrelated task), spelled its own way."""
    layout = Layout(name, folder)
    tasks = [(TASKS[i % len(TASKS)], s) for i, s in chosen]
    if name == "multi-swe-bench":
        by_file: dict[str, list] = {}
        for task, _ in tasks:
            # Multi-SWE-bench writes repos under their current names, as GitHub shows them.
            repo = [sp for sp in task.repo.spellings if sp.lower() == task.repo.canonical][0]
            row = MsbRows.row(repo, task.pr, task.base, task, 0)
            relpath = f"{task.repo.language}/{repo.replace('/', '__')}_dataset.jsonl"
            by_file.setdefault(relpath, []).append((row, pr_truth(row["instance_id"], repo, task.pr, task.base,
                                                                   task.patch)))
        # The unrelated task, so that a benchmark that matches nothing still has an item.
        row = MsbRows.row("psf/requests", 2317, UNRELATED.base, UNRELATED, 0)
        by_file["go/psf__requests_dataset.jsonl"] = [(row, pr_truth(row["instance_id"], "psf/requests", 2317,
                                                                    UNRELATED.base, UNRELATED.patch))]
        for relpath, rows in sorted(by_file.items()):
            layout.files[relpath] = rows
            write_jsonl(folder / relpath, [r for r, _ in rows])
    elif name == "swe-polybench":
        rows = []
        for task, s in [*tasks, (UNRELATED, 0)]:
            repo = task.repo.spellings[s % len(task.repo.spellings)]
            # Float PR numbers and upper-case base commits, as the CSV has them.
            base = task.base.upper() if s % 2 else task.base
            item_id = instance_id(repo, task.pr, lower=False)
            row = PolyRows.row(item_id, repo, f"{task.pr}.0" if s % 3 else str(task.pr), base, task, 0)
            rows.append((row, pr_truth(item_id, repo, task.pr, base, task.patch)))
        layout.files["test.csv"] = rows
        write_csv(folder / "test.csv", [r for r, _ in rows])
        # The Verified subset beside it (the adapter reads membership from there).
        write_csv(folder.parent / "SWE-PolyBench_Verified" / "test.csv", [r for r, _ in rows[:1]])
        layout.extra_data["swe-polybench-verified"] = folder.parent / "SWE-PolyBench_Verified"
    else:  # swe-bench-multilingual: repos all lowercase, the PR from the lowercase id
        rows = []
        for task, _ in [*tasks, (UNRELATED, 0)]:
            repo = task.repo.canonical
            item_id = instance_id(repo, task.pr, lower=True)
            row = {"repo": repo, "instance_id": item_id, "base_commit": task.base, "patch": task.patch,
                   "test_patch": diff("tests/t.py", "a", "b"), "problem_statement": f"Issue {item_id}",
                   "hints_text": "", "created_at": "2020-01-01T00:00:00Z", "version": "1.0",
                   "FAIL_TO_PASS": "[]", "PASS_TO_PASS": "[]", "environment_setup_commit": sha("env" + repo)}
            rows.append((row, pr_truth(item_id, repo, task.pr, task.base, task.patch)))
        relpath = "data/test-00000-of-00001.parquet"
        layout.files[relpath] = rows
        write_parquet(folder / relpath, [r for r, _ in rows])
    return layout


BENCH_FOLDERS = {"cybergym": "cybergym", "mimo-cyber": "MiMo-V2.6-RL-oss", "sec-bench": "SEC-bench",
                 "multi-swe-bench": "Multi-SWE-bench", "swe-polybench": "SWE-PolyBench",
                 "swe-bench-multilingual": "SWE-bench_Multilingual"}


# --- training sets ---------------------------------------------------------------------------------------

# name → (rows renderer, size of its universe, benchmarks it is filtered against, JSON lines?)
TRAIN_LAYOUTS = {
    "mimo-cyber": (MimoRows, len(BUGS), ("cybergym", "sec-bench"), False),
    "cybergym": (CyberGymRows, len(BUGS), ("mimo-cyber", "sec-bench"), False),
    "sec-bench": (SecBenchRows, len(BUGS), ("cybergym", "mimo-cyber"), True),
    "swe-rebench-v2": (RebenchRows, len(TASKS), ("multi-swe-bench", "swe-polybench", "swe-bench-multilingual"), False),
    "swe-rebench-v2-prs": (PrsRows, len(TASKS), ("multi-swe-bench", "swe-polybench", "swe-bench-multilingual"),
                           False),
    "multi-swe-bench": (MsbRows, len(TASKS), ("swe-polybench", "swe-bench-multilingual"), True),
    "swe-polybench": (PolyRows, len(TASKS), ("multi-swe-bench", "swe-bench-multilingual"), False),
}
TRAIN_FOLDERS = {"mimo-cyber": "MiMo-V2.6-RL-oss", "cybergym": "cybergym", "sec-bench": "SEC-bench",
                 "swe-rebench-v2": "SWE-rebench-V2", "swe-rebench-v2-prs": "SWE-rebench-V2-PRs",
                 "multi-swe-bench": "Multi-SWE-bench", "swe-polybench": "SWE-PolyBench"}


def write_train(name: str, folder: Path, plans: list[RowPlan]) -> Layout:
    """Render the plans into `name`'s layout under `folder`."""
    renderer_cls, _, _, jsonl = TRAIN_LAYOUTS[name]
    rendered = resolve_copies(plans, renderer_cls())
    layout = Layout(name, folder)
    if name == "mimo-cyber":
        layout.files["cyber.parquet"] = [(r, t) for _, r, t in rendered]
        write_mimo(folder, [r for _, r, _ in rendered])
    elif name == "cybergym":
        layout.files["tasks.json"] = [(r, t) for _, r, t in rendered]
        write_cybergym(folder, [r for _, r, _ in rendered])
    elif name == "sec-bench":
        # Rows spread over its two files by the plan's shard draw.
        for relpath, shard in (("data/eval-oss.jsonl", 0), ("data/eval-cve.jsonl", 1)):
            layout.files[relpath] = [(r, t) for p, r, t in rendered if p.shard % 2 == shard]
            write_jsonl(folder / relpath, [r for r, _ in layout.files[relpath]])
    elif name == "swe-rebench-v2":
        relpath = "data/train-00000-of-00001.parquet"
        layout.files[relpath] = [(r, t) for _, r, t in rendered]
        write_parquet(folder / relpath, [r for _, r, _ in rendered], REBENCH_SCHEMA, row_group_size=3)
    elif name == "swe-rebench-v2-prs":
        shards = 1 + max(p.shard for p in plans)
        for shard in range(shards):
            relpath = f"data/train-{shard:05d}-of-{shards:05d}.parquet"
            layout.files[relpath] = [(r, t) for p, r, t in rendered if p.shard == shard]
            write_parquet(folder / relpath, [r for r, _ in layout.files[relpath]], PRS_SCHEMA, row_group_size=2)
    elif name == "multi-swe-bench":
        # One file per repo in its language folder; a bad line goes to the file of the row before it.
        by_file: dict[str, list] = {}
        current = "rust/tokio-rs__tokio_dataset.jsonl"
        for _, row, truth in rendered:
            if truth is not None:
                repo = TASK_BY_MSB.get((row["org"].lower(), row["repo"].lower()))
                current = f"{repo.language}/{row['org']}__{row['repo']}_dataset.jsonl"
            by_file.setdefault(current, []).append((row, truth))
        for relpath, rows in sorted(by_file.items()):
            layout.files[relpath] = rows
            write_jsonl(folder / relpath, [r for r, _ in rows])
    elif name == "swe-polybench":
        layout.files["test.csv"] = [(r, t) for _, r, t in rendered]
        write_csv(folder / "test.csv", [r for _, r, _ in rendered])
        write_csv(folder.parent / "SWE-PolyBench_Verified" / "test.csv", [r for _, r, _ in rendered[:1]])
        layout.extra_data["swe-polybench-verified"] = folder.parent / "SWE-PolyBench_Verified"
    else:  # pragma: no cover
        raise ValueError(name)
    return layout


TASK_BY_MSB = {tuple(sp.lower().split("/")): repo for repo in REPOS for sp in repo.spellings}


class Case:
    """A generated filter run: the training layout, its benchmark layouts and every `--data` entry.
    (A plain class: hypothesis prints dataclasses field by field, every row dict of every file.)"""

    def __init__(self, train: Layout, benches: list[Layout]) -> None:
        self.train = train
        self.benches = benches

    def data(self) -> dict[str, Path]:
        out = {self.train.name: self.train.folder, "arvo": DEMO_ARVO}
        for layout in [self.train, *self.benches]:
            out.update(layout.extra_data)
        out.update({b.name: b.folder for b in self.benches})
        return out

    def __repr__(self) -> str:  # hypothesis prints every draw: the short story, not every row dict
        return f"Case(train={self.train.name}, benches={[b.name for b in self.benches]})"

    def describe(self) -> str:
        lines = [f"train {self.train.name}: " + ", ".join(f"{f} ({len(r)} rows)" for f, r in self.train.files.items())]
        for relpath, rows in self.train.files.items():
            for position, (_, truth) in enumerate(rows):
                lines.append(f"  {relpath}[{position}] " + ("<not JSON>" if truth is None else
                                                            f"id={truth.item_id} keys={sorted(truth.keys)}"))
        for bench in self.benches:
            lines.append(f"bench {bench.name}: " + ", ".join(sorted(t.item_id or "-" for t in bench.truths())))
        return "\n".join(lines)


@st.composite
def cases(draw, train: str, root_factory):
    """A training layout with generated rows and one or two of its benchmarks, written under a new folder."""
    _, universe, bench_names, jsonl = TRAIN_LAYOUTS[train]
    shards = 3 if train in ("swe-rebench-v2-prs", "sec-bench") else 1
    plans = draw(row_plans(universe, jsonl, shards))  # the first is a task: a set without ids is refused
    benches = draw(st.lists(st.sampled_from(bench_names), min_size=1, max_size=2, unique=True))
    choices = [draw(bench_choice(universe)) for _ in benches]
    root = root_factory()
    layout = write_train(train, root / "data" / TRAIN_FOLDERS[train], plans)
    bench_layouts = []
    for name, chosen in zip(benches, choices, strict=True):
        folder = root / "data" / "bench" / BENCH_FOLDERS[name]
        maker = bench_cyber if name in ("cybergym", "mimo-cyber", "sec-bench") else bench_swe
        bench_layouts.append(maker(name, folder, chosen))
    return Case(layout, bench_layouts)
