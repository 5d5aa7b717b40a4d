"""``overlap audit --targets``: many targets in one run, each against its own reference; the document, the
per-set table, re-runs, failures, ``--jobs`` and ``--engine ray`` giving the same bytes."""

from __future__ import annotations

import csv
import html
import io
import json
import shutil

import pytest
from audit_helpers import git, run_cli
from batch_helpers import repo, write_jsonl

from overlap.audit.study import run as study_run
from overlap.audit.study.render import render_console, render_csv, render_html, render_md
from overlap.audit.study.run import BatchOptions, run_batch
from overlap.audit.study.targets import read_targets

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


@pytest.fixture(scope="module")
def tasks(tmp_path_factory):
    root = tmp_path_factory.mktemp("batch")
    base_l, patch_l = repo(root / "leaky", leak=True)
    base_c, patch_c = repo(root / "clean", leak=False)
    (root / "fix.patch").write_text(patch_c)
    rows = [{"path": "leaky", "set": "old", "instance_id": "o__leaky-1", "base_commit": base_l, "patch": patch_l},
            {"path": "clean", "set": "new", "instance_id": "o__clean-2", "base_commit": base_c, "patch": "fix.patch"}]
    write_jsonl(root / "targets.jsonl", rows)
    write_jsonl(root / "with-bad.jsonl", [*rows, {"path": "no-such-folder", "set": "new", "instance_id": "o__gone-3"},
                                          {"image": "docker://registry.invalid/none:v1", "instance_id": "o__img-4"}])
    return root


def by_id(doc: dict) -> dict:
    return {e["instance_id"]: e for e in doc["targets"]}


@pytest.fixture(scope="module")
def doc(tasks):
    return run_batch(read_targets(tasks / "targets.jsonl"), BatchOptions(jobs=2))


def test_fix_as_unreachable_commit_leaks_single_commit_does_not(doc):
    got = by_id(doc)
    leaky, clean = got["o__leaky-1"], got["o__clean-2"]
    assert leaky["status"] == clean["status"] == "ok"
    assert leaky["verdict"] == "leak" and clean["verdict"] != "leak"
    assert leaky["columns"]["hidden_history"] and leaky["columns"]["reference_stored"]
    assert not leaky["columns"]["git_log_all"]  # the fix is in no ref: `git log --all` does not show it
    assert {f["check"] for f in leaky["findings"]} >= {"G5", "G6", "F1"}
    # the clean build shows nothing in any column
    assert clean["columns"] == {"git_log_all": False, "hidden_history": False, "reference_stored": False,
                                "newest_files": {"any": False, "tests": False, "fix": False}}
    # the patch is the reference (given inline or as a file), base_commit the base
    assert leaky["reference"]["patch_sha256"] and clean["reference"]["patch_sha256"]


def test_document_shape(doc):
    assert doc["schema"] == "overlap.audit.batch/1"
    assert doc["verdict"] == "leak" and doc["exit_code"] == 0
    assert doc["counts"] == {"targets": 2, "ok": 2, "error": 0, "repeated_rows": 0}
    assert [c["id"] for c in doc["columns"]] == ["git_log_all", "hidden_history", "reference_stored", "newest_files"]
    for e in doc["targets"]:
        assert {"key", "set", "instance_id", "path", "status", "error", "verdict", "findings", "columns"} <= set(e)
        assert len(e["key"]) == 64
    sets = {s["set"]: s for s in doc["sets"]}
    assert sorted(sets) == ["new", "old"]
    assert sets["old"]["columns"]["hidden_history"] == {"count": 1, "ids": ["o__leaky-1"]}
    assert sets["new"]["columns"]["hidden_history"] == {"count": 0, "ids": []}
    assert sets["old"]["verdicts"]["leak"]["ids"] == ["o__leaky-1"]
    json.dumps(doc)  # plain JSON


