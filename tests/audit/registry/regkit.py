"""A real registry for the tests: Debian's ``docker-registry`` (the CNCF distribution server) on a loopback
port, images built with ``umoci`` and pushed with ``skopeo``, and a fault-injecting proxy in front of it.

Nothing here talks to an address outside 127.0.0.0/8.
"""

from __future__ import annotations

import hashlib
import http.client
import http.server
import json
import os
import re
import shutil
import socket
import subprocess
import tarfile
import threading
import time
from pathlib import Path

import pytest

TOOLS = ("docker-registry", "skopeo", "umoci", "git")
DATE = "2024-01-02T03:04:05+00:00"
OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
OCI_INDEX = "application/vnd.oci.image.index.v1+json"


def need_tools() -> None:
    """Missing tools: a failure in CI (``CI=true``: .ci/run installs them), a skip with a message locally."""
    missing = [t for t in TOOLS if shutil.which(t) is None]
    if not missing:
        return
    msg = (f"registry tests need {', '.join(missing)} (Debian: apt-get install docker-registry skopeo umoci)")
    if os.environ.get("CI", "").strip().lower() in ("1", "true", "yes"):
        pytest.fail(msg + "; CI must install them (.ci/run)", pytrace=False)
    pytest.skip(msg)


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


class Registry:
    """``docker-registry serve`` with filesystem storage in ``root``; stopped by ``stop``."""

    def __init__(self, root: Path):
        self.port = free_port()
        self.host = f"127.0.0.1:{self.port}"
        root.mkdir(parents=True, exist_ok=True)
        cfg = root / "config.yml"
        cfg.write_text(f"version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: {root}/store\n"
                       f"  delete:\n    enabled: true\nhttp:\n  addr: {self.host}\n")
        self.log = open(root / "registry.log", "wb")  # noqa: SIM115 - kept open for the server's life
        self.proc = subprocess.Popen(["docker-registry", "serve", str(cfg)], stdout=self.log, stderr=self.log,
                                     stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 15
        while True:
            try:  # http.client, not urllib: no proxy from the environment may stand in between
                if self._req("GET", "/v2/", timeout=1)[0].status == 200:
                    break
            except OSError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"docker-registry did not start: {(root / 'registry.log').read_text()[-500:]}")
            time.sleep(0.1)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()

    # raw pushes, for manifests no builder would write
    def _req(self, method: str, path: str, body: bytes = b"", headers: dict | None = None, timeout: float = 30):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        conn.request(method, path, body=body, headers=headers or {})
        r = conn.getresponse()
        data = r.read()
        conn.close()
        return r, data

    def push_blob(self, repo: str, data: bytes) -> dict:
        digest = "sha256:" + hashlib.sha256(data).hexdigest()
        r, _ = self._req("POST", f"/v2/{repo}/blobs/uploads/")
        assert r.status == 202, r.status
        loc = r.getheader("Location")
        path = re.sub(r"^https?://[^/]+", "", loc)
        r, body = self._req("PUT", f"{path}{'&' if '?' in path else '?'}digest={digest}", data,
                            {"Content-Type": "application/octet-stream"})
        assert r.status == 201, (r.status, body)
        return {"digest": digest, "size": len(data)}

    def mount(self, repo: str, digest: str, source: str) -> None:
        """Make a blob of ``source`` a blob of ``repo`` too (cross-repository mount)."""
        r, _ = self._req("POST", f"/v2/{repo}/blobs/uploads/?mount={digest}&from={source}")
        assert r.status == 201, r.status

    def push_manifest(self, repo: str, ref: str, doc: dict | bytes, media: str = OCI_MANIFEST) -> str:
        body = doc if isinstance(doc, bytes) else json.dumps(doc).encode()
        r, data = self._req("PUT", f"/v2/{repo}/manifests/{ref}", body, {"Content-Type": media})
        assert r.status == 201, (r.status, data)
        return "sha256:" + hashlib.sha256(body).hexdigest()

    def manifest(self, repo: str, ref: str) -> tuple[str, dict]:
        digest, raw = self.raw_manifest(repo, ref)
        return digest, json.loads(raw)

    def raw_manifest(self, repo: str, ref: str) -> tuple[str, bytes]:
        r, data = self._req("GET", f"/v2/{repo}/manifests/{ref}", headers={"Accept": OCI_MANIFEST})
        assert r.status == 200, r.status
        return "sha256:" + hashlib.sha256(data).hexdigest(), data


# ----------------------------------------------------------------------------------------- images
def git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_DATE": DATE, "GIT_COMMITTER_DATE": DATE, "GIT_AUTHOR_NAME": "t",
           "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
           "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                          env=env).stdout.strip()


