import csv
import io
import json
import subprocess
import sys

import pytest
from fixtures import data_args, write_mapping
from typer.testing import CliRunner

from overlap.cli import app

runner = CliRunner()


def run(*args, cwd=None):
    return runner.invoke(app, [str(a) for a in args], catch_exceptions=False)


def test_compare_writes_report_folder_and_prints_table(cyber, tmp_path):
    out = tmp_path / "report"
    result = run("compare", "mimo-cyber", "cybergym", *data_args(cyber), "--out", out)
    assert result.exit_code == 0, result.stderr
    assert "bench items matched" in result.stdout and "4 of 7 (57.1%)" in result.stdout
    assert sorted(p.name for p in out.iterdir()) == [".overlap-output",
        "cybergym_clean_ids.txt", "cybergym_contaminated_ids.txt", "duplicates.csv", "pair_items.parquet",
        "pairs.csv", "report.html", "report.md", "summary.json", "train_clean_ids.txt"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["tool"]["name"] == "overlap"
    assert summary["mapping"]["pairs"] == 5
    assert summary["mapping"]["provenance"]["files"][0]["sha256"]
    assert summary["train"]["provenance"]["files"][0]["rows"] == 7
    pairs = (out / "pairs.csv").read_text().splitlines()
    assert pairs[0] == ("bench,train_id,bench_id,kinds,match_type,train_raw,bench_raw,pair_kind,counted,"
                        "fix_relation,fix_method,fix_reason,crash_grade,crash_reason,"
                        "longest_run,names_function,names_file")
    assert len(pairs) == 6
    assert (out / "train_clean_ids.txt").read_text() == "arvo_19999\narvo_badid\n"


def test_compare_is_deterministic(cyber, tmp_path):
    run("compare", "mimo-cyber", "cybergym", *data_args(cyber), "--out", tmp_path / "a")
    run("compare", "mimo-cyber", "cybergym", *data_args(cyber), "--out", tmp_path / "b")
    for name in sorted(p.name for p in (tmp_path / "a").iterdir()):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


@pytest.mark.parametrize("fmt", ["json", "csv", "md"])
def test_compare_formats(cyber, fmt):
    result = run("compare", "sec-bench", "cybergym", *data_args(cyber), "--no-report", "--format", fmt)
    assert result.exit_code == 0
    if fmt == "json":
        assert json.loads(result.stdout)["benches"][0]["pairs"] == 2
    elif fmt == "csv":  # the summary table's rows, as the other formats print them (pairs are in pairs.csv)
        rows = list(csv.reader(io.StringIO(result.stdout)))
        assert rows[0] == ["measure", "cybergym"]
        assert ["sec-bench:oss: train items matched", "2 of 3 (1 by plain join)"] in [[r[0].strip(), r[1]]
                                                                                    for r in rows]
    else:
        assert result.stdout.startswith("| measure | cybergym |")
        assert "sec-bench:oss: train items matched | 2 of 3 (1 by plain join)" in result.stdout


def test_fail_on_threshold(cyber):
    args = ["compare", "sec-bench", "cybergym", *data_args(cyber), "--no-report", "--format", "json"]
    assert run(*args, "--fail-on", "2").exit_code == 1
    assert run(*args, "--fail-on", "3").exit_code == 0
    assert run(*args, "--fail-on", "25%").exit_code == 1
    assert run(*args, "--fail-on", "50%").exit_code == 0
    bad = run(*args, "--fail-on", "lots")
    assert bad.exit_code == 2 and "--fail-on" in bad.stderr


def _one_line_error(result):
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("overlap: error: ")
    assert "Traceback" not in result.stderr
    return lines[0]


def test_unknown_dataset(cyber):
    line = _one_line_error(run("compare", "mimo-cyber", "cybergymm", *data_args(cyber)))
    assert "unknown dataset 'cybergymm'" in line and "sec-bench" in line


def test_missing_file_and_column(cyber, tmp_path):
    (cyber["cybergym"] / "tasks.json").unlink()
    line = _one_line_error(run("compare", "mimo-cyber", "cybergym", *data_args(cyber)))
    assert "tasks.json" in line and "not found" in line
    (cyber["cybergym"] / "tasks.json").write_text('[{"name": 1}]')
    line = _one_line_error(run("compare", "mimo-cyber", "cybergym", *data_args(cyber)))
    assert "missing column(s) 'task_id'" in line


def test_mapping_missing_or_not_one_to_one(cyber, tmp_path):
    args = {k: v for k, v in cyber.items() if k != "arvo"}
    line = _one_line_error(run("compare", "mimo-cyber", "cybergym", *data_args(args)))
    assert "--data" in line and "oss_fuzz_mappings.csv" in line
    bad = write_mapping(tmp_path / "bad", rows=[(1, 100), (1, 200)])
    line = _one_line_error(run("compare", "mimo-cyber", "cybergym", *data_args(args), "--data", f"arvo={bad}"))
    assert "one-to-one" in line


def test_empty_dataset(cyber):
    (cyber["cybergym"] / "tasks.json").write_text("[]")
    line = _one_line_error(run("compare", "mimo-cyber", "cybergym", *data_args(cyber)))
    assert "no usable rows" in line


def test_failed_run_leaves_existing_report_untouched(cyber, tmp_path):
    out = tmp_path / "report"
    assert run("compare", "mimo-cyber", "cybergym", *data_args(cyber), "--out", out).exit_code == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    (cyber["cybergym"] / "tasks.json").write_text("[")
    _one_line_error(run("compare", "mimo-cyber", "cybergym", *data_args(cyber), "--out", out))
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".report")] == []


