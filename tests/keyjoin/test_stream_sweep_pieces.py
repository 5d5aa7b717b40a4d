"""The streamed key join against the held one (and a plain-Python oracle) on training sides whose batches hold
key pieces of several kinds: a fix column beside OSS-Fuzz, PR and CVE ids (a fix key shared by two rows, or
given twice in one row), OSS-Fuzz ids the bundled mapping renames spread over many batches and beside PR ids,
repo / PR / base columns whose cells are blank, junk or whitespace, a project column given or not, columns all
filled or all empty in some batches only, ids that are only Unicode whitespace or padded with it; batches of
1, 2, 5 and 7 rows; and a side of 300k rows in the default batches, where the compiled loops run."""

from __future__ import annotations

import csv
import json
import re
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "properties"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from mix_oracle import (  # noqa: E402
    Columns,
    arvo_mapping,
    counted_pairs,
    cybergym,
    id_text,
    pr_keys,
    row_keys,
    whole_side_counts,
)
from mix_oracle import Data as OracleData  # noqa: E402
from mix_strategies import DATA, sha  # noqa: E402
from stream_check import assert_whole_side, both_ways, differences  # noqa: E402

import overlap.keyjoin.scan as scan  # noqa: E402

SETTINGS = {"deadline": None, "database": None, "derandomize": True, "phases": [Phase.explicit, Phase.generate],
            "suppress_health_check": [HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                      HealthCheck.data_too_large]}
FIELDS = ("task", "repo", "pr", "base_commit", "fix", "project", "note")
QUIET = {"data": DATA, "pool": None, "evidence": False, "text": None}

# --- the universe -------------------------------------------------------------------------------------------

RENAMED = sorted(arvo_mapping().items())  # (old, new) of the bundled demo mapping
FIX = tuple(sha(f"sweep fix {i}") for i in range(3))
BASES = (sha("repo base"), sha("ripgrep base"))
SPACES = ("", " ", "\u3000", "\u00a0", "\t", "\u2028")
BLANK_IDS = (None, "", " ", "\u3000", "\u00a0", "\u2028", "\u3000 \u00a0", "\t\u2028")


def ossfuzz_ids() -> list[str]:
    out = []
    for old, new in RENAMED[:4]:
        out += [f"arvo:{old}", f"arvo_{old}", f"oss-fuzz:{old}", f"libxml2.ossfuzz-{old}", f"oss-fuzz:{new}",
                f"https://issues.oss-fuzz.com/issues/{old}"]
    return out + ["arvo:20001", "arvo:10190"]


OSSFUZZ_IDS = ossfuzz_ids()
PR_IDS = ("owner__repo-12", "Owner/Repo#13", "https://github.com/BurntSushi/ripgrep/pull/1234",
          "burntsushi__ripgrep-1234", "clap-rs/clap#941", "kbknapp__clap-rs-941", "psf__requests-2317")
OTHER_IDS = ("jq.cve-2023-50246", "CVE-2021-3156", f"https://github.com/jqlang/jq/commit/{FIX[0]}",
             f"https://github.com/php/php-src/commit/{FIX[1].upper()}", "task-7", "row 3", "naïve", "zz")
REPOS = (None, "", " ", "\u3000", "Owner/Repo", "owner/repo", "BurntSushi/ripgrep", "kbknapp/clap-rs",
         "not a repo", " owner/repo ")
PRS_INT = (None, 12, 13, 941, 1234)
PRS_TEXT = (None, "", " ", "\u3000", "12", " 13 ", "941.0", "1234", "abc")
BASE_CELLS = (None, "", " ", BASES[0], BASES[0].upper(), BASES[1], "zz-not-a-sha")
FIX_CELLS = (None, "", " ", "\u3000", FIX[0], FIX[0].upper(), FIX[1], f"https://github.com/jqlang/jq/commit/{FIX[2]}",
             f"github.com/jqlang/jq/commit/{FIX[0][:10]}", "not a sha", f"arvo:{RENAMED[1][0]}", "owner__repo-12",
             "jq.cve-2023-50246")
PROJECTS = (None, "", " ", "libxml2", "jq", "\u3000")


