"""Sweep: a column's presence, or a cell's content, must not change another column's result.

Each expected answer is worked out here with a few lines of plain Python from what README.md and docs/ promise
(never by overlap's own functions): the project column is "for the within-project baseline" (docs/datasets.md),
a repo or PR cell gives the row's repo and PR where it has one and a null cell falls back to the id's, a PR cell
that is not a number gives no PR, and the SWE section's per-repo breakdown, "case-folded" count and suggested
renames are about repos (README: "exact repo+PR, case-folded, canonical after known renames, base+PR ... per-repo
breakdown, repo presence and suggested renames").
"""

from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "properties"))
from mix_oracle import canonical_repo  # noqa: E402  (the plain-Python repo rule of the mix oracle)

ROOT = Path(__file__).resolve().parents[1]
ARVO = ROOT / "data" / "demo" / "arvo"
QUIET = {"pool": None, "evidence": False, "text": []}


# --- a small independent oracle ---------------------------------------------------------------------------

_INSTANCE = re.compile(r"^([A-Za-z0-9][A-Za-z0-9-]*)__(.+)-([0-9]+)$")


def _mapping() -> dict[str, str]:
    with open(ARVO / "arvo" / "oss_fuzz_mappings.csv", newline="", encoding="utf-8") as f:
        return {old: new for old, new in csv.reader(f)}


def blank(cell) -> bool:
    return cell is None or (isinstance(cell, float) and cell != cell) or (isinstance(cell, str) and not cell.strip())


def pr_of(cell) -> int | None:
    """A PR number: positive int, whole float, `12` / `12.0` text; anything else none."""
    if isinstance(cell, bool) or blank(cell):
        return None
    if isinstance(cell, float):
        return int(cell) if cell.is_integer() and cell > 0 else None
    if isinstance(cell, int):
        return cell if cell > 0 else None
    m = re.fullmatch(r"([0-9]+)(?:\.0+)?", str(cell).strip())
    return int(m.group(1)) if m and int(m.group(1)) > 0 else None


def oracle_keys(row: dict, mapping: dict[str, str]) -> set[tuple[str, str]]:
    """The task keys of one row (id, repo, pr cells) by the documented reading."""
    rid = str(row.get("id") or "").strip()
    keys = set()
    m = re.fullmatch(r"(?:arvo[:_]|oss-fuzz:)([0-9]+)", rid)
    if m:
        keys.add(("ossfuzz", mapping.get(m.group(1), m.group(1))))
    m = re.search(r"CVE-[0-9]{4}-[0-9]+", rid, re.I)
    if m:
        keys.add(("cve", m.group(0).upper()))
    m = _INSTANCE.fullmatch(rid)
    id_repo, id_pr = (f"{m.group(1)}/{m.group(2)}", int(m.group(3))) if m else (None, None)
    repo = canonical_repo(row.get("repo")) or canonical_repo(id_repo)  # a repo cell that is owner/name wins
    cell = row.get("pr")
    pr = id_pr if blank(cell) else pr_of(cell)  # a blank PR cell falls back to the id; junk gives none
    if repo and pr:
        keys.add(("repo_pr", f"{repo}#{pr}"))
    return keys


def oracle_pairs(train: list[dict], bench: list[dict]) -> set[tuple[str, str]]:
    mapping = _mapping()
    bkeys = [(b["id"], oracle_keys(b, mapping)) for b in bench]
    return {(t["id"], bid) for t in train for bid, ks in bkeys if oracle_keys(t, mapping) & ks}


# --- writing and running -------------------------------------------------------------------------------------

COLUMNS = ("id", "repo", "pr", "project")


def write_csv(path: Path, rows: list[dict], columns=COLUMNS) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, list(columns))
        w.writeheader()
        for r in rows:
            w.writerow({c: "" if r.get(c) is None else r.get(c) for c in columns})
    return path


def write_rows(path: Path, rows: list[dict]) -> Path:
    if path.suffix == ".csv":
        return write_csv(path, rows, list(rows[0]))
    if path.suffix == ".jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        return path
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", "overlap", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    return done


