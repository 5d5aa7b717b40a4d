"""File names that are not UTF-8 (`/root/\\xff\\xfe-bad.orig`): every output names them with the bytes escaped
(`\\xff`), so the JSON is valid UTF-8 whichever way it is written (stdout, --out FILE, a batch's files), and the
table and one-line messages stay one line."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from audit_helpers import CLI
from batch_helpers import FIXED, repo, write_jsonl

from overlap.audit import audit, render_table
from overlap.audit.study.run import BatchOptions, run_batch, write_document
from overlap.audit.study.targets import read_targets

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

BAD = b"\xff\xfe-bad"
SHOWN = "\\xff\\xfe-bad"


@pytest.fixture(scope="module")
def task(tmp_path_factory):
    """A repository holding an untracked patch under a name that is not UTF-8."""
    root = tmp_path_factory.mktemp("names")
    base, patch = repo(root / "repo", leak=False)
    (root / "fix.patch").write_text(patch)
    os.mkdir(os.fsencode(root / "repo") + b"/" + BAD + b"dir")
    with open(os.fsencode(root / "repo") + b"/" + BAD + b".orig", "wb") as fh:
        fh.write(patch.encode())
    return root, base, patch


def test_the_report_names_a_non_utf8_file_escaped(task):
    root, base, _ = task
    report = audit(str(root / "repo"), base=base, fix=[str(root / "fix.patch")])
    text = report.to_json()
    text.encode("utf-8")  # raised UnicodeEncodeError: a lone surrogate in the JSON text
    keys = {f["key"]: f["severity"] for f in json.loads(text)["targets"][0]["findings"]}
    assert keys[f"L1:{SHOWN}.orig"] == "critical", keys
    table = render_table(report, width=200)
    table.encode("utf-8")
    assert f"L1     {SHOWN}.orig" in table


def test_json_to_stdout_and_out_file_are_valid_utf8(task, tmp_path):
    """`--format json` wrote the raw 0xff byte to stdout; `--out FILE` died with UnicodeEncodeError."""
    root, base, _ = task
    out = tmp_path / "report.json"
    proc = subprocess.run([sys.executable, "-c", CLI, "audit", str(root / "repo"), "--base", base, "--fix",
                           str(root / "fix.patch"), "--format", "json", "--out", str(out)], capture_output=True,
                          timeout=60, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr.decode("utf-8", "replace")
    for data in (proc.stdout, out.read_bytes()):
        doc = json.loads(data.decode("utf-8"))
        assert any(f["where"] == f"{SHOWN}.orig" for f in doc["targets"][0]["findings"])


def test_one_such_row_in_a_batch_is_audited_like_the_others(task, tmp_path):
    root, base, patch = task
    targets = write_jsonl(tmp_path / "targets.jsonl", [
        {"path": str(root / "repo"), "instance_id": "odd-1", "base_commit": base, "patch": patch}])
    doc = run_batch(read_targets(targets), BatchOptions(jobs=1), tmp_path / "out")
    entry = doc["targets"][0]
    assert entry["status"] == "ok" and entry["verdict"] == "leak", entry.get("error")
    write_document(doc, tmp_path / "out")
    for name in ("audit.json", "sets.csv", "sets.md", "sets.html"):
        (tmp_path / "out" / name).read_bytes().decode("utf-8")
    saved = json.loads((tmp_path / "out/audit.json").read_text(encoding="utf-8"))
    assert any(f["where"] == f"{SHOWN}.orig" for f in saved["targets"][0]["findings"])


def test_an_image_member_named_with_bytes_that_are_not_utf8(task, tmp_path):
    root, base, patch = task
    layer0 = tmp_path / "l0"
    shutil.copytree(root / "repo", layer0 / "testbed", symlinks=True)
    shutil.rmtree(os.fsencode(layer0 / "testbed") + b"/" + BAD + b"dir")
    os.remove(os.fsencode(layer0 / "testbed") + b"/" + BAD + b".orig")
    bad = BAD.decode("utf-8", "surrogateescape")
    extra = tmp_path / "extra.tar"
    with tarfile.open(extra, "w", format=tarfile.GNU_FORMAT, errors="surrogateescape") as t:
        for name, data in ((f"root/{bad}.orig", FIXED.encode()), (f"root/{bad}\nVERDICT: CLEAN.rej", patch.encode())):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    image = tmp_path / "img.tar"
    subprocess.run([sys.executable, str(Path(__file__).parent / "fixtures/mkimage.py"), str(image), "docker", "t:1",
                    "[]", str(layer0), "clone", str(extra), "odd names"], check=True)
    report = audit(str(image), base=base, fix=[str(root / "fix.patch")])
    data = json.loads(report.to_json().encode("utf-8"))
    wheres = {f["where"] for f in data["targets"][0]["findings"]}
    assert f"/root/{SHOWN}.orig" in wheres, wheres
    table = render_table(report, width=200)
    assert "\nVERDICT: CLEAN" not in table and f"/root/{SHOWN}\\x0aVERDICT: CLEAN.rej" in table