def bench_rows() -> list[dict]:
    """A benchmark of our own, read by the same columns: renamed OSS-Fuzz bugs by old and new id, PRs, a CVE
    and fix commits (one by URL, one that only a training fix column names)."""
    ids = [f"arvo:{RENAMED[1][0]}", f"oss-fuzz:{RENAMED[2][1]}", f"libxml2.ossfuzz-{RENAMED[3][1]}",
           "owner__repo-12", "burntsushi__ripgrep-1234", "jq.cve-2023-50246",
           f"https://github.com/jqlang/jq/commit/{FIX[0]}", f"https://github.com/jqlang/jq/commit/{FIX[2]}",
           "mruby.ossfuzz-42499998"]
    return [blank_row(i) for i in ids]


def blank_row(task=None, **cells) -> dict:
    return {**dict.fromkeys(FIELDS), "note": "", "task": task, **cells}


# --- strategies ---------------------------------------------------------------------------------------------


@st.composite
def an_id(draw):
    kind = draw(st.integers(0, 9))
    if kind <= 2:
        text = draw(st.sampled_from(OSSFUZZ_IDS))
    elif kind <= 5:
        text = draw(st.sampled_from(PR_IDS))
    elif kind <= 7:
        text = draw(st.sampled_from(OTHER_IDS))
    else:
        return draw(st.sampled_from(BLANK_IDS))
    if draw(st.integers(0, 3)) == 0:
        text = draw(st.sampled_from(SPACES)) + text + draw(st.sampled_from(SPACES))
    return text


@st.composite
def sweep_rows(draw, pr_text: bool, max_blocks: int = 5) -> list[dict]:
    """Rows in blocks of 1-7; in a block a cell column may be all empty or all filled, so some batches see a
    column entirely null and others entirely filled. Some rows copy an earlier one (another note)."""
    rows: list[dict] = []
    prs = PRS_TEXT if pr_text else PRS_INT
    for _ in range(draw(st.integers(1, max_blocks))):
        size = draw(st.integers(1, 7))
        mode = {f: draw(st.sampled_from(["any", "any", "null", "filled"])) for f in FIELDS[1:6]}
        for _ in range(size):
            if rows and draw(st.integers(0, 6)) == 0:
                copied = dict(draw(st.sampled_from(rows)))
                copied["note"] = draw(st.sampled_from([copied["note"], "other"]))
                rows.append(copied)
                continue
            made = blank_row(draw(an_id()), note=draw(st.sampled_from(["", "a"])))
            for field, pool in (("repo", REPOS), ("pr", prs), ("base_commit", BASE_CELLS), ("fix", FIX_CELLS),
                                ("project", PROJECTS)):
                if mode[field] == "null":
                    made[field] = None
                elif mode[field] == "filled":
                    made[field] = draw(st.sampled_from([v for v in pool if v is not None and str(v).strip()]))
                else:
                    made[field] = draw(st.sampled_from(pool))
            rows.append(made)
    if not any(id_text(r["task"]) for r in rows):
        rows.append(blank_row("zz"))
    return rows


COLUMN_SETS = st.fixed_dictionaries({name: st.booleans() for name in ("repo", "pr", "base", "fix", "project")})


# --- writing ------------------------------------------------------------------------------------------------