def read_csv(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def api_compare(train, bench, columns, stream=True):
    from overlap.api import compare

    return compare(str(train), str(bench), columns=columns, stream=stream, data={"arvo": str(ARVO)}, **QUIET)


def api_pairs(result) -> set[tuple[str, str]]:
    pairs = result.benches[0].pairs
    return set(zip(pairs["train_id"], pairs["bench_id"], strict=True))


def swe(result) -> dict:
    return result.summary()["benches"][0]["swe"]


# --- the hostile mix ------------------------------------------------------------------------------------------

# OSS-Fuzz ids (old and new number of one bug), CVEs and PRs side by side; project cells blank, whitespace,
# repo-looking (`Owner/Repo`) or disagreeing with the repo column; repo cells in other case, as URLs, `.git`;
# PR cells as `9.0`, junk, negative, zero; a repo cell that names another repo than the id does.
TRAIN = [
    {"id": "arvo:10055", "project": "libxml2"},
    {"id": "oss-fuzz:42471001", "project": "LibXML2"},  # the same bug renumbered: a duplicate of the row above
    {"id": "arvo:10102", "project": "   "},
    {"id": "arvo:99999", "project": "Owner/Repo"},
    {"id": "owner__repo-5", "repo": "Owner/Repo", "pr": "5", "project": "somethingelse"},
    {"id": "foo__bar-7", "repo": "https://github.com/foo/bar.git", "pr": "7", "project": "foo/bar"},
    {"id": "a__b-9", "repo": "a/b", "pr": "9.0", "project": ""},
    {"id": "c__d-3", "repo": "c/d", "pr": "twelve", "project": "c/d"},
    {"id": "e__f-12", "repo": "e/f", "pr": "-12", "project": "e"},
    {"id": "g__h-4", "repo": "x/y", "pr": "4", "project": "g/h"},
    {"id": "CVE-2023-1234", "project": ""},
    {"id": "k__l-8", "repo": "k/l", "pr": "0", "project": "other/repo"},
]
BENCH = [
    {"id": "arvo:10055", "project": "libxml2"},
    {"id": "arvo:10102", "project": "libpng"},
    {"id": "owner__repo-5", "repo": "owner/repo", "pr": "5", "project": "owner/repo"},
    {"id": "foo__bar-7", "repo": "foo/bar", "pr": "7", "project": "foo/bar"},
    {"id": "a__b-9", "repo": "a/b", "pr": "9", "project": "a/b"},
    {"id": "c__d-3", "repo": "c/d", "pr": "3", "project": "c/d"},
    {"id": "e__f-12", "repo": "e/f", "pr": "12", "project": "e/f"},
    {"id": "g__h-4", "repo": "g/h", "pr": "4", "project": "g/h"},
    {"id": "x__y-4", "repo": "x/y", "pr": "4", "project": "x/y"},
    {"id": "CVE-2023-1234", "project": ""},
    {"id": "k__l-8", "repo": "k/l", "pr": "8", "project": "k/l"},
]


@pytest.fixture
def mix(tmp_path):
    return write_csv(tmp_path / "train.csv", TRAIN), write_csv(tmp_path / "bench.csv", BENCH)


def _compare_cli(train, bench, out: Path, project: bool):
    args = ["compare", str(train), str(bench), "--id-column", "id", "--repo-column", "repo", "--pr-column", "pr",
            *(["--project-column", "project"] if project else []), "-d", f"arvo={ARVO}", "--out", str(out),
            "--no-evidence", "--pool", "none", "--text", "none", "--format", "json"]
    return json.loads(cli(*args, cwd=out.parent).stdout)


def test_oracle_pairs_of_the_mix():
    """The oracle itself, spelled out: what the docs say each hostile row pairs with."""
    assert oracle_pairs(TRAIN, BENCH) == {
        ("arvo:10055", "arvo:10055"), ("oss-fuzz:42471001", "arvo:10055"), ("arvo:10102", "arvo:10102"),
        ("owner__repo-5", "owner__repo-5"), ("foo__bar-7", "foo__bar-7"), ("a__b-9", "a__b-9"),
        ("g__h-4", "x__y-4"),  # the repo cell (x/y) wins over the id's repo (g/h)
        ("CVE-2023-1234", "CVE-2023-1234"),
    }  # c__d-3 (PR 'twelve'), e__f-12 (-12), k__l-8 (0): a PR cell that is no number gives no PR


def test_project_column_changes_no_pair_duplicate_or_id_list(mix, tmp_path):
    train, bench = mix
    with_p = _compare_cli(train, bench, tmp_path / "with", project=True)
    without = _compare_cli(train, bench, tmp_path / "without", project=False)
    expected = oracle_pairs(TRAIN, BENCH)
    for out in (tmp_path / "with", tmp_path / "without"):
        pairs = read_csv(out / "pairs.csv")
        assert {(p["train_id"], p["bench_id"]) for p in pairs} == expected
        train_in_pair = {t for t, _ in expected}
        assert lines(out / "train_clean_ids.txt") == [r["id"] for r in TRAIN if r["id"] not in train_in_pair]
        bench_in_pair = {b for _, b in expected}
        assert lines(out / "bench.csv_contaminated_ids.txt") == [r["id"] for r in BENCH if r["id"] in bench_in_pair]
        assert lines(out / "bench.csv_clean_ids.txt") == [r["id"] for r in BENCH if r["id"] not in bench_in_pair]
        dups = read_csv(out / "duplicates.csv")
        assert [(d["dataset"], d["kind"], d["value"], d["item_ids"]) for d in dups] == [
            ("train.csv", "ossfuzz", "42471001", "arvo:10055;oss-fuzz:42471001")]
    for a, b in ((with_p, without),):
        assert a["train"]["items"] == b["train"]["items"] == len(TRAIN)
        assert a["train"]["keys_by_kind"] == b["train"]["keys_by_kind"]
        assert a["train"]["problems"] == b["train"]["problems"]
        assert a["train"]["duplicates"] == b["train"]["duplicates"]
        for key in ("pairs", "train_items_matched", "bench_items_matched", "shared_keys_by_kind", "plain_join"):
            assert a["benches"][0][key] == b["benches"][0][key], key
    # 'twelve', '-12' and '0' are each a non-numeric PR cell (counted), whatever the project column says
    problems = {p["what"]: p["count"] for p in with_p["train"]["problems"]}
    assert problems.get("non_numeric_pr") == 3
    assert "malformed_repo" not in problems  # every repo cell here is a GitHub repo in some spelling


def test_project_column_changes_no_filtered_row(mix, tmp_path):
    train, bench = mix
    outs = {}
    for project in (True, False):
        out = tmp_path / ("with" if project else "without")
        cli("filter", str(train), str(bench), "--id-column", "id", "--repo-column", "repo", "--pr-column", "pr",
            *(["--project-column", "project"] if project else []), "-d", f"arvo={ARVO}", "--out", str(out),
            cwd=tmp_path)
        outs[project] = out
    expected_drop = {t for t, _ in oracle_pairs(TRAIN, BENCH)}
    for out in outs.values():
        removed = read_csv(out / "removed.csv")
        assert [(r["row"], r["item_id"]) for r in removed] == [
            (str(i), r["id"]) for i, r in enumerate(TRAIN) if r["id"] in expected_drop]
        kept = read_csv(out / "data" / "train.csv")
        assert [r["id"] for r in kept] == [r["id"] for r in TRAIN if r["id"] not in expected_drop]
        assert [r["project"] for r in kept] == [r.get("project") or "" for r in TRAIN if r["id"] not in expected_drop]
    assert (outs[True] / "removed.csv").read_bytes() == (outs[False] / "removed.csv").read_bytes()
    assert (outs[True] / "data" / "train.csv").read_bytes() == (outs[False] / "data" / "train.csv").read_bytes()


@pytest.mark.parametrize("project", [True, False])
def test_stream_on_and_off_give_the_same_result(mix, project):
    """compare streams a training set read by its columns; `stream=False` holds it: the same result."""
    train, bench = mix
    columns = {"id": "id", "repo": "repo", "pr": "pr", **({"project": "project"} if project else {})}
    streamed, held = (api_compare(train, bench, columns, stream=s) for s in (True, False))
    assert api_pairs(streamed) == api_pairs(held) == oracle_pairs(TRAIN, BENCH)
    assert streamed.train_clean_ids() == held.train_clean_ids()

    def scrub(doc):
        doc = json.loads(json.dumps(doc, default=str))
        for block in (doc["train"], *(b["dataset"] for b in doc["benches"])):
            block.pop("provenance", None)
        return doc

    assert scrub(streamed.summary()) == scrub(held.summary())


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".parquet"])
def test_project_cells_of_any_type_stream_as_held(tmp_path, suffix):
    """Repeated ids with other project cells, rows without an id, a numeric / boolean / blank project."""
    rows = [{"id": "owner__repo-5", "project": "p1"}, {"id": "owner__repo-5", "project": "zz"},
            {"id": None, "project": "p2"}, {"id": "   ", "project": "p2"}, {"id": "foo__bar-7", "project": 7},
            {"id": "q__r-2", "project": "  "}, {"id": "s__t-3", "project": True},
            {"id": "arvo:10055", "project": "libxml2"}, {"id": "oss-fuzz:42471001", "project": "p3"}]
    if suffix != ".jsonl":  # csv / parquet cells of one type
        rows = [dict(r, project=str(r["project"])) for r in rows]
    train = write_rows(tmp_path / f"train{suffix}", rows)
    bench = write_csv(tmp_path / "bench.csv", [{"id": "owner__repo-5", "project": "p1"},
                                               {"id": "foo__bar-7", "project": "p2"},
                                               {"id": "arvo:10055", "project": "libxml2"}], ("id", "project"))
    results = [api_compare(train, bench, {"id": "id", "project": "project"}, stream=s) for s in (True, False)]
    for r in results:
        assert api_pairs(r) == {("owner__repo-5", "owner__repo-5"), ("foo__bar-7", "foo__bar-7"),
                                ("arvo:10055", "arvo:10055"), ("oss-fuzz:42471001", "arvo:10055")}
        problems = {p["what"]: p["count"] for p in r.summary()["train"]["problems"]}
        assert problems == {"duplicate_id": 1, "missing_id": 2}
        assert r.summary()["train"]["items"] == 6
    assert swe(results[0]) == swe(results[1])


