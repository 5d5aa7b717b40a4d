"""Robustness corpus, ids: generated and hand-made task ids, PR numbers and id cells in every id-bearing adapter,
run through compare / filter / ids. Besides the contract, an id that is not plain ASCII digits must never be
read as a number: the training side holds the id such a coercion would produce, and no pair may use it."""

from __future__ import annotations

import csv
import io
import json
import re
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from corpus_contract import FAST, cyber_data, data_args, run_checked, swe_data
from fixtures import cybergym_tasks, mimo_rows, secbench_row
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

# No shrinking: a failing example is reported as generated, and a failure costs no more time than a pass.
SETTINGS = settings(max_examples=8, deadline=None, derandomize=True, phases=[Phase.explicit, Phase.generate],
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

FULLWIDTH = str.maketrans("0123456789", "０１２３４５６７８９")
ARABIC_INDIC = str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩")
DEVANAGARI = str.maketrans("0123456789", "०१२३४५६७८९")

# Number texts: what a careless export or a hostile file puts where an issue number belongs.
digits = st.from_regex(r"[1-9][0-9]{3,8}", fullmatch=True)
number_texts = st.one_of(
    digits,
    digits.map(lambda d: d.translate(FULLWIDTH)),
    digits.map(lambda d: d.translate(ARABIC_INDIC)),
    digits.map(lambda d: d.translate(DEVANAGARI)),
    digits.map(lambda d: d + ".0"),
    digits.map(lambda d: d + ".5"),
    digits.map(lambda d: "-" + d),
    digits.map(lambda d: "+" + d),
    digits.map(lambda d: d[0] + "e" + str(len(d) - 1)),
    digits.map(lambda d: "0x" + d),
    digits.map(lambda d: d[:2] + "_" + d[2:]),
    st.from_regex(r"[1-9][0-9]{19,40}", fullmatch=True),  # far past int64
    st.sampled_from(["0", "00", "", " ", "nan", "inf", "1e5", "-1", "10055.0", "١٠٣٤٠", "１０３４０", "1\u00a0000"]),
    st.text(max_size=12),
)
prefixes = st.sampled_from(["arvo:", "ARVO:", "Arvo:", "oss-fuzz:", "OSS-Fuzz:", "", "arvo_", " arvo:", "arvo::",
                            "cve_2023_", "arvo:\u200b", "\u202earvo:"])


def strict_number(text: str) -> int | None:
    """The number a strict parser may read from `text`: ASCII digits only, 1–12 of them, not 0."""
    text = text.strip()
    if re.fullmatch(r"[0-9]{1,12}", text, re.ASCII) and int(text):
        return int(text)
    return None


def coerced(text: str) -> int | None:
    """The number a lenient parser would make of `text` (int(), float(), unicode digits), or None."""
    try:
        value = float(text.strip().replace("_", ""))
    except ValueError:
        match = re.search(r"(\d+)$", text.strip())
        return int(match.group(1)) if match else None
    if value != value or value in (float("inf"), float("-inf")):
        return None
    return abs(int(value)) if abs(value) < 1e15 else None


def _pairs(run) -> list[dict]:
    """The pairs a compare run wrote to its report folder (stdout holds the summary, in every format)."""
    return list(csv.DictReader(io.StringIO((run.out / "pairs.csv").read_text(encoding="utf-8"))))


def _workspace(tmp_path: Path) -> Path:
    return Path(tempfile.mkdtemp(dir=tmp_path, prefix="case-"))


@SETTINGS
@given(ids=st.lists(st.tuples(prefixes, number_texts), min_size=1, max_size=6,
                    unique_by=lambda t: (t[0] + t[1]).strip().lower()))
def test_generated_cybergym_task_ids(ids, tmp_path):
    root = _workspace(tmp_path)
    paths = cyber_data(root / "data")
    tasks = cybergym_tasks([("arvo:10288", "libxml2")])
    for prefix, number in ids:
        task = dict(tasks[0], task_id=prefix + number)
        tasks.append(task)
    (paths["cybergym"] / "tasks.json").write_text(json.dumps(tasks))
    lenient = sorted({n for _, t in ids if (n := coerced(t)) is not None and n < 10**12})
    from fixtures import write_mimo

    write_mimo(paths["mimo-cyber"], ids=["arvo_10288", *(f"arvo_{n}" for n in lenient)])
    args = ["compare", "mimo-cyber", "cybergym", *data_args(paths), "--out", "report", "--format", "csv", *FAST]
    run = run_checked("ids:cybergym-generated", args, root=root)
    if run.code == 0:
        for pair in _pairs(run):
            number_text = pair["bench_id"].split(":", 1)[-1] if ":" in pair["bench_id"] else pair["bench_id"]
            if pair["bench_id"] == "arvo:10288":
                continue
            assert strict_number(number_text.removeprefix("arvo_").removeprefix("cve_2023_")) is not None, (
                f"{pair['bench_id']!r} was read as an OSS-Fuzz id and matched {pair['train_id']!r}")


@SETTINGS
@given(values=st.lists(st.tuples(prefixes, number_texts), min_size=1, max_size=4))
def test_generated_ids_command(values, tmp_path):
    root = _workspace(tmp_path)
    paths = cyber_data(root / "data")
    texts = [p + n for p, n in values]
    args = ["ids", "--data", f"arvo={paths['arvo']}", "--format", "json", "--", *texts]
    run = run_checked("ids:command-generated", args, root=root)
    if run.code == 0:
        for row in json.loads(run.stdout):
            if row["scheme"] == "ossfuzz":
                tail = re.split(r"[:_\-]", row["id"].strip())[-1]
                assert strict_number(tail) is not None, f"{row['id']!r} read as OSS-Fuzz number {row['number']}"


# --- the issue's seed cases -----------------------------------------------------------------------------

SEED_IDS = ["arvo:10055.0", "arvo:10055.5", "arvo:１０３４０", "arvo:١٠٣٤٠", "arvo:1e5", "arvo:-1", "cve_2023_1234",
            "arvo:99999999999999999999999", "10340", "ARVO:10340", "arvo:0", "oss-fuzz:", "arvo:0x10",
            "arvo:10\u00a0340", "arvo:\u0000", "arvo:" + "9" * 5000]
MALFORMED = {"arvo:10055.0", "arvo:10055.5", "arvo:１０３４０", "arvo:١٠٣٤٠", "arvo:1e5", "arvo:-1", "cve_2023_1234",
             "arvo:99999999999999999999999", "arvo:0", "oss-fuzz:", "arvo:0x10", "arvo:10\u00a0340", "arvo:\u0000",
             "arvo:" + "9" * 5000}


def test_seed_ids_command(tmp_path):
    paths = cyber_data(tmp_path / "data")
    for value in SEED_IDS:
        run = run_checked(f"ids:seed:{value[:30]!r}", ["ids", "--data", f"arvo={paths['arvo']}", "--format", "json",
                                                       "--", value], root=tmp_path)
        if value in MALFORMED:
            assert run.code == 2, f"{value!r} accepted as an id: {run.stdout[:200]}"
        else:
            assert run.code == 0, run.stderr


def _seed_cybergym(tmp_path, seeds):
    paths = cyber_data(tmp_path / "data")
    tasks = cybergym_tasks([("arvo:1", "proj")] * len(seeds))
    for task, value in zip(tasks, seeds, strict=True):
        task["task_id"] = value
    (paths["cybergym"] / "tasks.json").write_text(json.dumps(tasks))
    return paths


def test_task_id_without_prefix(tmp_path):
    """`10340` (no `arvo:`): a bench item outside both subsets; the compare must not crash on it."""
    paths = _seed_cybergym(tmp_path, ["10340", "arvo:10288"])
    args = ["compare", "mimo-cyber", "cybergym", *data_args(paths), "--out", "report", "--format", "csv", *FAST]
    run_checked("ids:seed:no-prefix", args, root=tmp_path, expect=0)


def test_seed_ids_in_cybergym_compare_and_filter(tmp_path):
    """Every seed id at once as CyberGym task ids; the training side holds what a coercion would read."""
    seeds = [v for v in SEED_IDS if ":" in v]
    paths = cyber_data(tmp_path / "data")
    tasks = cybergym_tasks([("arvo:1", "proj")] * len(seeds))
    for task, value in zip(tasks, seeds, strict=True):
        task["task_id"] = value
    (paths["cybergym"] / "tasks.json").write_text(json.dumps(tasks))
    from fixtures import write_mimo

    write_mimo(paths["mimo-cyber"], ids=["arvo_10055", "arvo_10340", "arvo_100000", "arvo_1", "arvo_1234",
                                         "arvo_10", "arvo_16"])
    args = ["compare", "mimo-cyber", "cybergym", *data_args(paths), "--out", "report", "--format", "csv", *FAST]
    run = run_checked("ids:seed:compare", args, root=tmp_path, expect=0)
    matched = {p["bench_id"] for p in _pairs(run)}
    assert matched <= {"ARVO:10340"}, f"malformed ids matched: {sorted(matched - {'ARVO:10340'})}"
    # The subset of ARVO:10340 follows the key's case rule: it is in `arvo`.
    sub = ["compare", "mimo-cyber", "cybergym:arvo", *data_args(paths), "--out", "report", "--format", "csv", *FAST]
    run = run_checked("ids:seed:subset-case", sub, root=tmp_path, expect=0)
    assert "ARVO:10340" in {p["bench_id"] for p in _pairs(run)}
    out = tmp_path / "filtered"
    run_checked("ids:seed:filter", ["filter", "mimo-cyber", "cybergym", *data_args(paths), "--out", out],
                root=tmp_path, expect=0)


def _removed(stdout: str) -> int:
    match = re.search(r"removed: ([0-9,]+)", stdout)
    assert match, stdout
    return int(match.group(1).replace(",", ""))


def test_float_ids_in_parquet_id_column_filter(tmp_path):
    """11 float ids (`10055.0`…) in MiMo's id column: read as the integers they hold, or refused; never all
    issue 0 (which made filter drop 10 of 11 rows as duplicates)."""
    paths = cyber_data(tmp_path / "data")
    rows = mimo_rows([f"arvo_{n}" for n in range(11)])
    for index, row in enumerate(rows):
        row["extra_info"]["instance_id"] = float(10055 + index)
    pq.write_table(pa.Table.from_pylist(rows), paths["mimo-cyber"] / "cyber.parquet")
    run = run_checked("ids:float-parquet:filter", ["filter", "mimo-cyber", "cybergym", *data_args(paths), "--out",
                                                   tmp_path / "f"], root=tmp_path)
    if run.code == 0:
        assert _removed(run.stdout) == 0, run.stdout


def test_fractional_float_ids_are_refused_or_unmatched(tmp_path):
    paths = cyber_data(tmp_path / "data")
    rows = mimo_rows(["arvo_1"] * 3)
    for row, value in zip(rows, [10288.5, float("inf"), 1e300], strict=True):
        row["extra_info"]["instance_id"] = value
    pq.write_table(pa.Table.from_pylist(rows), paths["mimo-cyber"] / "cyber.parquet")
    args = ["compare", "mimo-cyber", "cybergym", *data_args(paths), "--out", "report", "--format", "csv", *FAST]
    run = run_checked("ids:fractional-parquet", args, root=tmp_path)
    if run.code == 0:
        assert _pairs(run) == [], "a fractional id was rounded into a match"


def test_cybergym_numeric_task_ids(tmp_path):
    """JSON numbers, booleans, nulls, lists and objects as task ids, and ids > int64."""
    paths = cyber_data(tmp_path / "data")
    tasks = cybergym_tasks([("arvo:10288", "p")] * 9)
    for task, value in zip(tasks, [10288, 10288.0, 10288.5, True, None, [1], {"a": 1}, 2**70, -(2**70)],
                           strict=True):
        task["task_id"] = value
    (paths["cybergym"] / "tasks.json").write_text(json.dumps(tasks))
    args = ["compare", "mimo-cyber", "cybergym", *data_args(paths), "--no-report", "--format", "json", *FAST]
    run_checked("ids:cybergym-json-numbers", args, root=tmp_path)


@SETTINGS
@given(ids=st.lists(st.one_of(
    st.tuples(st.sampled_from(["php", "PHP", "", "a.b", "ø"]), st.sampled_from([".ossfuzz-", ".OSSFUZZ-", ".cve-",
                                                                                ".CVE-", "_cve_", ".ossfuzz_"]),
              number_texts).map("".join),
    st.text(max_size=30)), min_size=1, max_size=5, unique=True))
def test_generated_secbench_ids(ids, tmp_path):
    root = _workspace(tmp_path)
    paths = cyber_data(root / "data")
    rows = [secbench_row(i) if "." in i else dict(secbench_row("x.y"), instance_id=i) for i in ids]
    (paths["sec-bench"] / "data" / "eval-oss.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    args = ["compare", "mimo-cyber", "sec-bench", *data_args(paths), "--no-report", "--format", "json", *FAST]
    run_checked("ids:secbench-generated", args, root=root)


# --- SWE: PR numbers and instance ids ---------------------------------------------------------------------

pr_texts = st.one_of(number_texts, st.sampled_from(["19284.0", "19284.5", "1e5", "-5", "９", "99999999999999999999"]))


@SETTINGS
@given(prs=st.lists(pr_texts, min_size=1, max_size=4))
def test_generated_polybench_pull_numbers(prs, tmp_path):
    from swe_fixtures import poly_row, sha, write_csv

    root = _workspace(tmp_path)
    paths = swe_data(root / "data")
    rows = [poly_row(f"keras-team__keras-{p}", "keras-team/keras", p, sha(f"P{i}")) for i, p in enumerate(prs)]
    write_csv(paths["swe-polybench"] / "test.csv", rows)
    args = ["compare", "swe-rebench-v2", "swe-polybench", *data_args(paths), "--out", "report", "--format", "csv",
            *FAST]
    run = run_checked("ids:polybench-generated", args, root=root)
    if run.code == 0:
        for pair in _pairs(run):
            if "repo_pr" in pair["kinds"] and pair["bench_id"].startswith("keras-team__keras-"):
                tail = pair["bench_id"].rsplit("-", 1)[-1]
                assert strict_number(tail.removesuffix(".0")) is not None, pair


def test_swe_pr_numbers_past_int64(tmp_path):
    from swe_fixtures import REBENCH_ROWS, rebench_row, sha, write_parquet

    paths = swe_data(tmp_path / "data")
    rows = [*REBENCH_ROWS, rebench_row("foo__bar-99999999999999999999999", "foo/bar", sha("big")),
            rebench_row("foo__bar--5", "foo/bar", sha("neg")), rebench_row("foo__bar-１２", "foo/bar", sha("fw")),
            rebench_row("foo__bar-1e5", "foo/bar", sha("exp"))]
    write_parquet(paths["swe-rebench-v2"] / "data" / "train-00000-of-00001.parquet", rows)
    for bench in ("swe-bench-multilingual", "multi-swe-bench", "swe-polybench"):
        args = ["compare", "swe-rebench-v2", bench, *data_args(paths), "--no-report", "--format", "json", *FAST]
        run_checked(f"ids:swe-pr-int64:{bench}", args, root=tmp_path, expect=0)
    run_checked("ids:swe-pr-int64:filter", ["filter", "swe-rebench-v2", "swe-bench-multilingual", *data_args(paths),
                                            "--out", tmp_path / "f"], root=tmp_path, expect=0)


def test_prs_shards_with_float_and_huge_pull_numbers(tmp_path):
    from swe_fixtures import A, prs_row, write_parquet

    paths = swe_data(tmp_path / "data")
    folder = paths["swe-rebench-v2-prs"] / "data"
    write_parquet(folder / "train-00003-of-00004.parquet",
                  [prs_row("burntsushi__ripgrep-1367", "BurntSushi/ripgrep", 1367.0, A[3], "float"),
                   prs_row("burntsushi__ripgrep-1368", "BurntSushi/ripgrep", 1368.5, A[3], "fraction"),
                   prs_row("burntsushi__ripgrep-1369", "BurntSushi/ripgrep", float("nan"), A[3], "nan")])
    write_parquet(folder / "train-00004-of-00004.parquet",
                  [prs_row("x__y-1", "x/y", 2**63 - 1, A[3], "max"), prs_row("x__y-2", "x/y", -1, A[3], "neg")])
    args = ["compare", "swe-rebench-v2-prs", "swe-bench-multilingual", *data_args(paths), "--no-report", "--format",
            "json", *FAST]
    run_checked("ids:prs-float-huge", args, root=tmp_path)


def test_multi_swe_bench_odd_numbers(tmp_path):
    from swe_fixtures import A, msb_row, write_jsonl

    paths = swe_data(tmp_path / "data")
    rows = [msb_row("clap-rs", "clap", n, A[1]) for n in (941.0, 941.5, "941", "９４１", -941, 2**70, True, None)]
    rows.append(dict(msb_row("clap-rs", "clap", 941, A[1]), base="not-an-object", org=None))
    rows.append(dict(msb_row("clap-rs", "clap", 941, A[1]), resolved_issues="text", fix_patch=7))
    write_jsonl(paths["multi-swe-bench"] / "rust" / "clap-rs__clap_dataset.jsonl", rows)
    args = ["compare", "swe-rebench-v2", "multi-swe-bench", *data_args(paths), "--no-report", "--format", "json",
            *FAST]
    run_checked("ids:msb-odd-numbers", args, root=tmp_path)
