"""Generated training mixes and benchmarks for the mix property tests, and the writers that put them on disk
(JSON lines, parquet, CSV) together with the rows as a reader sees them (what the oracle reads).

A training mix holds, in one id column, OSS-Fuzz ids in every documented spelling (old and new ids of one
bug), CVE ids, GitHub PRs in their three spellings (repo names in several cases and under their old names),
fix-commit URLs, integers and floats, junk that no scheme takes, blanks, nulls and repeated rows; beside it
optional `repo`, `pr` and `base_commit` columns. Benchmarks: the demo CyberGym (registered), an OSS-Fuzz/CVE
benchmark and a SWE benchmark of our own, both read by the same columns as the training set.

Only documented spellings are generated: the recognisers docstring lists `arvo:N`, `arvo_N`, `oss-fuzz:N`,
`<project>.ossfuzz-N` and the two tracker URLs. Spellings the code also takes but no document names
(`ARVO-N`, `ossfuzz_N`, upper-case prefixes) are left out, and junk is drawn from an alphabet that cannot
spell them by chance.
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import strategies as st
from mix_oracle import DEMO, Columns, Data, arvo_mapping, cybergym, id_text

DATA = {"cybergym": DEMO / "cybergym", "arvo": DEMO / "arvo"}
FORMATS = ("jsonl", "parquet", "csv")
FIELDS = ("task", "repo", "pr", "base_commit", "note")


def sha(tag: str) -> str:
    return hashlib.sha1(tag.encode()).hexdigest()


# --- the universe -------------------------------------------------------------------------------------------

# OSS-Fuzz bugs as (old id, new id): the demo mapping's pairs, CyberGym's new-only and old-only bugs, and bugs
# no benchmark holds.
OSSFUZZ_BUGS: tuple[tuple[int | None, int | None], ...] = (
    *sorted(arvo_mapping().items()),
    (None, 386128948),
    (10190, None),
    (20001, None),
    (None, 42499999),
    (99999, None),
)
PROJECTS = ("libxml2", "php", "c-blosc2", "mruby")
CVES = ("CVE-2023-50246", "CVE-2021-3156", "CVE-1999-0001", "CVE-2024-123456")
CVE_PROJECTS = ("jq", "openssl")
FIXES = tuple(sha(f"fix {i}") for i in range(4))


@dataclass(frozen=True)
class PrTask:
    spellings: tuple[str, ...]  # the repo as datasets write it (first: as GitHub shows it)
    pr: int
    base: str

    @property
    def canonical(self) -> str:
        return self.spellings[0].lower()


PR_TASKS = (
    PrTask(("clap-rs/clap", "kbknapp/clap-rs", "Clap-RS/Clap"), 941, sha("clap base")),
    PrTask(("BurntSushi/ripgrep", "burntsushi/ripgrep"), 1234, sha("ripgrep base")),
    PrTask(("prettier/prettier", "jlongster/prettier"), 77, sha("prettier base")),
    PrTask(("Owner/Repo", "owner/repo", "OWNER/REPO"), 12, sha("repo base")),
    PrTask(("Owner/Repo", "owner/repo"), 13, sha("repo base")),  # another PR from the same base commit
    PrTask(("google/oss-fuzz",), 10340, sha("oss-fuzz base")),  # a repo whose name holds `fuzz`
    PrTask(("someone/ripgrep-fork",), 1234, sha("ripgrep base")),  # ripgrep's PR under a name no rename knows
)
UNRELATED = PrTask(("psf/requests",), 2317, sha("requests base"))

# Values no scheme takes, by the documented rules: an issue 0, signs, fractions, exponents, hex, 13 digits,
# CVE ids before 1999 / with 3 digits / touching a letter / with underscores, PR 0, an issue link, a bad sha,
# a GHSA id without a CVE column.
JUNK = ("arvo:0", "arvo:-1", "arvo:10055.5", "arvo:1e5", "arvo:0x12", "arvo:1234567890123", "arvo:",
        "CVE-1998-1234", "CVE-2023-123", "xcve-2023-1234", "cve_2023_1234", "owner/repo#0", "owner__repo-abc",
        "https://github.com/owner/repo/issues/12", "https://github.com/o/r/commit/xyz", "task-7", "10055",
        "GHSA-7rjr-3q55-vv33")
SAFE_TEXT = st.text(alphabet="abcdxyz-_. ", min_size=1, max_size=10)  # cannot spell an id of any scheme


# --- spellings ----------------------------------------------------------------------------------------------


def ossfuzz_spellings(number: int, project: str) -> list[str]:
    return [f"arvo:{number}", f"arvo_{number}", f"oss-fuzz:{number}", f"{project}.ossfuzz-{number}",
            f"https://bugs.chromium.org/p/oss-fuzz/issues/detail?id={number}",
            f"bugs.chromium.org/p/oss-fuzz/issues/detail?id={number}",
            f"https://issues.oss-fuzz.com/issues/{number}", f"issues.oss-fuzz.com/issues/{number}"]


def pr_spellings(repo: str, number: int) -> list[str]:
    owner, name = repo.split("/")
    return [f"{owner}__{name}-{number}", f"{repo}#{number}", f"https://github.com/{repo}/pull/{number}",
            f"github.com/{repo}/pull/{number}"]


def commit_url(repo: str, fix: str, upper: bool) -> str:
    return f"https://github.com/{repo}/commit/{fix.upper() if upper else fix}"


@st.composite
def bug_numbers(draw) -> int:
    old, new = draw(st.sampled_from(OSSFUZZ_BUGS))
    return draw(st.sampled_from([n for n in (old, new) if n is not None]))


def row(task=None, repo=None, pr=None, base=None, note="") -> dict:
    return {"task": task, "repo": repo, "pr": pr, "base_commit": base, "note": note}


@st.composite
def padded(draw, text: str) -> str:
    return draw(st.sampled_from(["", " ", "  "])) + text + draw(st.sampled_from(["", " "]))


@st.composite
def other_base(draw) -> str | None:
    """A base commit a non-PR row may carry: none mostly, sometimes a PR task's (a base-only key)."""
    return draw(st.one_of(st.none(), st.none(), st.sampled_from([t.base for t in PR_TASKS])))