# --- the SWE section's per-repo breakdown and rename counts -------------------------------------------------


def test_by_repo_without_project_column_is_by_canonical_repo(mix):
    train, bench = mix
    result = api_compare(train, bench, {"id": "id", "repo": "repo", "pr": "pr"})
    expected = _by_repo_oracle()
    assert {r["repo"]: (r["bench_items"], r["overlap"], r["train_items_in_repo"]) for r in swe(result)["by_repo"]} \
        == expected


def _by_repo_oracle() -> dict[str, tuple[int, int, int]]:
    """repo -> (bench PR items in it, of them in a pair, train PR items in it): repos as the rows' keys say."""
    mapping = _mapping()

    def repo_of(row):
        own = canonical_repo(row.get("repo"))
        m = _INSTANCE.fullmatch(row["id"])
        return own or (canonical_repo(f"{m.group(1)}/{m.group(2)}") if m else None)

    paired = {b for _, b in oracle_pairs(TRAIN, BENCH)}
    out: dict[str, list[int]] = {}
    for b in BENCH:
        if repo_of(b):
            entry = out.setdefault(repo_of(b), [0, 0, 0])
            entry[0] += 1
            entry[1] += b["id"] in paired and any(k[0] == "repo_pr" for k in oracle_keys(b, mapping))
    for t in TRAIN:
        if repo_of(t) in out:
            out[repo_of(t)][2] += 1
    return {k: tuple(v) for k, v in out.items()}