BUGGY = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    # the sum, as the tests ask for it\n    return a + b\n"


def make_repo(repo: Path, *, leak: bool) -> str | None:
    """A small repository: one base commit; with ``leak`` the fix was committed, then reset away and its
    reflog expired, so it survives only as an unreachable commit. Returns the fix patch (leak only)."""
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    (repo / "src").mkdir()
    (repo / "src" / "calc.py").write_text(BUGGY)
    (repo / "README.md").write_text("calc\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    if not leak:
        return None
    (repo / "src" / "calc.py").write_text(FIXED)
    git(repo, "commit", "-q", "-am", "fix add")
    patch = git(repo, "format-patch", "-1", "--stdout", "HEAD") + "\n"
    git(repo, "reset", "-q", "--hard", "HEAD~1")
    git(repo, "reflog", "expire", "--expire=now", "--all")
    return patch


def umoci(*args: str) -> None:
    rootless = ["--rootless"] if os.geteuid() != 0 and args[0] in ("unpack",) else []
    subprocess.run(["umoci", args[0], *rootless, *args[1:]], check=True, capture_output=True)


class Builder:
    """One OCI layout (``umoci``) holding a base image and images built on it."""

    def __init__(self, root: Path):
        self.root = root
        self.layout = root / "oci"
        umoci("init", "--layout", str(self.layout))
        umoci("new", "--image", f"{self.layout}:empty")

    def derive(self, src: str, dst: str, add, workdir: str | None = "/testbed") -> None:
        """Image ``dst`` = ``src`` plus one layer written by ``add(rootfs)``."""
        bundle = self.root / f"bundle-{dst}"
        umoci("unpack", "--image", f"{self.layout}:{src}", str(bundle))
        add(bundle / "rootfs")
        umoci("repack", "--image", f"{self.layout}:{dst}", str(bundle))
        shutil.rmtree(bundle)
        if workdir:
            umoci("config", "--image", f"{self.layout}:{dst}", "--config.workingdir", workdir)

    def push(self, tag: str, registry: str, name: str) -> None:
        policy = self.root / "policy.json"
        policy.write_text('{"default": [{"type": "insecureAcceptAnything"}]}')
        subprocess.run(["skopeo", "--policy", str(policy), "copy", "-q", "--dest-tls-verify=false",
                        f"oci:{self.layout}:{tag}", f"docker://{registry}/{name}"], check=True, capture_output=True)


def tar_layer(entries: list[tuple[str, bytes]]) -> bytes:
    """An uncompressed layer tar with the given names verbatim (hostile names included)."""
    import io

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as t:
        for name, data in entries:
            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.mode = len(data), 1700000000, 0o644
            t.addfile(info, io.BytesIO(data))
    return buf.getvalue()


# ----------------------------------------------------------------------------------------- proxy
class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:  # quiet
        pass

    def do_GET(self) -> None:  # noqa: N802
        srv = self.server
        srv.log.append((self.command, self.path, dict(self.headers)))
        for rule in list(srv.rules):
            if rule(self):
                return
        self.forward()

    do_HEAD = do_GET

    def forward(self, cut: int | None = None, body_filter=None) -> None:
        up = http.client.HTTPConnection("127.0.0.1", self.server.upstream, timeout=30)
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "authorization")}
        up.request(self.command, self.path, headers=headers)
        r = up.getresponse()
        body = r.read()
        up.close()
        if body_filter is not None:
            body = body_filter(body)
        self.send_response(r.status)
        for k, v in r.getheaders():
            if k.lower() not in ("content-length", "connection", "transfer-encoding", "date"):
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        if cut is not None:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body if cut is None else body[:cut])
        if cut is not None:
            self.close_connection = True

    def reply(self, status: int, body: bytes = b"", headers: dict | None = None, length: bool = True) -> None:
        self.send_response(status)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        if length:
            self.send_header("Content-Length", str(len(body)))
        else:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        if self.command != "HEAD" and body:
            self.wfile.write(body)


class Proxy(http.server.ThreadingHTTPServer):
    """Forwards to the registry unless a rule (``rule(handler) -> handled``) answers; logs every request."""

    daemon_threads = True

    def __init__(self, upstream: int, host: str = "127.0.0.1"):
        super().__init__((host, 0), _Handler)
        self.upstream = upstream
        self.rules: list = []
        self.log: list[tuple[str, str, dict]] = []
        self.addr = f"{host}:{self.server_address[1]}"
        threading.Thread(target=self.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.shutdown()
        self.server_close()

    def paths(self, needle: str = "") -> list[str]:
        return [p for m, p, _ in self.log if needle in p]