# --- training rows ------------------------------------------------------------------------------------------


@st.composite
def ossfuzz_row(draw) -> dict:
    text = draw(st.sampled_from(ossfuzz_spellings(draw(bug_numbers()), draw(st.sampled_from(PROJECTS)))))
    return row(draw(padded(text)), base=draw(other_base()))


@st.composite
def number_row(draw) -> dict:
    """An id written as a number: an int, a whole float or a fraction (never an id without a forced scheme)."""
    number = draw(bug_numbers())
    value = draw(st.sampled_from([number, float(number), number + 0.25]))
    return row(value)


@st.composite
def cve_row(draw) -> dict:
    cve = draw(st.sampled_from(CVES))
    text = draw(st.sampled_from([cve, cve.lower(), f"{draw(st.sampled_from(CVE_PROJECTS))}.{cve.lower()}",
                                 f"fix for {cve} in jq"]))
    return row(draw(padded(text)), base=draw(other_base()))


@st.composite
def pr_row(draw, columns_only: bool = False) -> dict:
    """A PR: spelled in the id (repo and PR columns, when written, agree with it), or, with `columns_only`,
    an id no scheme takes (or no id) and the PR in the columns."""
    task = draw(st.sampled_from([*PR_TASKS, UNRELATED]))
    written = draw(st.sampled_from(task.spellings))
    base = draw(st.sampled_from([task.base, task.base.upper(), sha(f"other base {task.pr}"), None, ""]))
    pr = draw(st.sampled_from([task.pr, str(task.pr), f"{task.pr}.0", float(task.pr)]))
    repo = draw(st.sampled_from(task.spellings))
    if columns_only:
        # an id no scheme takes, or none: the row is then named by its repo and PR cells (`owner__name-N`)
        return row(draw(st.sampled_from([f"row {draw(st.integers(0, 9))}", None, " "])), repo, pr, base)
    text = draw(st.sampled_from(pr_spellings(written, task.pr)))
    return row(draw(padded(text)), repo, pr, base)


@st.composite
def fix_row(draw) -> dict:
    text = commit_url(draw(st.sampled_from(["jqlang/jq", "php/php-src"])), draw(st.sampled_from(FIXES)),
                      draw(st.booleans()))
    return row(text, base=draw(other_base()))


@st.composite
def junk_row(draw) -> dict:
    text = draw(st.one_of(st.sampled_from(JUNK), SAFE_TEXT))
    return row(text, base=draw(other_base()))


BLANK = st.sampled_from([row(None), row(""), row("   ")])
TRAIN_ROW = st.one_of(ossfuzz_row(), ossfuzz_row(), pr_row(), pr_row(), cve_row(), fix_row(), number_row(),
                      pr_row(columns_only=True), junk_row(), BLANK)


@st.composite
def train_rows(draw, row_strategy=TRAIN_ROW, max_size: int = 14) -> list[dict]:
    """Rows, some of them exact copies of an earlier row, some with another note (the same id, other content);
    at least one row has an id."""
    rows: list[dict] = []
    for _ in range(draw(st.integers(1, max_size))):
        if rows and draw(st.integers(0, 5)) == 0:
            copied = dict(draw(st.sampled_from(rows)))
            copied["note"] = draw(st.sampled_from([copied["note"], "other"]))
            rows.append(copied)
        else:
            made = draw(row_strategy)
            made["note"] = draw(st.sampled_from(["", "a", "b"]))
            rows.append(made)
    if not any(id_text(r["task"]) for r in rows):  # a set where no row has an id is refused, rightly
        rows.append(row("zz"))
    return rows