def test_by_repo_is_the_same_with_a_project_column(mix):
    train, bench = mix
    with_p = api_compare(train, bench, {"id": "id", "repo": "repo", "pr": "pr", "project": "project"})
    without = api_compare(train, bench, {"id": "id", "repo": "repo", "pr": "pr"})
    assert {r["repo"]: (r["bench_items"], r["overlap"], r["train_items_in_repo"]) for r in swe(with_p)["by_repo"]} \
        == _by_repo_oracle()
    assert swe(with_p)["repo_presence"] == swe(without)["repo_presence"]


def test_by_repo_names_no_oss_fuzz_project_as_an_unmatched_repo(mix):
    train, bench = mix
    result = api_compare(train, bench, {"id": "id", "repo": "repo", "pr": "pr", "project": "project"})
    repos = {r["repo"] for r in swe(result)["by_repo"]}
    assert not repos & {"libxml2", "libpng"}, repos  # arvo:10055 is matched, yet shown as 0 of 1 in 'libxml2'


def _base_rows(tmp_path, project: bool):
    sha = "a" * 40
    cols = ("id", "repo", "pr", "base", *(("project",) if project else ()))
    train = write_csv(tmp_path / "t.csv", [{"id": "o__r-5", "repo": "o/r", "pr": 5, "base": sha, "project": "P-train"},
                                           {"id": "old__name-6", "repo": "old/name", "pr": 6, "base": "b" * 40,
                                            "project": "x"}], cols)
    bench = write_csv(tmp_path / "b.csv", [{"id": "o__r-5", "repo": "o/r", "pr": 5, "base": sha, "project": "P-bench"},
                                           {"id": "new__name-6", "repo": "new/name", "pr": 6, "base": "b" * 40,
                                            "project": "x"}], cols)
    columns = {"id": "id", "repo": "repo", "pr": "pr", "base": "base", **({"project": "project"} if project else {})}
    return api_compare(train, bench, columns)


