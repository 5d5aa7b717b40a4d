"""The image-set walkthrough of docs/audit.md, run as written: its shell blocks start a registry, build and push
two builds with umoci and skopeo, declare the benchmark and run the study; the printed table must be the one
the page shows. Only the port changes (a free one, so a shared machine's registry on 5055 is never hit)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

from regkit import free_port, need_tools

import overlap

ROOT = Path(overlap.__file__).resolve().parents[1]
DOC = ROOT / "docs" / "audit.md"


def walkthrough() -> tuple[str, str]:
    """(the shell blocks joined, the text block of the printed table) of the walkthrough section."""
    text = DOC.read_text(encoding="utf-8")
    start = text.index("### Walkthrough: a local registry")
    section = text[start:text.index("\n## ", start)]
    shell = "\n".join(re.findall(r"```sh\n(.*?)```", section, re.S))
    (table,) = re.findall(r"```text\n(.*?)```", section, re.S)
    return shell, table


def test_the_walkthrough_runs_and_prints_its_table(tmp_path):
    need_tools()
    shell, table = walkthrough()
    assert "--sample 2 --seed 0" in shell and "skopeo copy" in shell and "docker-registry serve" in shell
    port = free_port()
    # the install line is the reader's; the tools are already here (need_tools)
    script = "\n".join(line for line in shell.splitlines() if not line.startswith("apt-get install"))
    script = script.replace("127.0.0.1:5055", f"127.0.0.1:{port}").replace("127.0.0.1/5055", f"127.0.0.1/{port}")
    if os.geteuid() != 0:  # as the page says: another user unpacks rootless
        script = script.replace("umoci unpack ", "umoci unpack --rootless ")
    # the page's port is gone (a free port may itself contain the digits 5055, e.g. 45055)
    assert not re.search(r"127\.0\.0\.1[:/]5055\b", script)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "overlap"  # this checkout's overlap, whatever else is installed
    shim.write_text(f"#!/bin/sh\nexec {sys.executable} -c 'import sys; from overlap.cli import main; "
                    "sys.argv[0] = \"overlap\"; main()' \"$@\"\n")
    shim.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in ("OVERLAP_OFFLINE", "HF_HUB_OFFLINE")}
    env.update(PATH=f"{bin_dir}:{env.get('PATH', '/usr/bin:/bin')}", OVERLAP_CACHE=str(tmp_path / "cache"),
               PYTHONPATH=os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p),
               REGISTRY_AUTH_FILE=str(tmp_path / "no-auth.json"), COLUMNS="80")
    proc = subprocess.Popen(["bash", "-e", "-c", script], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=300)
    finally:
        try:  # the registry the script started, should a step have failed before its `kill %1`
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err[-3000:]
    # an image's digest covers its creation time (umoci writes it): the page shows one build's, the run has its own
    digest = re.compile(r"sha256:[0-9a-f]{12}\b")
    assert len(digest.findall(out)) == 4, out
    assert digest.sub("sha256:…", out) == digest.sub("sha256:…", table), err[-3000:]
    run = tmp_path / "walk" / "run"
    assert {p.name for p in run.iterdir()} == {"targets", "audit.json", *(f"{t}.{x}" for t in ("sets", "routes")
                                                   for x in ("csv", "md", "html")), "routes.json"}
    assert len(list((run / "targets").iterdir())) == 4