# --- forced OSS-Fuzz scheme ---------------------------------------------------------------------------------


@st.composite
def forced_row(draw) -> dict:
    """Ids for `--id-scheme ossfuzz`: every OSS-Fuzz spelling, bare numbers, `word-N`, and GitHub PR and commit
    URLs (other schemes' ids, never an OSS-Fuzz issue)."""
    number = draw(bug_numbers())
    choice = draw(st.integers(0, 6))
    if choice == 0:
        value = draw(st.sampled_from(ossfuzz_spellings(number, draw(st.sampled_from(PROJECTS)))))
    elif choice == 1:
        value = draw(st.sampled_from([number, float(number), str(number)]))
    elif choice == 2:
        value = f"{draw(st.sampled_from(['task', 'bug', 'x']))}{draw(st.sampled_from('-_:#/= '))}{number}"
    elif choice == 3:
        task = draw(st.sampled_from(PR_TASKS))
        repo = draw(st.sampled_from(task.spellings))
        value = f"https://github.com/{repo}/pull/{draw(st.sampled_from([task.pr, number]))}"
    elif choice == 4:
        value = commit_url("jqlang/jq", draw(st.sampled_from(FIXES)), False)
    elif choice == 5:
        value = draw(st.sampled_from(JUNK))
    else:
        value = draw(st.sampled_from([None, "", " "]))
    return row(value)


# --- benchmarks ---------------------------------------------------------------------------------------------


@st.composite
def sec_bench(draw) -> list[dict]:
    """An OSS-Fuzz/CVE benchmark (SEC-bench's spellings, fix-commit URLs), with one item nothing else holds."""
    rows = []
    for old, new in draw(st.lists(st.sampled_from(OSSFUZZ_BUGS), min_size=1, max_size=5, unique=True)):
        text = f"{draw(st.sampled_from(PROJECTS))}.ossfuzz-{new}" if new else f"arvo:{old}"
        rows.append(row(text))
    for cve in draw(st.lists(st.sampled_from(CVES), max_size=2, unique=True)):
        rows.append(row(f"{draw(st.sampled_from(CVE_PROJECTS))}.{cve.lower()}"))
    for fix in draw(st.lists(st.sampled_from(FIXES), max_size=2, unique=True)):
        rows.append(row(commit_url("jqlang/jq", fix, False)))
    rows.append(row("mruby.ossfuzz-42499998"))
    return _unique_ids(rows)


@st.composite
def swe_bench(draw) -> list[dict]:
    """A SWE benchmark (lower-case `owner__name-N` ids as SWE-bench Multilingual writes them, or
    `owner/name#N`), one PR nothing else holds and, SWE-bench Pro's way, a task named by commit without a PR."""
    rows = []
    tasks = draw(st.lists(st.sampled_from(PR_TASKS), max_size=4, unique=True))
    for task in [*tasks, UNRELATED]:
        owner, name = task.canonical.split("/")
        text = draw(st.sampled_from([f"{owner}__{name}-{task.pr}", f"{task.canonical}#{task.pr}"]))
        rows.append(row(text, task.canonical, task.pr, task.base))
    if draw(st.booleans()):
        task = draw(st.sampled_from(PR_TASKS))
        rows.append(row(f"instance_{sha(task.base)[:12]}", task.canonical, None, task.base))
    return _unique_ids(rows)


def _unique_ids(rows: list[dict]) -> list[dict]:
    seen, out = set(), []
    for r in rows:
        if r["task"] not in seen:
            seen.add(r["task"])
            out.append(r)
    return out


COLUMN_CHOICES = st.builds(Columns, repo=st.sampled_from([None, "repo"]), pr=st.sampled_from([None, "pr"]),
                           base=st.sampled_from([None, "base_commit"]))


# --- writing ------------------------------------------------------------------------------------------------


