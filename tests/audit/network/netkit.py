"""Package archives written by hand (sdists, wheels, npm tarballs, Go module zips, with correct metadata) and
real index servers on loopback: pypiserver, verdaccio, and static file trees (PEP 691 JSON, npm documents, the
Go module proxy layout) served by http.server in a thread."""

from __future__ import annotations

import base64
import contextlib
import functools
import gzip
import hashlib
import http.server
import io
import json
import os
import shutil
import socket
import subprocess
import sys
import tarfile
import threading
import time
import urllib.request
import zipfile
from pathlib import Path

import pytest


def need(tool: str, why: str) -> None:
    """A missing server: a failure in CI (``CI=true``: .ci/run installs it), a skip with a message locally."""
    msg = f"{tool} is not installed ({why})"
    if os.environ.get("CI", "").strip().lower() in ("1", "true", "yes"):
        pytest.fail(msg + "; CI must install it (.ci/run)", pytrace=False)
    pytest.skip(msg)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _tar_gz(members: dict[str, bytes], mtime: int = 1_600_000_000) -> bytes:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.mode = len(data), mtime, 0o644
            tar.addfile(info, io.BytesIO(data))
    return gzip.compress(raw.getvalue(), mtime=0)


def sdist(name: str, version: str, files: dict[str, str]) -> tuple[str, bytes]:
    """(file name, bytes) of a source distribution: ``name-version/`` with PKG-INFO, pyproject.toml, files."""
    norm = name.replace("-", "_")
    top = f"{norm}-{version}"
    meta = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode()
    members = {f"{top}/PKG-INFO": meta,
               f"{top}/pyproject.toml": f'[project]\nname = "{name}"\nversion = "{version}"\n'.encode()}
    members |= {f"{top}/{p}": t.encode() for p, t in files.items()}
    return f"{top}.tar.gz", _tar_gz(members)


def wheel(name: str, version: str, files: dict[str, str]) -> tuple[str, bytes]:
    """(file name, bytes) of a py3-none-any wheel; ``files`` paths under ``src/`` are installed without it."""
    norm = name.replace("-", "_")
    info = f"{norm}-{version}.dist-info"
    members = {p.removeprefix("src/"): t.encode() for p, t in files.items()}
    members[f"{info}/METADATA"] = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode()
    members[f"{info}/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    record = "".join(f"{p},sha256={base64.urlsafe_b64encode(hashlib.sha256(d).digest()).rstrip(b'=').decode()},"
                     f"{len(d)}\n" for p, d in members.items()) + f"{info}/RECORD,,\n"
    members[f"{info}/RECORD"] = record.encode()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for p, d in members.items():
            zf.writestr(zipfile.ZipInfo(p, (2020, 1, 1, 0, 0, 0)), d)
    return f"{norm}-{version}-py3-none-any.whl", buf.getvalue()


def npm_tarball(name: str, version: str, files: dict[str, str]) -> bytes:
    pkg = json.dumps({"name": name, "version": version, "main": "index.js"}).encode()
    return _tar_gz({"package/package.json": pkg, **{f"package/{p}": t.encode() for p, t in files.items()}})


def go_zip(module: str, version: str, files: dict[str, str]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(f"{module}@{version}/go.mod", f"module {module}\n\ngo 1.21\n")
        for p, t in files.items():
            zf.writestr(f"{module}@{version}/{p}", t)
    return buf.getvalue()


# --------------------------------------------------------------------------------------------- servers
class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@contextlib.contextmanager
def static_server(folder: Path, handler=None):
    """``folder`` served on 127.0.0.1 (a free port) by http.server in a thread; yields the base URL."""
    cls = handler or functools.partial(_Quiet, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), cls)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _wait(url: str, proc: subprocess.Popen, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"server did not answer at {url}")


@contextlib.contextmanager
def pypiserver(packages: Path):
    """pypiserver on loopback serving ``packages``; yields the simple index URL."""
    import importlib.util

    if importlib.util.find_spec("pypiserver") is None:
        need("pypiserver", "pip install pypiserver (the test extra)")
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "pypiserver", "run", "-p", str(port), "-i", "127.0.0.1",
                             "--disable-fallback", "-a", ".", "-P", ".", "--server", "wsgiref", str(packages)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        _wait(f"http://127.0.0.1:{port}/simple/", proc)
        yield f"http://127.0.0.1:{port}/simple/"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@contextlib.contextmanager
def verdaccio(storage: Path):
    """verdaccio on loopback (anonymous publish, no uplink); yields the registry URL."""
    exe = shutil.which("verdaccio")
    if exe is None:
        need("verdaccio", "npm install -g verdaccio@6.8.0")
    port = free_port()
    storage.mkdir(parents=True, exist_ok=True)
    conf = storage / "config.yaml"
    conf.write_text(f"storage: {storage / 'store'}\nauth:\n  htpasswd:\n    file: {storage / 'htpasswd'}\n"
                    "    max_users: -1\nuplinks: {}\npackages:\n  '**':\n    access: $all\n    publish: $all\n"
                    "    unpublish: $all\nlog: {type: stdout, format: pretty, level: fatal}\n", encoding="utf-8")
    proc = subprocess.Popen([exe, "--config", str(conf), "--listen", f"127.0.0.1:{port}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait(f"http://127.0.0.1:{port}/-/ping", proc, 90.0)
        yield f"http://127.0.0.1:{port}/"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def npm_publish(registry: str, name: str, version: str, tarball: bytes) -> None:
    """One version published the way the npm client does (PUT of the document with the tarball attached)."""
    integrity = "sha512-" + base64.b64encode(hashlib.sha512(tarball).digest()).decode()
    fname = f"{name}-{version}.tgz"
    doc = {"_id": name, "name": name, "dist-tags": {"latest": version},
           "versions": {version: {"name": name, "version": version, "_id": f"{name}@{version}",
                                  "dist": {"integrity": integrity, "shasum": hashlib.sha1(tarball).hexdigest(),
                                           "tarball": f"{registry}{name}/-/{fname}"}}},
           "_attachments": {fname: {"content_type": "application/octet-stream",
                                    "data": base64.b64encode(tarball).decode(), "length": len(tarball)}}}
    req = urllib.request.Request(f"{registry}{name}", data=json.dumps(doc).encode(), method="PUT",
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        assert r.status in (200, 201), r.status