def test_atomic_folder_removes_temp_on_error(tmp_path):
    from overlap.outputs.atomic import atomic_folder

    with pytest.raises(RuntimeError), atomic_folder(tmp_path / "out") as tmp:
        (tmp / "half.csv").write_text("x")
        raise RuntimeError("boom")
    assert list(tmp_path.iterdir()) == []


def test_datasets_lists_every_adapter_with_revision():
    from overlap.sources.registry.registry import all_specs

    result = run("datasets", "--format", "json")
    assert result.exit_code == 0
    rows = {r["name"]: r for r in json.loads(result.stdout)}
    for spec in all_specs():
        if spec.revision is None:  # declared unpinned, and saying so: the commit read is recorded at run time
            assert spec.notes.startswith("unpinned:"), spec.name
            continue
        assert spec.revision in rows[spec.name]["repo"]
    assert rows["sec-bench"]["subsets"] == "oss, cve"
    table = run("datasets")
    assert "mimo-cyber" in table.stdout and "639865fd3374018d6cb29b9fb82dd531406fcf5f" in table.stdout


def test_ids_command(cyber):
    result = run("ids", "arvo:10400", "php.ossfuzz-42491394", "arvo_19999", "jq.cve-2023-50246",
                 "--data", f"arvo={cyber['arvo']}", "--format", "json")
    assert result.exit_code == 0
    rows = json.loads(result.stdout)
    assert [r["canonical"] for r in rows] == ["42470443", "42491394", "19999", "CVE-2023-50246"]
    assert [r["tracker"] for r in rows] == ["old", "new", "old", None]
    assert [r["scheme"] for r in rows] == ["ossfuzz", "ossfuzz", "ossfuzz", "cve"]
    assert rows[0]["number"] == 10400 and rows[0]["in_mapping"] is True  # JSON keeps its types
    bad = run("ids", "arvo:xyz", "--data", f"arvo={cyber['arvo']}")
    assert bad.exit_code == 2 and "arvo:xyz" in bad.stderr


def test_ids_reads_a_pr_url_as_a_pr_not_an_ossfuzz_number(cyber):
    result = run("ids", "https://github.com/o/r/pull/10340", "10340", "--data", f"arvo={cyber['arvo']}",
                 "--format", "json")
    assert result.exit_code == 0, result.stderr
    pr, bare = json.loads(result.stdout)
    assert (pr["scheme"], pr["canonical"], pr["number"]) == ("github_pr", "o/r#10340", None)
    assert (bare["scheme"], bare["number"]) == ("ossfuzz", 10340)


def test_demo_runs_offline(tmp_path):
    out = tmp_path / "demo"
    result = run("demo", "--out", out)
    assert result.exit_code == 0, result.stderr
    assert "plain join on the numbers finds 4 of 10" in result.stdout
    assert "chance, within project" in result.stdout and "permutation check" in result.stdout
    assert (out / "pairs.csv").is_file()