def write(path: Path, rows: list[dict], fmt: str, pr_text: bool) -> list[dict]:
    """Write rows as `fmt`; returns them as a reader sees them (CSV: text, empty cells null)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "csv":
        with path.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(FIELDS)
            for r in rows:
                writer.writerow(["" if r[f] is None else str(r[f]) for f in FIELDS])
        return [{f: (None if r[f] is None or str(r[f]) == "" else str(r[f])) for f in FIELDS} for r in rows]
    if fmt == "jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    else:
        arrays = {f: pa.array([r[f] for r in rows], pa.int64() if f == "pr" and not pr_text else pa.string())
                  for f in FIELDS}
        pq.write_table(pa.table(arrays), path)
    return [dict(r) for r in rows]


# --- the oracle ---------------------------------------------------------------------------------------------

BARE_SHA = re.compile(r"[0-9a-fA-F]{7,40}")
PR_NUMBER = re.compile(r"[0-9]+(?:\.0+)?")


class SweepData(OracleData):
    """`mix_oracle.Data` with a fix column (its cell recognised as an id is, without the row's columns, or a
    bare sha: a `fix_commit` key) and a
    PR column whose junk cells (text that is no number) give no PR at all, not the id's (as documented at
    `overlap.ids.recognisers._github_pr`)."""

    def __init__(self, name, rows, columns: Columns, fix: str | None) -> None:
        super().__init__(name, rows, columns)
        self.fix = fix

    def _junk_pr(self, row) -> bool:
        cell = row.get(self.columns.pr) if self.columns.pr else None
        return isinstance(cell, str) and bool(cell.strip()) and not PR_NUMBER.fullmatch(cell.strip())

    def keys_of(self, row) -> frozenset:
        keys = set(row_keys(row, self.columns))
        if self._junk_pr(row) and id_text(row.get(self.columns.id)) is not None:
            # the PR keys of the row without a PR number: its base alone
            keys = {k for k in keys if k[0] not in ("repo_pr", "base_pr")}
            base = row.get(self.columns.base) if self.columns.base else None
            keys |= pr_keys(None, None, base)
        if self.fix:
            cell = row.get(self.fix)
            text = cell.strip() if isinstance(cell, str) else None
            if text:  # recognised as an id is, then a bare sha (the fix scheme forced)
                keys |= row_keys({"task": text}, Columns(id="task"))
                if BARE_SHA.fullmatch(text):
                    keys.add(("fix_commit", text.lower()))
        return frozenset(keys)


# --- the check ----------------------------------------------------------------------------------------------


def options(chosen: dict) -> dict:
    names = {"repo": "repo", "pr": "pr", "base": "base_commit", "fix": "fix", "project": "project"}
    return {"id": "task", **{k: v for k, v in names.items() if chosen.get(k)}}


def check(folder: Path, rows: list[dict], chosen: dict, fmt: str, pr_text: bool, batch: int,
          monkeypatch: pytest.MonkeyPatch, oracle_checks: bool = True) -> None:
    columns = options(chosen)
    train = write(folder / "in" / f"train.{fmt}", rows, fmt, pr_text)
    bench = bench_rows()
    bench_path = folder / "in" / "bench.parquet"
    write(bench_path, bench, "parquet", pr_text)
    with monkeypatch.context() as patched:
        patched.setattr(scan, "BATCH_ROWS", batch)
        patched.setattr(scan, "SPILL_ROWS", 4)
        patched.setattr("overlap.keyjoin.spill.PARTITIONS", 8)
        patched.setattr("overlap.keyjoin.first_rows.COMPACT_FROM", 2)
        streamed, held = both_ways(str(folder / "in" / f"train.{fmt}"), ["cybergym", str(bench_path)], folder,
                                   columns=columns, **QUIET)
    assert streamed.train.totals is not None and held.train.totals is None
    shown = f"batch={batch} fmt={fmt} columns={columns}\n" + "\n".join(repr(r) for r in rows)
    found = differences(folder)
    assert not found, shown + "\n" + "\n".join(found)
    if not oracle_checks:
        return
    oc = Columns(id="task", repo=columns.get("repo"), pr=columns.get("pr"), base=columns.get("base"))
    train_data = SweepData("train", train, oc, columns.get("fix"))
    assert_whole_side(streamed, whole_side_counts(train_data), shown)
    bench_data = SweepData("bench", bench, oc, columns.get("fix"))
    for comp, data in zip(streamed.benches, [cybergym(), bench_data], strict=True):
        pairs = set(zip(comp.pairs["train_id"], comp.pairs["bench_id"], strict=True))
        assert pairs == counted_pairs(train_data, data), shown


# --- the tests ----------------------------------------------------------------------------------------------

BATCHES = st.sampled_from([1, 2, 5, 7])
FORMATS = st.sampled_from(["parquet", "jsonl", "csv"])

# A fix key two rows share, one of them giving it twice (its URL id and its fix cell, the sha's case differing);
# renamed OSS-Fuzz ids by old and new number around PR ids; a row named by its repo and PR cells.
SHARED_FIX = [
    blank_row(f"https://github.com/jqlang/jq/commit/{FIX[0].upper()}", fix=FIX[0], repo="owner/repo", pr=12),
    blank_row(f"arvo:{RENAMED[0][0]}", fix=FIX[0].upper(), project="libxml2"),
    blank_row("owner__repo-12", fix=f"https://github.com/jqlang/jq/commit/{FIX[2]}", base_commit=BASES[0]),
    blank_row(f"oss-fuzz:{RENAMED[0][1]}", project="libxml2"),
    blank_row("\u3000", repo="Owner/Repo", pr=13, fix=FIX[1]),
    blank_row(" owner__repo-12\u00a0", repo=None, pr=None, base_commit=BASES[0].upper()),
    blank_row(f"arvo:{RENAMED[0][0]}", note="other"),
    blank_row("\u2028"),
    blank_row("", fix=FIX[2]),
]
ALL_COLUMNS = {"repo": True, "pr": True, "base": True, "fix": True, "project": True}


@settings(max_examples=30, **SETTINGS)
@example(SHARED_FIX, ALL_COLUMNS, "parquet", False, 2)
@example(SHARED_FIX, {**ALL_COLUMNS, "project": False}, "jsonl", False, 1)
@example(SHARED_FIX, {"repo": False, "pr": False, "base": False, "fix": True, "project": False}, "parquet", False, 5)
@given(st.data(), COLUMN_SETS, FORMATS, st.booleans(), BATCHES)
def test_pieces_of_every_kind_stream_as_held(tmp_path_factory, monkeypatch, rows, chosen, fmt, pr_text, batch):
    if not isinstance(rows, list):  # drawn: a case of generated rows
        rows = rows.draw(sweep_rows(pr_text))
    check(tmp_path_factory.mktemp("sweep"), rows, chosen, fmt, pr_text, batch, monkeypatch)


@settings(max_examples=12, **SETTINGS)
@given(st.data(), COLUMN_SETS, st.sampled_from([1, 2, 3]))
def test_the_compiled_loops_on_tiny_batches_stream_as_held(tmp_path_factory, monkeypatch, data, chosen, batch):
    """The same sides with the compiled recognisers and hash on every batch (held: one batch, compiled too)."""
    pytest.importorskip("numba")
    monkeypatch.setattr("overlap.ids.compiled.COMPILED_FROM", 0)
    monkeypatch.setattr("overlap.keyjoin.hashing.COMPILED_FROM", 0)
    rows = data.draw(sweep_rows(pr_text=True))
    check(tmp_path_factory.mktemp("sweep"), rows, chosen, "parquet", True, batch, monkeypatch)


@settings(max_examples=12, **SETTINGS)
@example(SHARED_FIX, ALL_COLUMNS, 2)
@given(st.data(), COLUMN_SETS, BATCHES)
def test_pieces_stream_as_held_when_hashes_collide(tmp_path_factory, monkeypatch, rows, chosen, batch):
    """Every string hashed by its length mod 3: the bench-key lookup and the whole-side passes must tell keys
    and ids apart on their strings."""
    import pyarrow.compute as pc

    def crowded(values):
        lengths = pc.fill_null(pc.utf8_length(values), 0).to_numpy(zero_copy_only=False)
        return (lengths % 3).astype(np.uint64)

    monkeypatch.setattr("overlap.keyjoin.batch.hash64", crowded)
    monkeypatch.setattr("overlap.keyjoin.bench_lookup.hash64", crowded)
    if not isinstance(rows, list):
        rows = rows.draw(sweep_rows(pr_text=False))
    check(tmp_path_factory.mktemp("sweep"), rows, chosen, "jsonl", False, batch, monkeypatch)


# --- a large side: the compiled loops in the default batches ------------------------------------------------

LARGE = 300_000


def large_rows(with_columns: bool) -> dict[str, list]:
    """300k rows: mostly distinct PR ids, repeats, renamed OSS-Fuzz ids (old and new numbers) scattered over
    both streamed batches and around the held batches' edges, a few benchmark ids, blank, whitespace-only and
    padded ids, a non-ASCII id in the first batch only; with `with_columns` repo / PR / base / fix / project
    cells, some blank, and a fix sha two rows share."""
    rng = np.random.default_rng(7)
    n = np.arange(LARGE)
    ids = np.char.add(np.char.add("owner", (n % 4999).astype(str)), np.char.add("__name-", (n + 1).astype(str)))
    ids = ids.astype(object)
    repeats = rng.choice(LARGE, 400, replace=False)
    ids[repeats] = ids[rng.choice(LARGE, 400)]
    olds = [old for old, _ in RENAMED]
    news = [new for _, new in RENAMED]
    edges = [0, 1, 65535, 65536, 131071, 131072, 262143, 262144, 262145, LARGE - 1]
    where = sorted({*edges, *rng.choice(LARGE, 60, replace=False).tolist()})
    for i, at in enumerate(where):
        ids[at] = [f"arvo:{olds[i % len(olds)]}", f"oss-fuzz:{news[i % len(news)]}", f"arvo_{olds[i % 3]}",
                   f" libxml2.ossfuzz-{olds[i % 5]}\u3000", f"arvo:{30000 + i}"][i % 5]
    specials = {5: "owner__repo-12", 262146: "burntsushi__ripgrep-1234", 100: "jq.cve-2023-50246",
                200_000: f"https://github.com/jqlang/jq/commit/{FIX[0]}", 7: "\u3000", 8: "", 9: None,
                262147: "\u00a0\u2028", 10: " owner__repo-13 ", 11: "naïve", 290_000: "\t", 12: "x" * 300}
    for at, value in specials.items():
        ids[at] = value
    columns = {"task": ids.tolist()}
    if with_columns:
        repo = np.where(n % 3 == 0, None, np.char.add("Owner", (n % 4999).astype(str)).astype(object) + "/name")
        repo = repo.astype(object)
        repo[n % 11 == 0] = " "
        pr = (n + 1).astype(object)
        pr[n % 13 == 0] = None
        base = np.full(LARGE, None, object)
        base[n % 7 == 0] = BASES[0]
        base[n >= 262144] = None  # all empty in the second streamed batch
        fix = np.full(LARGE, None, object)
        fix[[3, 262150, 299_000]] = [FIX[1], FIX[1].upper(), f"https://github.com/jqlang/jq/commit/{FIX[2]}"]
        project = np.full(LARGE, "proj", object)  # all filled in the first streamed batch
        project[n >= 262144] = np.where(n[n >= 262144] % 2 == 0, None, "other")
        columns.update(repo=repo.tolist(), pr=[None if v is None else int(v) for v in pr], base_commit=base.tolist(),
                       fix=fix.tolist(), project=project.tolist())
    return columns


def _indexed_pairs(train_items: dict, bench) -> set[tuple[str, str]]:
    """`counted_pairs` through an index of the benchmark's keys (a 300k-row side against every bench item
    pair by pair is too slow): a pair counts when it shares a key of a counting kind."""
    from mix_oracle import COUNTING_KINDS

    holders: dict[tuple[str, str], set[str]] = {}
    for b in bench.items().values():
        for key in b.keys:
            if key[0] in COUNTING_KINDS:
                holders.setdefault(key, set()).add(b.item_id)
    return {(t.item_id, b) for t in train_items.values() for key in t.keys for b in holders.get(key, ())}


@pytest.mark.parametrize("with_columns", [False, True])
def test_a_large_side_streams_as_held(tmp_path, with_columns):
    pytest.importorskip("numba")
    columns = large_rows(with_columns)
    fields = list(columns)
    pq.write_table(pa.table({f: pa.array(columns[f], pa.int64() if f == "pr" else pa.string()) for f in fields}),
                   tmp_path / "train.parquet")
    bench = bench_rows()
    write(tmp_path / "bench.parquet", bench, "parquet", False)
    chosen = {"repo": with_columns, "pr": with_columns, "base": with_columns, "fix": with_columns,
              "project": with_columns}
    options_ = options(chosen)
    streamed, held = both_ways(str(tmp_path / "train.parquet"), ["cybergym", str(tmp_path / "bench.parquet")],
                               tmp_path / "out", columns=options_, **QUIET)
    assert streamed.train.totals is not None
    from overlap.ids import compiled

    assert compiled._STATE and compiled._STATE[0] is not None  # the compiled loops ran
    assert len(streamed.benches[0].pairs) >= 10 and len(streamed.benches[1].pairs) >= 3
    found = differences(tmp_path / "out")
    assert not found, "\n".join(found)
    # and the plain oracle's counts and pairs
    rows = [dict(zip(fields, values, strict=True)) for values in zip(*columns.values(), strict=True)]
    oc = Columns(id="task", repo=options_.get("repo"), pr=options_.get("pr"), base=options_.get("base"))
    train_data = SweepData("train", rows, oc, options_.get("fix"))
    assert_whole_side(streamed, whole_side_counts(train_data), "")
    bench_data = SweepData("bench", bench, oc, options_.get("fix"))
    items = train_data.items()
    for comp, data in zip(streamed.benches, [cybergym(), bench_data], strict=True):
        pairs = set(zip(comp.pairs["train_id"], comp.pairs["bench_id"], strict=True))
        assert pairs == _indexed_pairs(items, data)
    paired = set(streamed.pairs["train_id"])
    assert Counter(streamed.train_clean_ids()) == Counter(i for i in items if i not in paired)
