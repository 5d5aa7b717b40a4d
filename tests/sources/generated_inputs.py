"""Seeded messy files in every registered dataset's real schema: valid rows beside repeats, blank and null
cells, malformed repos, PR numbers as text, floats and junk, base commits in capitals, short or junk, ids of
the wrong form. The same seed writes the same files, so the old adapters' outputs on them could be recorded
(`reference/generated-*.json`) and the one reader is checked against them."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

REPOS = ["kbknapp/clap-rs", "BurntSushi/ripgrep", "tokio-rs/tokio", "Kotlin/kotlinx.coroutines", "a/b/c",
         "not a repo", "", None, "  sharkdp/bat  ", "jlongster/prettier"]


def _sha(rng: random.Random) -> str | None:
    value = "".join(rng.choice("0123456789abcdef") for _ in range(40))
    return rng.choice([value, value, value.upper(), value[:7], "not-a-sha", "", None])


def _pr(rng: random.Random):
    n = rng.randint(1, 30000)
    return rng.choice([n, n, str(n), f"{n}.0", "abc", "", None])


def _text(rng: random.Random, label: str) -> str | None:
    return rng.choice([f"Issue text of {label}", f"Issue text of {label}", "", "   ", None])


def _swe_rows(rng: random.Random, count: int, pr_column: bool) -> list[dict]:
    rows = []
    for index in range(count):
        repo = rng.choice(REPOS)
        pr = _pr(rng)
        owner_name = (repo or "x/y").strip().replace("/", "__", 1)
        instance = rng.choice([f"{owner_name}-{rng.randint(1, 30000)}", f"{owner_name}-{pr}", "not-an-id", "", None])
        if rows and rng.random() < 0.15:
            instance = rng.choice(rows)["instance_id"]  # a repeat
        row = {"instance_id": instance, "repo": repo, "base_commit": _sha(rng),
               "problem_statement": _text(rng, str(index)), "patch": rng.choice(["diff --git a/x b/x\n", "", None])}
        if pr_column:
            row["pull_number"] = pr
        rows.append(row)
    return rows


def _parquet(path: Path, rows: list[dict], text_columns: bool = False) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if text_columns:
        rows = [{k: (None if v is None else str(v)) for k, v in r.items()} for r in rows]
    pq.write_table(pa.Table.from_pylist(rows), path, row_group_size=7)


def _jsonl(path: Path, rows: list, bad_line: bool = False) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(r) for r in rows]
    if bad_line:
        lines.insert(len(lines) // 2, '{"instance_id": ')
    path.write_text("\n".join(lines) + "\n")


def write_generated(root: Path, seed: int = 7) -> dict[str, tuple[str, dict[str, Path]]]:
    """{case: (dataset argument, data=)} of the generated files under `root`."""
    rng = random.Random(seed)
    cases: dict[str, tuple[str, dict[str, Path]]] = {}

    folder = root / "swe-bench"
    _parquet(folder / "data" / "test-00000-of-00001.parquet", _swe_rows(rng, 40, False))
    _parquet(folder / "data" / "dev-00000-of-00001.parquet", _swe_rows(rng, 15, False))
    cases["generated-swe-bench"] = ("swe-bench:test,dev", {"swe-bench": folder})

    folder = root / "rebench"
    _parquet(folder / "data" / "train-00000-of-00001.parquet", _swe_rows(rng, 60, False))
    cases["generated-swe-rebench-v2"] = ("swe-rebench-v2", {"swe-rebench-v2": folder})

    folder = root / "prs"
    _parquet(folder / "data" / "train-00000-of-00002.parquet",
             [r for r in _swe_rows(rng, 30, True) if isinstance(r["pull_number"], int) or r["pull_number"] is None])
    _parquet(folder / "data" / "train-00001-of-00002.parquet", _swe_rows(rng, 30, True), text_columns=True)
    cases["generated-swe-rebench-v2-prs"] = ("swe-rebench-v2-prs", {"swe-rebench-v2-prs": folder})

    folder = root / "poly"
    poly = [{k: ("" if v is None else str(v)) for k, v in r.items()} for r in _swe_rows(rng, 40, True)]
    folder.mkdir(parents=True)
    import csv
    with open(folder / "test.csv", "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(poly[0]))
        writer.writeheader()
        writer.writerows(poly)
    cases["generated-swe-polybench"] = ("swe-polybench", {"swe-polybench": folder})

    folder = root / "msb"
    for language in ("rust", "go", "kotlin"):
        rows = []
        for row in _swe_rows(rng, 15, True):
            org, _, name = (row["repo"] or "").partition("/")
            msb = {"org": org or None, "repo": name or None, "number": row["pull_number"],
                   "base": {"sha": row["base_commit"]} if rng.random() < 0.9 else None,
                   "resolved_issues": rng.choice([[{"title": "T", "body": row["problem_statement"]}], [], None]),
                   "fix_patch": row["patch"]}
            if rng.random() < 0.7:
                msb["instance_id"] = row["instance_id"]
            rows.append(msb)
        _jsonl(folder / language / f"{language}_dataset.jsonl", rows, bad_line=language == "go")
    cases["generated-multi-swe-bench"] = ("multi-swe-bench", {"multi-swe-bench": folder})

    folder = root / "cybergym"
    tasks = []
    for _ in range(40):
        kind = rng.choice(["arvo", "oss-fuzz", "ARVO", "bogus", ""])
        number = rng.choice([str(rng.randint(1000, 42000000)), "x", ""])
        task = rng.choice([f"{kind}:{number}", f"{kind}{number}", None])
        if tasks and rng.random() < 0.15:
            task = rng.choice(tasks)["task_id"]
        tasks.append({"task_id": task, "project_name": rng.choice(["php", "", None]),
                      "project_main_repo": rng.choice(["https://git.example/php", None]),
                      "vulnerability_description": _text(rng, str(number))})
    folder.mkdir(parents=True)
    (folder / "tasks.json").write_text(json.dumps(tasks))
    cases["generated-cybergym"] = ("cybergym", {"cybergym": folder})

    folder = root / "secbench"
    for name, form in (("eval-oss.jsonl", "{p}.ossfuzz-{n}"), ("eval-cve.jsonl", "{p}.cve-2023-{n}")):
        rows = []
        for _ in range(20):
            instance = rng.choice([form.format(p=rng.choice(["php", "jq"]), n=rng.randint(1, 99999)), "junk", None])
            rows.append({"instance_id": instance, "repo": rng.choice(["php/php-src", None]), "base_commit": _sha(rng),
                         "patch": "diff", "sanitizer_report": _text(rng, "s"), "bug_description": _text(rng, "d"),
                         "bug_report": _text(rng, "r")})
        _jsonl(folder / "data" / name, rows)
    cases["generated-sec-bench"] = ("sec-bench", {"sec-bench": folder})

    folder = root / "mimo"
    rows = []
    for index in range(40):
        ident = rng.choice([f"arvo_{rng.randint(1000, 42000000)}", "arvo_bad", "", None])
        instance = rng.choice([json.dumps({"problem_statement": f"p{index}", "project_name": "php"}), "{not json",
                               json.dumps([1, 2]), None])
        rows.append({"data_source": "cyber", "prompt": [{"role": "user", "content": _text(rng, "c") or ""}],
                     "extra_info": {"index": index, "instance_id": ident, "instance_json": instance}})
    _parquet(folder / "cyber.parquet", rows)
    cases["generated-mimo-cyber"] = ("mimo-cyber", {"mimo-cyber": folder})

    folder = root / "pro"
    base_rows = _swe_rows(rng, 20, False)
    for row in base_rows:
        row["instance_id"] = f"instance_{row['instance_id']}-v1" if row["instance_id"] else row["instance_id"]
    for config, picked in (("default", base_rows), ("hard", base_rows[::3]), ("v1", base_rows[::2] + base_rows[:2])):
        _parquet(folder / "data" / config / "test-00000-of-00001.parquet", picked)
    cases["generated-swe-bench-pro"] = ("swe-bench-pro", {"swe-bench-pro": folder})
    return cases
