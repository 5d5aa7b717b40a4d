"""Every OS error is a user error: permission, disk full, read-only, busy, not a folder, a
full or closed stdout → exit 2 and one line naming the path; a broken pipe ends quietly; SIGTERM cleans up as
SIGINT does. Tests run as root, so a read-only or full disk is simulated (a failing os call) or found where
the kernel refuses writes (/sys, /proc)."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from corpus_contract import FAST, check_contract, cyber_data, data_args, invoke, snapshot

from overlap.errors import InputError
from overlap.outputs import atomic

CYBER = ("mimo-cyber", "cybergym", "arvo")


@pytest.fixture
def work(tmp_path):
    return tmp_path, cyber_data(tmp_path / "data")


def _compare(data, out) -> list:
    return ["compare", "mimo-cyber", "cybergym", *data_args(data, *CYBER), *FAST, "--out", out]


def _failing(real, code: int, when):
    def call(*args, **kwargs):
        if when(*args):
            raise OSError(code, os.strerror(code), str(args[-1]) if args else None)
        return real(*args, **kwargs)

    return call


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EACCES, errno.EROFS, errno.EBUSY, errno.EDQUOT])
def test_the_temp_folder_cannot_be_made(work, monkeypatch, code):
    root, data = work
    monkeypatch.setattr(atomic.tempfile, "mkdtemp", _failing(atomic.tempfile.mkdtemp, code,
                                                             lambda *a, **k: True))
    run = check_contract(invoke("mkdtemp", _compare(data, "out"), root=root), expect=2)
    assert "--out out" in run.first_line and os.strerror(code) in run.first_line


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EBUSY])
def test_replacing_a_previous_output_fails_and_it_stays_whole(work, monkeypatch, code):
    root, data = work
    check_contract(invoke("first", _compare(data, "out"), root=root), expect=0)
    before = snapshot(root / "out")
    real = os.replace

    def replace(src, dst):  # the new folder cannot take the old one's place; putting the old one back works
        if Path(src).name.endswith(".tmp") and Path(dst).name == "out":
            raise OSError(code, os.strerror(code), str(dst))
        return real(src, dst)

    monkeypatch.setattr(atomic.os, "replace", replace)
    run = check_contract(invoke("replace", _compare(data, "out"), root=root), expect=2)
    assert "out: cannot replace the output folder" in run.first_line and os.strerror(code) in run.first_line
    assert snapshot(root / "out") == before


def test_disk_full_while_writing_the_output(work, monkeypatch):
    root, data = work
    real = Path.write_text

    def full(self, *args, **kwargs):
        if self.parent.name.endswith(".tmp"):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", full)
    run = check_contract(invoke("full", _compare(data, "out"), root=root), expect=2)
    assert "out: cannot write the output folder: No space left on device" in run.first_line
    assert not (root / "out").exists()


def test_a_folder_the_kernel_refuses_is_refused_before_any_work(work):
    root, data = work
    writable = [p for p in (Path("/sys/overlap-test"), Path("/proc/overlap-test")) if p.parent.is_dir()]
    if not writable:
        pytest.skip("no /sys or /proc here")
    for out in writable:
        run = check_contract(invoke("kernel", _compare(data, out), root=root), expect=2)
        assert f"--out {out}: cannot write in {out.parent}" in run.first_line


def test_write_text_atomic_names_the_path(tmp_path):
    (tmp_path / "afile").write_text("x")
    with pytest.raises(InputError, match="afile"):
        atomic.write_text_atomic(tmp_path / "afile" / "sub" / "README.md", "text")
    with pytest.raises(InputError, match="afile/sub"):
        with atomic.atomic_folder(tmp_path / "afile" / "sub"):
            pass  # pragma: no cover
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]


@pytest.mark.parametrize("exc", [PermissionError(errno.EACCES, "Permission denied", "/data/train.parquet"),
                                 OSError(errno.EIO, "Input/output error", "/data/train.parquet")])
def test_an_os_error_inside_a_command_is_one_line_naming_the_path(work, monkeypatch, exc):
    import overlap.api

    root, data = work
    monkeypatch.setattr(overlap.api, "compare", lambda *a, **k: (_ for _ in ()).throw(exc))
    run = check_contract(invoke("inside", _compare(data, "out"), root=root), expect=2)
    assert run.first_line.startswith("overlap: error: /data/train.parquet: ")


def test_a_bug_is_one_line_and_exit_2_never_exit_1(work, monkeypatch):
    import overlap.api

    root, data = work
    monkeypatch.setattr(overlap.api, "compare", lambda *a, **k: {}["missing"])
    run = check_contract(invoke("bug", _compare(data, "out"), root=root), expect=2, bug_injected=True)
    assert "internal error (KeyError" in run.first_line


# --- real streams and signals: a subprocess ----------------------------------------------------------


def _overlap(*args) -> list[str]:
    return [sys.executable, "-m", "overlap.cli", *map(str, args)]


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full")
@pytest.mark.parametrize("args", [["datasets", "--format", "json"], ["ids", "cve-2023-1234"]])
def test_stdout_to_dev_full_is_one_line(tmp_path, args):
    with open("/dev/full", "w") as full:
        proc = subprocess.run(_overlap(*args), stdout=full, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
                              timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.splitlines() == ["overlap: error: cannot write to stdout: No space left on device"]


def test_a_closed_pipe_ends_quietly(tmp_path):
    read, write = os.pipe()
    os.close(read)  # the reader is gone before anything is written, as after `| head -1`
    try:
        proc = subprocess.run(_overlap("datasets"), stdout=write, stderr=subprocess.PIPE, text=True,
                              cwd=tmp_path, timeout=60)
    finally:
        os.close(write)
    assert proc.stderr == "" and proc.returncode == 128 + signal.SIGPIPE


SLOW_RUN = """
import sys, time
import overlap.outputs.report.result_folders as report
real = report.write_report_extras
def slow(*args, **kwargs):
    print("writing", file=sys.stderr, flush=True)
    time.sleep(60)
    return real(*args, **kwargs)
report.write_report_extras = slow
from overlap.cli import main
sys.argv = ["overlap", *sys.argv[1:]]
main()
"""


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 128 + signal.SIGTERM), (signal.SIGINT, 130)])
def test_a_signal_mid_write_leaves_no_temp_folder(work, sig, code):
    root, data = work
    before = snapshot(root)
    proc = subprocess.Popen([sys.executable, "-c", SLOW_RUN, *_compare(data, "out")], cwd=root,
                            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    try:
        assert proc.stderr.readline() == "writing\n"
        assert [p.name for p in root.iterdir() if p.name.endswith(".tmp")]  # the temp folder exists now
        proc.send_signal(sig)
        rest = proc.communicate(timeout=30)[1]
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == code, rest
    assert "Traceback" not in rest and len(rest.strip().splitlines()) <= 1
    assert snapshot(root) == before  # no temp folder, no output, inputs unchanged