def test_suggested_renames_from_a_shared_base_and_pr(tmp_path):
    """The same PR at the same base under two repo names suggests the rename; the same repo suggests none."""
    result = _base_rows(tmp_path, project=False)
    got = [(r["train_repo"], r["bench_repo"], r["pairs"]) for r in swe(result)["suggested_renames"]]
    assert got == [("old/name", "new/name", 1)]


def test_suggested_renames_ignore_the_project_column(tmp_path):
    result = _base_rows(tmp_path, project=True)
    got = [(r["train_repo"], r["bench_repo"], r["pairs"]) for r in swe(result)["suggested_renames"]]
    assert got == [("old/name", "new/name", 1)]


def test_found_only_by_known_renames_counts_a_real_rename(tmp_path):
    cols = ("id", "repo", "pr")
    train = write_csv(tmp_path / "t.csv", [{"id": "kbknapp__clap-rs-941", "repo": "kbknapp/clap-rs", "pr": 941},
                                           {"id": "o__r-1", "repo": "O/R", "pr": 1}], cols)
    bench = write_csv(tmp_path / "b.csv", [{"id": "clap-rs__clap-941", "repo": "clap-rs/clap", "pr": 941},
                                           {"id": "o__r-1", "repo": "o/r", "pr": 1}], cols)
    s = swe(api_compare(train, bench, {"id": "id", "repo": "repo", "pr": "pr"}))
    assert s["found_by_key"]["repo_pr"] == 2
    assert s["found_by_key"]["repo_pr_exact"] == 0
    assert s["found_by_key"]["repo_pr_casefold"] == 1  # O/R vs o/r
    assert s["found_only_by_known_renames"] == 1  # kbknapp/clap-rs -> clap-rs/clap


def test_found_only_by_known_renames_without_a_repo_column(tmp_path):
    train = write_csv(tmp_path / "t.csv", [{"id": "owner__repo-5"}, {"id": "foo__bar-7"}], ("id",))
    bench = write_csv(tmp_path / "b.csv", [{"id": "owner__repo-5"}, {"id": "foo__bar-7"}, {"id": "x__y-1"}], ("id",))
    s = swe(api_compare(train, bench, {"id": "id"}))
    assert s["found_by_key"]["repo_pr"] == 2
    assert s["found_by_key"]["repo_pr_casefold"] == 2  # same repos, same case: no rename involved
    assert s["found_only_by_known_renames"] == 0


def test_found_only_by_known_renames_with_url_repo_cells(tmp_path):
    repos = ["https://github.com/Owner/Repo", "https://github.com/owner/repo.git", "github.com/owner/repo/",
             "OWNER/REPO", " owner/repo ", "not a repo", "owner/repo/extra"]
    train = write_csv(tmp_path / "t.csv", [{"id": f"owner__repo-{i}", "repo": r, "pr": i}
                                           for i, r in enumerate(repos, 1)], ("id", "repo", "pr"))
    bench = write_csv(tmp_path / "b.csv", [{"id": f"owner__repo-{i}", "repo": "owner/repo", "pr": i}
                                           for i in range(1, len(repos) + 1)], ("id", "repo", "pr"))
    result = api_compare(train, bench, {"id": "id", "repo": "repo", "pr": "pr"})
    assert len(api_pairs(result)) == len(repos)  # every one is owner/repo#i (the bad cell falls back to the id)
    s = swe(result)
    assert s["found_by_key"]["repo_pr_casefold"] >= s["found_by_key"]["repo_pr_exact"]
    assert s["found_only_by_known_renames"] == 0  # owner/repo is in no rename table


# --- repo and PR cells ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".parquet"])
def test_an_all_blank_repo_column_reads_as_no_repo_column(tmp_path, suffix):
    rows = [{"id": "owner__repo-5", "repo": None}, {"id": "foo__bar-7", "repo": None},
            {"id": "big__name-3", "repo": None}]
    train = write_rows(tmp_path / f"train{suffix}", rows)
    bench = write_csv(tmp_path / "bench.csv", [{"id": "owner__repo-5"}, {"id": "foo__bar-7"}, {"id": "Big__Name-3"}],
                      ("id",))
    expected = {("owner__repo-5", "owner__repo-5"), ("foo__bar-7", "foo__bar-7"), ("big__name-3", "Big__Name-3")}
    for columns in ({"id": "id", "repo": "repo"}, {"id": "id"}):
        for stream in (True, False):
            result = api_compare(train, bench, columns, stream=stream)
            assert api_pairs(result) == expected
            problems = {p["what"]: p["count"] for p in result.summary()["train"]["problems"]}
            assert problems == ({"missing_repo": 3} if "repo" in columns else {})