def test_per_set_table_in_every_form(doc):
    console = render_console(doc)
    lines = console.splitlines()
    # one block per set, in the order the targets file gives them (old before new)
    assert [n for n in ("old:", "new:") for line in lines if line.startswith(n)] == ["old:", "new:"]
    assert lines.index(next(x for x in lines if x.startswith("old:"))) < \
        lines.index(next(x for x in lines if x.startswith("new:")))
    old = lines[lines.index(next(x for x in lines if x.startswith("old:"))):]
    end = next(n for n, x in enumerate(old) if x.split()[:1] == ["failed"])
    counts = {x.strip().rsplit(None, 1)[0]: x.split()[-1] for x in old[2:end + 1]}
    assert counts == {"git log --all": "0", "hidden history": "1", "reference stored": "1",
                      "newest: hidden tests": "0", "newest: fixed files": "0", "newest: other group": "0",
                      "suspect": "0", "leak": "1", "failed": "0"}
    assert "  hidden history: o__leaky-1" in console
    rows = list(csv.DictReader(io.StringIO(render_csv(doc))))
    assert [r["set"] for r in rows] == ["old", "new"]
    old_row = rows[0]
    assert old_row["reference_stored"] == "1" and old_row["reference_stored_ids"] == "o__leaky-1"
    md = render_md(doc)
    assert md.startswith("| image set | tasks | git log --all | hidden history | reference stored |")
    assert "commits outside the base's history visible to `git log --all`" in md and "`o__leaky-1`" in md
    page = render_html(doc)
    assert "<details><summary>1</summary><ul><li>o__leaky-1</li></ul></details>" in page
    assert "<code>git log --all</code>" in page and "`" not in page.split("<main>")[1]


def test_rerun_skips_targets_already_done(tasks, tmp_path, monkeypatch):
    out = tmp_path / "out"
    targets = read_targets(tasks / "targets.jsonl")
    first = run_batch(targets, BatchOptions(jobs=2), out)
    files = sorted(p.name for p in (out / "targets").iterdir())
    assert len(files) == 2 and all(f.endswith(".json") for f in files)
    ran: list = []
    monkeypatch.setattr(study_run, "run_local", lambda jobs, *a: ran.extend(jobs))
    again = run_batch(targets, BatchOptions(jobs=1), out)
    assert ran == [] and again == first
    # another option that changes a result is another key: audited again
    run_batch(targets, BatchOptions(network="none"), out)
    assert len(ran) == 2


def test_a_failed_target_does_not_stop_the_others(tasks, tmp_path):
    out = tmp_path / "out"
    res = run_cli("--targets", str(tasks / "with-bad.jsonl"), "--out", str(out), "--format", "json", cwd=tmp_path,
                  timeout=120)
    assert res.code == 2, res.stderr
    assert res.stderr.strip().splitlines() == ["overlap: 2 of 4 targets failed (status error in the report)"]
    got = by_id(json.loads(res.stdout))
    assert got["o__leaky-1"]["verdict"] == "leak" and got["o__clean-2"]["status"] == "ok"
    gone = got["o__gone-3"]
    assert gone["status"] == "error" and "no such file or folder" in gone["error"] and "\n" not in gone["error"]
    assert got["o__img-4"]["status"] == "error"
    assert (out / "audit.json").read_text() == res.stdout
    assert {p.name for p in out.iterdir()} == {"targets", "audit.json", *(f"{t}.{x}" for t in ("sets", "routes")
                                                   for x in ("csv", "md", "html")), "routes.json"}
    # --fail-on leak still says 1 when a target leaks
    res = run_cli("--targets", str(tasks / "with-bad.jsonl"), "--fail-on", "leak", cwd=tmp_path, timeout=120)
    assert res.code == 1
    assert "failed: new / o__gone-3: " in res.stdout and "failed: with-bad / o__img-4: " in res.stdout


def test_jobs_do_not_change_a_byte(tasks, tmp_path):
    outs = []
    for jobs in ("1", "2"):
        res = run_cli("--targets", str(tasks / "targets.jsonl"), "--jobs", jobs, "--format", "json",
                      "--out", str(tmp_path / jobs), cwd=tmp_path, timeout=120)
        assert res.code == 0, res.stderr
        outs.append(res.stdout)
    assert outs[0] == outs[1]
    assert (tmp_path / "1" / "sets.csv").read_bytes() == (tmp_path / "2" / "sets.csv").read_bytes()


def test_a_target_past_its_timeout_is_stopped_and_reported(tasks):
    doc = run_batch(read_targets(tasks / "targets.jsonl"), BatchOptions(jobs=2, timeout=0.01))
    assert {e["status"] for e in doc["targets"]} == {"error"}
    assert all("timed out after 0.01 s" in e["error"] for e in doc["targets"])
    assert doc["exit_code"] == 2


def test_ray_engine_gives_the_same_document(tasks, doc, monkeypatch):
    ray = pytest.importorskip("ray")
    monkeypatch.setenv("RAY_USAGE_STATS_ENABLED", "0")
    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)
    try:
        on_ray = run_batch(read_targets(tasks / "targets.jsonl"), BatchOptions(engine="ray", jobs=2))
    finally:
        ray.shutdown()
    assert study_run.document_json(on_ray) == study_run.document_json(doc)


