"""`overlap audit --instance task.json` with no PATH: the network route alone, through the command line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from scenarios import CREATED, fix_patch

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "data" / "network_demo"


def run(*args, env=None):
    return subprocess.run([sys.executable, "-m", "overlap", "audit", *args], capture_output=True, text=True,
                          env=env, timeout=120)


def _env(cache, **extra):
    import os

    env = {k: v for k, v in os.environ.items() if k != "OVERLAP_OFFLINE"}
    return {**env, "OVERLAP_CACHE": str(cache), **extra}


def test_demo_json_names_the_first_release_and_is_the_same_offline(tmp_path):
    demo = json.loads((DEMO / "task.json").read_text())
    page = json.loads((DEMO / "simple" / "demopkg" / "index.html").read_text())
    # the demo's releases as built: 1.1.2 is the only archive holding the fixed file (its name says so)
    first = next(f for f in page["files"] if f["filename"] == "demopkg-1.1.2.tar.gz")
    args = ["--instance", str(DEMO / "task.json"), "--index-url", str(DEMO / "simple"), "--format", "json"]
    online = run(*args, env=_env(tmp_path))
    assert online.returncode == 0, online.stderr
    net = json.loads(online.stdout)["targets"][0]["network"]
    assert net["first_release"]["version"] == "1.1.2" and net["pin"] == "demopkg<1.1.2"
    assert net["first_release"]["upload_time"] == first["upload-time"]
    assert demo["created_at"] < first["upload-time"]
    assert "3 archives read" in online.stderr
    offline = run(*args, env=_env(tmp_path, OVERLAP_OFFLINE="1"))
    assert offline.returncode == 0 and offline.stdout == online.stdout
    assert "3 from the cache" in offline.stderr  # the archives: the local pages are read again


def test_network_none_records_the_route_as_closed(tmp_path):
    out = run("--instance", str(DEMO / "task.json"), "--network", "none", "--format", "json", env=_env(tmp_path))
    assert out.returncode == 0
    assert json.loads(out.stdout)["targets"][0]["network"]["route"] == "closed"


def test_unknown_package_is_exit_2_with_one_line(tmp_path):
    task = tmp_path / "task.json"
    task.write_text(json.dumps({"repo": "nobody/unknown", "patch": fix_patch("src/x/calc.py"), "version": "1.0",
                                "created_at": CREATED.isoformat()}))
    out = run("--instance", str(task), env=_env(tmp_path))
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "no package is known for nobody/unknown" in out.stdout


def test_package_without_an_ecosystem_is_an_input_error(tmp_path):
    task = tmp_path / "task.json"
    task.write_text(json.dumps({"repo": "a/b", "patch": fix_patch("README"), "version": "1.0"}))
    out = run("--instance", str(task), "--package", "thing", env=_env(tmp_path))
    assert out.returncode == 2 and "say which index, e.g. pypi:thing" in out.stderr
    assert "Traceback" not in out.stderr


def _with_stderr_on_a_terminal(args, env) -> tuple[int, str]:
    """The command with its stderr on a pseudo-terminal (stdout a pipe); (exit code, what the terminal got)."""
    import os
    import pty

    leader, follower = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "overlap", "audit", *args], stdout=subprocess.PIPE,
                            stderr=follower, env=env)
    os.close(follower)
    seen = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal closed: the child has ended
            break
        if not chunk:
            break
        seen += chunk
    proc.communicate(timeout=120)
    os.close(leader)
    return proc.returncode, seen.decode("utf-8", "replace")


def test_progress_names_each_release_on_a_terminal_and_is_off_otherwise(tmp_path):
    args = ["--instance", str(DEMO / "task.json"), "--index-url", str(DEMO / "simple")]
    code, terminal = _with_stderr_on_a_terminal(args, {**_env(tmp_path), "COLUMNS": "200"})
    assert code == 0
    # the spinner refreshes a few times a second: the last release read is what it surely shows
    assert "network route: example__demopkg-101: reading demopkg-1.1.2.tar.gz (3/3)" in terminal
    piped = run(*args, env=_env(tmp_path / "again"))
    assert piped.returncode == 0 and "reading demopkg" not in piped.stderr and "\x1b" not in piped.stderr