PR_CELLS = [12.0, "12", "12.0", "twelve", -3, 0, None, 7, " 8 ", 9.5, True]


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".parquet"])
def test_pr_cells_of_every_form(tmp_path, suffix):
    """The PR column beside ids whose own PR differs: a number cell wins, a blank cell falls back to the id's,
    a cell that is no PR number (junk, negative, zero, fraction, boolean) gives no PR and is counted."""
    rows = [{"id": f"owner__repo-{i}", "repo": "o/r", "pr": p} for i, p in enumerate(PR_CELLS, 1)]
    if suffix != ".jsonl":
        rows = [dict(r, pr=None if r["pr"] is None else str(r["pr"])) for r in rows]
    train = write_rows(tmp_path / f"train{suffix}", rows)
    bench_rows = [{"id": f"o__r-{n}"} for n in range(1, 13)] + [{"id": f"owner__repo-{n}"} for n in range(1, 12)]
    bench = write_csv(tmp_path / "bench.csv", bench_rows, ("id",))
    expected = oracle_pairs(rows, bench_rows)
    assert expected == {("owner__repo-1", "o__r-12"), ("owner__repo-2", "o__r-12"), ("owner__repo-3", "o__r-12"),
                        ("owner__repo-7", "o__r-7"), ("owner__repo-8", "o__r-7"), ("owner__repo-9", "o__r-8")}
    for stream in (True, False):
        result = api_compare(train, bench, {"id": "id", "repo": "repo", "pr": "pr"}, stream=stream)
        assert api_pairs(result) == expected
        problems = {p["what"]: p["count"] for p in result.summary()["train"]["problems"]}
        assert problems == {"missing_pr": 1, "non_numeric_pr": 5}


def test_float_pr_column_in_parquet(tmp_path):
    train = tmp_path / "t.parquet"
    pq.write_table(pa.table({"id": ["owner__repo-1", "owner__repo-2", "owner__repo-3"], "repo": ["o/r"] * 3,
                             "pr": [12.0, float("nan"), 7.0]}), train)
    bench = write_csv(tmp_path / "b.csv", [{"id": f"o__r-{n}"} for n in (2, 7, 12)], ("id",))
    for stream in (True, False):
        result = api_compare(train, bench, {"id": "id", "repo": "repo", "pr": "pr"}, stream=stream)
        assert api_pairs(result) == {("owner__repo-1", "o__r-12"), ("owner__repo-2", "o__r-2"),
                                     ("owner__repo-3", "o__r-7")}


def test_a_project_cell_that_looks_like_a_repo_gives_no_key(tmp_path):
    """Without a repo column, a project cell `other/thing` must not become the row's repo."""
    train = write_csv(tmp_path / "t.csv", [{"id": "owner__repo-5", "project": "Other/Thing"},
                                           {"id": "arvo:10055", "project": "owner/repo"}], ("id", "project"))
    bench = write_csv(tmp_path / "b.csv", [{"id": "other__thing-5"}, {"id": "owner__repo-5"}], ("id",))
    for stream in (True, False):
        result = api_compare(train, bench, {"id": "id", "project": "project"}, stream=stream)
        assert api_pairs(result) == {("owner__repo-5", "owner__repo-5")}


def test_a_bad_repo_cell_is_counted_whatever_the_id_says(tmp_path):
    train = write_csv(tmp_path / "t.csv", [{"id": "owner__repo-1", "repo": "not a repo", "pr": 1},
                                           {"id": "x-2", "repo": "not a repo", "pr": 2},
                                           {"id": "owner__repo-3", "repo": "", "pr": 3}], ("id", "repo", "pr"))
    bench = write_csv(tmp_path / "b.csv", [{"id": "owner__repo-1"}], ("id",))
    for project in (False, True):
        if project:
            rows = [dict(r, project="lib") for r in read_csv(train)]
            train = write_csv(tmp_path / "tp.csv", rows, ("id", "repo", "pr", "project"))
        columns = {"id": "id", "repo": "repo", "pr": "pr", **({"project": "project"} if project else {})}
        problems = {p["what"]: p["count"] for p in api_compare(train, bench, columns).summary()["train"]["problems"]}
        assert problems.get("missing_repo") == 1  # owner__repo-3: counted although its id names the repo
        assert problems.get("malformed_repo") == 2  # both 'not a repo' cells
