"""The SWE section's per-repo table and its repo match counts on generated mixes, against a plain-Python oracle.

The oracle is written from docs/outputs.md (the `swe` block) and README.md: a pull-request task's repo is its repo
cell's `owner/name` when the cell is a GitHub repo in any spelling (another case, a URL, `.git`), else the repo its
`owner__name-N` id names, lowercased and after the known renames; the project column never is (it is the baseline's
stratum), and an OSS-Fuzz row is no PR task whatever its repo or project cells say. `repo_pr_casefold` counts bench
items whose pair's two repos, as written, are one repo up to case and spelling; `found_only_by_known_renames` the
ones that need a rename. It reads repos with the mix oracle's plain rules (which import nothing from `overlap`).
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "properties"))
from mix_oracle import canonical_repo, normalize_repo, pr_number  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
ARVO = ROOT / "data" / "demo" / "arvo"
SETTINGS = {"deadline": None, "database": None, "derandomize": True,
            "suppress_health_check": [HealthCheck.function_scoped_fixture, HealthCheck.too_slow]}
COLUMNS = ("id", "repo", "pr", "project")

# Repos, two of them under an old and a new name (mappings/repo_renames.csv), one differing only in case.
REPOS = ("kbknapp/clap-rs", "clap-rs/clap", "BurntSushi/ripgrep", "psf/requests", "Owner/Repo")
OSSFUZZ_IDS = ("arvo:10055", "oss-fuzz:42471001", "arvo:10102", "arvo:99999")
PROJECTS = (None, "", "libxml2", "Owner/Repo", "psf/requests", "clap-rs/clap", "something")


def spellings(repo: str) -> list[str | None]:
    """A repo cell written every way a dataset writes one, plus a blank cell and cells that are no repo."""
    return [repo, repo.lower(), repo.upper(), f"https://github.com/{repo}", f"https://github.com/{repo}.git",
            f"github.com/{repo}/", f" {repo} ", None, "not a repo", f"{repo}/extra"]


@st.composite
def pr_row(draw) -> dict:
    repo = draw(st.sampled_from(REPOS))
    id_repo = draw(st.sampled_from([repo, repo.lower()]))
    number = draw(st.integers(1, 3))
    owner, name = id_repo.split("/")
    pr_cell = draw(st.sampled_from([str(number), f"{number}.0", None, "junk"]))
    return {"id": f"{owner}__{name}-{number}", "repo": draw(st.sampled_from(spellings(repo))), "pr": pr_cell,
            "project": draw(st.sampled_from(PROJECTS))}


@st.composite
def ossfuzz_row(draw) -> dict:
    """An OSS-Fuzz bug, its repo cell sometimes naming a GitHub repo (where the bug lives), no PR cell."""
    return {"id": draw(st.sampled_from(OSSFUZZ_IDS)), "repo": draw(st.sampled_from((None, "psf/requests"))),
            "pr": None, "project": draw(st.sampled_from(PROJECTS))}


def side() -> st.SearchStrategy[list[dict]]:
    return st.lists(st.one_of(pr_row(), pr_row(), ossfuzz_row()), min_size=1, max_size=10)


# --- the oracle ---------------------------------------------------------------------------------------------


def task(row: dict) -> tuple[str, str, int | None] | None:
    """(repo as written, canonical repo, PR) of a PR task row; None for a row that is no PR task."""
    if not row["id"].count("__"):  # an OSS-Fuzz id: no PR task, whatever its cells say
        return None
    owner, rest = row["id"].split("__", 1)
    name, id_number = rest.rsplit("-", 1)
    cell = row["repo"]
    written = cell.strip() if normalize_repo(cell) is not None else f"{owner}/{name}"
    blank = row["pr"] is None or not str(row["pr"]).strip()
    number = int(id_number) if blank else pr_number(row["pr"])  # a junk PR cell gives no PR
    return written, canonical_repo(written), number


def items(rows: list[dict]) -> list[dict]:
    """One item per distinct id: its first row."""
    seen, out = set(), []
    for row in rows:
        if row["id"] not in seen:
            seen.add(row["id"])
            out.append(row)
    return out


def oracle(train_rows: list[dict], bench_rows: list[dict]) -> dict:
    train, bench = items(train_rows), items(bench_rows)
    train_tasks = [t for t in map(task, train) if t]
    by_repo: dict[str, list[int]] = {}
    found = {"repo_pr": set(), "repo_pr_casefold": set(), "repo_pr_exact": set()}
    for b in bench:
        bt = task(b)
        if bt is None:
            continue
        b_written, b_repo, b_pr = bt
        entry = by_repo.setdefault(b_repo, [0, 0, 0])
        entry[0] += 1
        partners = [t for t in train_tasks if b_pr is not None and (t[1], t[2]) == (b_repo, b_pr)]
        entry[1] += bool(partners)
        for t_written, _, _ in partners:
            found["repo_pr"].add(b["id"])
            if normalize_repo(t_written) == normalize_repo(b_written):
                found["repo_pr_casefold"].add(b["id"])
            if t_written == b_written:
                found["repo_pr_exact"].add(b["id"])
    for _, repo, _ in train_tasks:
        if repo in by_repo:
            by_repo[repo][2] += 1
    return {"by_repo": {repo: tuple(v) for repo, v in by_repo.items()},
            "found": {k: len(v) for k, v in found.items()},
            "renamed_only": len(found["repo_pr"] - found["repo_pr_casefold"]),
            "absent": sorted(r for r, v in by_repo.items() if not v[2]),
            "without_repo": len(bench) - sum(v[0] for v in by_repo.values())}


# --- running ------------------------------------------------------------------------------------------------


def write(path: Path, rows: list[dict]) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, COLUMNS)
        w.writeheader()
        for r in rows:
            w.writerow({c: "" if r.get(c) is None else r[c] for c in COLUMNS})
    return path


def swe_of(train: Path, bench: Path, project: bool, stream: bool) -> dict:
    from overlap.api import compare

    columns = {"id": "id", "repo": "repo", "pr": "pr", **({"project": "project"} if project else {})}
    result = compare(str(train), str(bench), columns=columns, stream=stream, data={"arvo": str(ARVO)}, pool=None,
                     evidence=False, text=[])
    return result.summary()["benches"][0]["swe"]


def check(folder: Path, train_rows: list[dict], bench_rows: list[dict], stream: bool) -> None:
    train, bench = write(folder / "train.csv", train_rows), write(folder / "bench.csv", bench_rows)
    expected = oracle(train_rows, bench_rows)
    sections = {project: swe_of(train, bench, project, stream) for project in (True, False)}
    for project, s in sections.items():
        story = f"project column: {project}, stream: {stream}\ntrain: {train_rows}\nbench: {bench_rows}\n{s}"
        if not s:  # no side has a PR key: no section to check
            assert not any(map(task, train_rows + bench_rows)) or expected["found"]["repo_pr"] == 0, story
            continue
        got = {r["repo"]: (r["bench_items"], r["overlap"], r["train_items_in_repo"]) for r in s["by_repo"]}
        assert got == expected["by_repo"], story
        for kind, count in expected["found"].items():
            assert s["found_by_key"][kind] == count, f"{kind}\n{story}"
        assert s["found_by_key"]["repo_pr_casefold"] >= s["found_by_key"]["repo_pr_exact"], story
        assert s["found_only_by_known_renames"] == expected["renamed_only"], story
        assert s["repo_presence"]["absent_repos"] == expected["absent"], story
        assert s["repo_presence"]["bench_items_without_repo"] == expected["without_repo"], story
    assert sections[True] == sections[False]  # the project column changes nothing of the section


ROW = {"repo": None, "pr": None, "project": None}


@settings(max_examples=12, **SETTINGS)
@example(train_rows=[dict(ROW, id="kbknapp__clap-rs-1", repo="https://github.com/kbknapp/clap-rs.git"),
                     dict(ROW, id="owner__repo-2", repo="OWNER/REPO", project="libxml2"),
                     dict(ROW, id="arvo:10055", repo="psf/requests", project="psf/requests")],
         bench_rows=[dict(ROW, id="clap-rs__clap-1", repo="clap-rs/clap", project="clap-rs/clap"),
                     dict(ROW, id="Owner__Repo-2", repo="not a repo", project="Owner/Repo"),
                     dict(ROW, id="arvo:10055", project="libxml2")], stream=True)
@given(train_rows=side(), bench_rows=side(), stream=st.booleans())
def test_swe_section_counts_by_the_rows_repos(tmp_path_factory, train_rows, bench_rows, stream):
    check(tmp_path_factory.mktemp("swe"), train_rows, bench_rows, stream)