def test_csv_targets_with_patch_text_in_a_cell(tasks, tmp_path):
    rows = [json.loads(line) for line in (tasks / "targets.jsonl").read_text().splitlines()]
    path = tmp_path / "t.csv"
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=["path", "instance_id", "base_commit", "patch"])
        w.writeheader()
        w.writerow({"path": str(tasks / "leaky"), "instance_id": rows[0]["instance_id"],
                    "base_commit": rows[0]["base_commit"], "patch": rows[0]["patch"]})
    (t,) = read_targets(path, "mine")
    assert t.set == "mine" and t.patch == rows[0]["patch"] and t.kind == "path"
    doc = run_batch([t], BatchOptions(jobs=1))
    assert doc["targets"][0]["verdict"] == "leak"


@pytest.mark.parametrize("args, needle", [
    (["--targets", "{T}/missing.jsonl"], "no such file"),
    (["{T}/leaky", "--targets", "{T}/targets.jsonl"], "PATH: not with --targets"),
    (["--targets", "{T}/targets.jsonl", "--base", "HEAD"], "--base: not with --targets"),
    (["--targets", "{T}/targets.jsonl", "--sample", "3"], "--sample: only with --benchmark"),
    (["{T}/leaky", "--jobs", "2"], "--jobs: only with --targets or --benchmark"),
    (["--targets", "{T}/targets.jsonl", "--limit", "bogus=1"], "unknown limit"),
    (["--targets", "{T}/targets.jsonl", "--out", "{T}/leaky/out"], "inside the audited"),
    (["--targets", "{T}/fix.patch"], "no image or path column"),
    (["--benchmark", "swe-bench-verified", "--targets", "{T}/targets.jsonl"], "give one"),
    (["--benchmark", "swe-smith"], "declares no [audit] table"),
    ([], "give what to audit"),
])
def test_bad_input_exits_2_with_one_line_and_writes_nothing(tasks, tmp_path, args, needle):
    before = sorted(p.name for p in tasks.iterdir())
    res = run_cli(*[a.format(T=tasks) for a in args], cwd=tmp_path, timeout=60)
    assert res.code == 2, (res.stdout, res.stderr)
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], res.stderr
    assert res.stdout == "" and list(tmp_path.iterdir()) == []
    assert sorted(p.name for p in tasks.iterdir()) == before and not (tasks / "leaky" / "out").exists()


def _finding(check: str, severity: str, subject: str = "x", **evidence) -> dict:
    return {"check": check, "key": f"{check}:{subject}", "severity": severity, "evidence": evidence}


def test_finding_codes_feed_their_columns():
    from overlap.audit.study.summary import columns_of

    def cols(*findings, tests=("tests/test_calc.py",), fix=("calc.py",)):
        report = {"inputs": {"tests": [{"paths": list(tests)}], "fix": [{"paths": list(fix)}]},
                  "targets": [{"findings": list(findings)}]}
        return columns_of(report)

    assert cols(_finding("G6", "high", "refs"))["git_log_all"]
    assert cols(_finding("G6", "high", "stash#2"))["git_log_all"]
    assert cols(_finding("G6", "medium", "unreachable"))["hidden_history"]
    assert cols(_finding("G2", "critical"))["hidden_history"] and cols(_finding("G1", "high"))["git_log_all"]
    assert cols(_finding("F2", "critical"))["reference_stored"]
    # low and info findings count nowhere; leftovers and G10 are in no column
    assert not any(v for k, v in cols(_finding("G1", "info"), _finding("G10", "medium"),
                                      _finding("L1", "critical")).items() if k != "newest_files")
    group = [{"path": "tests/test_calc.py"}, {"path": "README"}]
    t1 = cols(_finding("T1", "high", group=group, reference_paths=["calc.py", "tests/test_calc.py"]))
    assert t1["newest_files"] == {"any": True, "tests": True, "fix": False}
    t2 = cols(_finding("T2", "medium", "stat-dirty", items=[{"path": "calc.py"}]))
    assert t2["newest_files"] == {"any": True, "tests": False, "fix": True}