def test_help_imports_no_heavy_module():
    code = (
        "import sys\n"
        "from overlap.cli import main\n"
        "sys.argv = ['overlap', '--help']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "heavy = [m for m in sys.modules if m.split('.')[0] in "
        "('datasets', 'huggingface_hub', 'scipy', 'pandas', 'pyarrow') or m.startswith('overlap.audit')]\n"
        "print('HEAVY', sorted(heavy))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "HEAVY []" in proc.stdout, proc.stdout[-500:]
    assert "compare" in proc.stdout


def test_default_report_folders_name_the_subset_so_runs_never_overwrite(cyber, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for bench in ("cybergym", "cybergym:arvo"):
        result = run("compare", "mimo-cyber", bench, *data_args(cyber), "--pool", "none", "--text", "none")
        assert result.exit_code == 0, result.stderr
    assert sorted(p.name for p in (tmp_path / "reports").iterdir()) == [
        "mimo-cyber__cybergym", "mimo-cyber__cybergym-arvo"]
    subset = json.loads((tmp_path / "reports" / "mimo-cyber__cybergym-arvo" / "summary.json").read_text())
    assert subset["benches"][0]["dataset"]["provenance"]["subsets"] == ["arvo"]
    assert subset["parameters"]["labels"] == ["mimo-cyber", "cybergym:arvo"]
    report = (tmp_path / "reports" / "mimo-cyber__cybergym-arvo" / "report.md").read_text()
    assert report.startswith("# overlap: mimo-cyber vs cybergym:arvo")


def test_blank_ids_are_shown_quoted_and_a_selection_shows_its_dataset():
    from overlap.api.demo import DEMO_ROOT

    blank = runner.invoke(app, ["ids", "", "  ", "arvo:10055", "-d", f"arvo={DEMO_ROOT / 'arvo'}"])
    assert blank.exit_code == 2 and "no scheme overlap recognises: '', '  '" in blank.stderr
    shown = runner.invoke(app, ["datasets", "--show", "swe-bench-pro:hard"])
    assert shown.exit_code == 0 and 'name = "swe-bench-pro"' in shown.stdout


def test_bare_number_ids_come_with_the_option_that_reads_them(tmp_path):
    """Bare numbers name no scheme on their own (unrecognised, so they join nothing): the stderr line that says so
    also says how to read them as OSS-Fuzz issues, and under that option they join."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from overlap.api.demo import DEMO_ROOT

    pq.write_table(pa.table({"id": [10055, 42471002, 5]}), tmp_path / "ints.parquet")
    data = ["-d", f"cybergym={DEMO_ROOT / 'cybergym'}", "-d", f"arvo={DEMO_ROOT / 'arvo'}"]
    base = ["compare", str(tmp_path / "ints.parquet"), "cybergym", "--id-column", "id", *data, "--no-report",
            "--pool", "none", "-f", "json"]
    plain = runner.invoke(app, base)
    assert plain.exit_code == 0 and "pass --id-scheme ossfuzz" in plain.stderr
    assert json.loads(plain.stdout)["benches"][0]["bench_items_matched"] == 0
    read = runner.invoke(app, [*base, "--id-scheme", "ossfuzz"])
    assert read.exit_code == 0 and "pass --id-scheme" not in read.stderr
    assert json.loads(read.stdout)["benches"][0]["bench_items_matched"] == 2


def test_whole_floats_written_as_text_come_with_how_to_read_them(tmp_path):
    """A CSV written from an integer column with blanks holds 10055.0: text, so no id under any scheme (as
    documented); the stderr line says why and what to do, and the same numbers as JSON numbers join."""
    from overlap.api.demo import DEMO_ROOT

    (tmp_path / "floats.csv").write_text("id\n10055.0\n42471002.0\n\n")
    (tmp_path / "floats.jsonl").write_text('{"id": 10055.0}\n{"id": 42471002.0}\n')
    data = ["-d", f"cybergym={DEMO_ROOT / 'cybergym'}", "-d", f"arvo={DEMO_ROOT / 'arvo'}"]
    for name, matched, hinted in (("floats.csv", 0, True), ("floats.jsonl", 2, False)):
        run = runner.invoke(app, ["compare", str(tmp_path / name), "cybergym", "--id-column", "id", "--id-scheme",
                                  "ossfuzz", *data, "--no-report", "--pool", "none", "-f", "json"])
        assert run.exit_code == 0, run.stderr
        assert ("whole numbers written as floats" in run.stderr) is hinted
        assert json.loads(run.stdout)["benches"][0]["bench_items_matched"] == matched