def _as_text(value):
    """A JSON value in a column of mixed types, as text (whole floats as their integer)."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, float) and value.is_integer() and abs(value) <= 2**53:
        return str(int(value))
    return repr(value) if isinstance(value, float) else str(value)


def column_view(values: list) -> list:
    """A column of JSON values as Arrow holds it: one type per column; numbers of both kinds are floats; text
    beside numbers makes every value text."""
    present = [v for v in values if v is not None]
    if all(isinstance(v, str) for v in present):
        return list(values)
    if all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        return list(values)
    if all(isinstance(v, int | float) and not isinstance(v, bool) for v in present):
        return [None if v is None else float(v) for v in values]
    return [_as_text(v) for v in values]


def settle(rows: list[dict]) -> list[dict]:
    """Rows ready to write: a fraction in an id column without text is written as text (a fraction in a
    numeric column is refused by one reader and unrecognised by another; these tests keep out of that)."""
    ids = [r["task"] for r in rows]
    if not any(isinstance(v, str) for v in ids):
        rows = [dict(r, task=repr(r["task"])) if isinstance(r["task"], float) and not r["task"].is_integer()
                else r for r in rows]
    return rows


def csv_text(value) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)
    return str(value)


def write(path: Path, rows: list[dict], fmt: str) -> list[dict]:
    """Write rows as `fmt`; returns the rows as a reader sees them (CSV: every cell text as written, empty
    cells null; JSON lines and parquet: one type per column, see `column_view`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "csv":
        with path.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(FIELDS)
            for r in rows:
                writer.writerow([csv_text(r[f]) for f in FIELDS])
        return [{f: csv_text(r[f]) or None for f in FIELDS} for r in rows]
    views = {f: column_view([r[f] for r in rows]) for f in FIELDS}
    view_rows = [{f: views[f][i] for f in FIELDS} for i in range(len(rows))]
    if fmt == "jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    else:
        arrays = {}
        for f in FIELDS:
            column = views[f]
            present = [v for v in column if v is not None]
            if present and all(isinstance(v, int) for v in present):
                arrays[f] = pa.array(column, pa.int64())
            elif present and all(isinstance(v, float) for v in present):
                arrays[f] = pa.array(column, pa.float64())
            else:
                arrays[f] = pa.array(column, pa.string())
        pq.write_table(pa.table(arrays), path)
    return view_rows


SUFFIX = {"jsonl": ".jsonl", "parquet": ".parquet", "csv": ".csv"}


@dataclass
class Written:
    """A case on disk: the training file, the benchmark arguments (names or paths), and the oracle's view."""

    train_path: Path
    bench_args: list[str]
    train: Data
    benches: list[Data]

    def bench_names(self) -> list[str]:
        return [b.name for b in self.benches]


class MixCase:
    """A generated compare: the columns, the training rows and the benchmarks ("cybergym", or ("sec" | "swe",
    rows)), each file in its format. (A plain class: hypothesis prints its repr, kept short and readable.)"""

    def __init__(self, columns: Columns, train: list[dict], train_fmt: str, benches: list) -> None:
        self.columns = columns
        self.train = settle(train)
        self.train_fmt = train_fmt
        self.benches = benches  # [("cybergym", None, None) | (kind, rows, fmt)]

    def write(self, folder: Path) -> Written:
        folder.mkdir(parents=True, exist_ok=True)
        train_path = folder / f"train{SUFFIX[self.train_fmt]}"
        view = write(train_path, self.train, self.train_fmt)
        args, datas = [], []
        for kind, rows, fmt in self.benches:
            if kind == "cybergym":
                args.append("cybergym")
                datas.append(cybergym())
                continue
            path = folder / f"{kind}{SUFFIX[fmt]}"
            bench_view = write(path, settle(rows), fmt)
            args.append(str(path))
            datas.append(Data(path.name, bench_view, self.columns))
        return Written(train_path, args, Data(train_path.name, view, self.columns), datas)

    def __repr__(self) -> str:
        lines = [f"MixCase({self.columns}, train as {self.train_fmt}:"]
        lines += [f"    {r!r}," for r in self.train]
        for kind, rows, fmt in self.benches:
            lines.append(f"  bench {kind}" + ("" if rows is None else f" as {fmt}: {[r['task'] for r in rows]}"))
        return "\n".join(lines) + ")"


@st.composite
def benches(draw, kinds=("cybergym", "sec", "swe"), min_size: int = 1) -> list:
    chosen = draw(st.lists(st.sampled_from(kinds), min_size=min_size, max_size=len(kinds), unique=True))
    out = []
    for kind in chosen:
        if kind == "cybergym":
            out.append(("cybergym", None, None))
        else:
            rows = draw(sec_bench() if kind == "sec" else swe_bench())
            out.append((kind, rows, draw(st.sampled_from(FORMATS))))
    return out


@st.composite
def mix_cases(draw, kinds=("cybergym", "sec", "swe")) -> MixCase:
    columns = draw(COLUMN_CHOICES)
    rows = draw(train_rows())
    return MixCase(columns, rows, draw(st.sampled_from(FORMATS)), draw(benches(kinds)))


@st.composite
def forced_cases(draw) -> MixCase:
    rows = draw(train_rows(forced_row(), max_size=10))
    return MixCase(Columns(scheme="ossfuzz"), rows, draw(st.sampled_from(FORMATS)), [("cybergym", None, None)])


def is_nan(value) -> bool:
    return isinstance(value, float) and math.isnan(value)