def test_insecure_registries_reach_each_target_but_not_its_key(monkeypatch):
    """--insecure-registry is transport: each target's audit gets it, and a result keyed without it is reused."""
    from overlap.audit import run as audit_run
    from overlap.audit.study import execute
    from overlap.audit.study.targets import BatchTarget
    from overlap.errors import InputError

    seen = []

    def fake_audit(target, **kwargs):
        seen.append((target, kwargs))
        raise InputError("stopped after the call")  # the call is what this test looks at

    monkeypatch.setattr(audit_run, "audit", fake_audit)
    monkeypatch.setattr(study_run, "run_local",
                        lambda jobs, workers, timeout, done: [done(k, execute.audit_target(p)) for k, p in jobs])
    t = BatchTarget("s", "docker://registry.test:5000/task:1", "image", instance_id="o__a-1")
    plain = run_batch([t], BatchOptions())
    named = run_batch([t], BatchOptions(insecure_registries=("registry.test:5000",)))
    assert [list(kw["insecure_registries"]) for _, kw in seen] == [[], ["registry.test:5000"]]
    assert seen[1][0] == "docker://registry.test:5000/task:1"
    assert plain["targets"][0]["key"] == named["targets"][0]["key"]


def test_a_targets_file_with_a_byte_order_mark_reads_as_without(tmp_path):
    """A spreadsheet's UTF-8 byte-order mark is no part of the first column's name (CSV) nor of the first row
    (JSON lines): the rows read alike; a folder given as --targets says it is a folder."""
    from overlap.audit.study.targets import read_rows
    from overlap.errors import InputError

    rows = [{"image": "docker://localhost:5000/task/a:1", "set": "s", "instance_id": "a"},
            {"path": "repos/b", "set": "s", "instance_id": "b"}]
    lines = "".join(json.dumps(r) + "\n" for r in rows)
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, ["image", "path", "set", "instance_id"], lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    for name, text in (("t.jsonl", lines), ("t.csv", buffer.getvalue())):
        (tmp_path / name).write_text(text, encoding="utf-8")
        (tmp_path / f"bom-{name}").write_text(text, encoding="utf-8-sig")
        assert read_rows(tmp_path / f"bom-{name}") == read_rows(tmp_path / name)
    with pytest.raises(InputError, match="a folder, not a file"):
        read_rows(tmp_path)


def test_a_row_whose_patch_file_is_empty_fails_and_never_runs_without_its_reference(tasks, tmp_path):
    """An empty patch file is no reference: the row fails, naming it, as `--fix` refuses an empty diff (it ran
    the row with no reference at all, `ok`)."""
    (tmp_path / "empty.patch").write_text("")
    write_jsonl(tmp_path / "t.jsonl", [{"path": str(tasks / "leaky"), "patch": "empty.patch"}])
    (target,) = read_targets(tmp_path / "t.jsonl", "mine")
    assert target.error is not None and "empty.patch: the file is empty" in target.error


def _ids_cell(cell: str) -> list[str]:
    """The ids of a sets.csv ids cell as the docs describe it: space-separated, an id as a JSON string when it
    holds white space or starts with a quote."""
    out, at, decoder = [], 0, json.JSONDecoder()
    while at < len(cell):
        if cell[at] == " ":
            at += 1
        elif cell[at] == '"':
            value, at = decoder.raw_decode(cell, at)
            out.append(value)
        else:
            end = cell.find(" ", at)
            end = len(cell) if end < 0 else end
            out.append(cell[at:end])
            at = end
    return out


def test_ids_and_set_names_with_separators_and_markup_read_back_as_written(doc):
    """An id with a space, a quote or backticks, and a set name with HTML and Markdown markup: the CSV gives the
    ids back as written, and the Markdown (rendered by a real CommonMark parser) shows them as text."""
    import copy

    from markdown_it import MarkdownIt

    odd = ["a b", '"quoted"', "x`y", "`edge", "p|q", "plain"]
    edited = copy.deepcopy(doc)
    old = next(s for s in edited["sets"] if s["set"] == "old")
    old["set"] = "<b>bold</b> *set* | [x](y)"
    old["columns"]["hidden_history"] = {"count": len(odd), "ids": odd}
    rows = list(csv.DictReader(io.StringIO(render_csv(edited))))
    row = next(r for r in rows if r["set"] == old["set"])
    assert _ids_cell(row["hidden_history_ids"]) == odd
    page = MarkdownIt("commonmark").enable("table").render(render_md(edited))
    assert "<b>" not in page and "<em>" not in page and "<a " not in page
    assert page.count(html.escape(old["set"], quote=False)) >= 2  # its table cell and its ids lines
    for item_id in odd:
        assert f"<code>{html.escape(item_id, quote=False).replace(chr(34), '&quot;')}</code>" in page


def test_a_row_repeating_another_is_audited_once_and_counted(tasks, tmp_path):
    """Two rows with the same inputs are one target: audited once, and the merge is said, not silent."""
    rows = [json.loads(line) for line in (tasks / "targets.jsonl").read_text().splitlines()]
    for row in rows:  # relative paths are read from the file's folder
        row["path"] = str(tasks / row["path"])
        if not row["patch"].startswith("diff"):
            row["patch"] = str(tasks / row["patch"])
    (tmp_path / "twice.jsonl").write_text("".join(json.dumps(r) + "\n" for r in [*rows, rows[0], rows[0]]))
    doc = run_batch(read_targets(tmp_path / "twice.jsonl"), BatchOptions(jobs=1))
    assert doc["counts"] == {"targets": 2, "ok": 2, "error": 0, "repeated_rows": 2}
    assert "2 rows repeating an earlier row's target" in render_console(doc)


def test_a_patch_file_that_is_not_utf8_is_the_reference_of_its_row(tmp_path):
    """A diff of a Latin-1 source file reaches the worker as escaped lone surrogates (the row's file read with
    surrogateescape): it was an internal error (UnicodeEncodeError) instead of the reference."""
    root = tmp_path / "latin1"
    root.mkdir()
    git("init", "-q", "-b", "main", ".", cwd=root)
    (root / "m.py").write_bytes(b"# caf\xe9\ndef f():\n    return 'caf\xe9 au lait, black and bitter'\n")
    git("add", "-A", cwd=root)
    git("commit", "-qm", "base", cwd=root)
    base = git("rev-parse", "HEAD", cwd=root).strip()
    (root / "m.py").write_bytes(b"# caf\xe9\ndef f():\n    return 'caf\xe9 au lait with sugar and milk \xe9\xe9'\n")
    (tmp_path / "fix.patch").write_bytes(b"--- a/m.py\n+++ b/m.py\n@@ -1,3 +1,3 @@\n # caf\xe9\n def f():\n"
                                         b"-    return 'caf\xe9 au lait, black and bitter'\n"
                                         b"+    return 'caf\xe9 au lait with sugar and milk \xe9\xe9'\n")
    git("commit", "-qam", "fix", cwd=root)
    git("reset", "-q", "--hard", base, cwd=root)
    write_jsonl(tmp_path / "t.jsonl", [{"path": "latin1", "instance_id": "lat-1", "base_commit": base,
                                        "patch": "fix.patch"}])
    got = by_id(run_batch(read_targets(tmp_path / "t.jsonl"), BatchOptions(jobs=1)))["lat-1"]
    assert got["status"] == "ok" and got["verdict"] == "leak", got.get("error")
    assert "F1" in {f["check"] for f in got["findings"]}


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_an_interrupted_batch_leaves_whole_target_files_and_no_temp_files_and_resumes(tasks, tmp_path, sig):
    """Stopped mid-run (Ctrl-C, or a job scheduler's SIGTERM): one line and a non-zero exit, every target file
    written is whole JSON, nothing is left in the temp folder, and a re-run audits only what is left and gives
    the document an uninterrupted run gives."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from audit_helpers import CLI

    rows = [{"path": str(tasks / ("leaky" if i % 2 else "clean")), "set": "s", "instance_id": f"o__t-{i}",
             "base_commit": git("rev-parse", "HEAD", cwd=tasks / ("leaky" if i % 2 else "clean")).strip(),
             "patch": str(tasks / "fix.patch")} for i in range(40)]
    write_jsonl(tmp_path / "many.jsonl", rows)
    temp = tmp_path / "temp"
    temp.mkdir()
    env = {**os.environ, "TMPDIR": str(temp), "COLUMNS": "200"}
    out = tmp_path / "out"
    args = [sys.executable, "-c", CLI, "audit", "--targets", str(tmp_path / "many.jsonl"), "--out", str(out),
            "--format", "json", "--jobs", "1"]
    proc = subprocess.Popen(args, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None and \
            len(list((out / "targets").glob("*.json")) if (out / "targets").is_dir() else []) < 3:
        time.sleep(0.05)
    assert proc.poll() is None, "the batch ended before it could be interrupted"
    proc.send_signal(getattr(signal, sig))
    _, err = proc.communicate(timeout=60)
    assert proc.returncode != 0 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    written = list((out / "targets").glob("*"))
    assert 3 <= len(written) < 40
    for path in written:
        json.loads(path.read_text())  # whole, never cut mid-write
    assert not (out / "audit.json").exists()
    assert list(temp.iterdir()) == []
    done = subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 or done.returncode in (0, 1), done.stderr
    clean = subprocess.run([*args[:-4], "--out", str(tmp_path / "fresh"), "--format", "json", "--jobs", "1"],
                           cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.stdout == clean.stdout and done.returncode == clean.returncode
    assert list(temp.iterdir()) == []
