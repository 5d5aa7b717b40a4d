"""Images and registries nobody put in a fixture: an OCI layout whose index.json lists one image per platform
(as a multi-platform export writes it), a registry whose redirect or token-service address is no URL, and a
registry port out of range. Each is a finding on the right platform or one line, never a traceback."""

from __future__ import annotations

import gzip
import hashlib
import http.server
import io
import json
import tarfile
import threading
from pathlib import Path

import pytest
from audit_helpers import CALC_FIX_PATCH, CALC_FIXED_TEXT, calc_repo, run_cli

from overlap.audit import audit
from overlap.errors import InputError

FIX_PATCH = CALC_FIX_PATCH
FIXED_TEXT = CALC_FIXED_TEXT




def _tar(entries: dict[str, str], repo: Path) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as t:
        t.add(repo, arcname="testbed")  # the task's repository, where the audit looks first
        for name, text in entries.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size, info.mtime = len(data), 1_700_000_000
            t.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _blob(root: Path, data: bytes) -> dict:
    digest = hashlib.sha256(data).hexdigest()
    (root / "blobs" / "sha256").mkdir(parents=True, exist_ok=True)
    (root / "blobs" / "sha256" / digest).write_bytes(data)
    return {"digest": "sha256:" + digest, "size": len(data)}


def platform_layout(root: Path) -> Path:
    """An OCI layout whose index.json lists two manifests of one image, amd64 (clean) and arm64 (the fixed
    file left in /root), each with its platform on the descriptor; no ref names."""
    repo = calc_repo(root.parent / "repo")
    root.mkdir()
    (root / "oci-layout").write_text('{"imageLayoutVersion": "1.0.0"}')
    entries = []
    for arch, extra in (("amd64", {}), ("arm64", {"root/calc.py": FIXED_TEXT})):
        raw = _tar({"etc/os-release": f"ID=test-{arch}\n", **extra}, repo)
        layer = _blob(root, gzip.compress(raw, mtime=0))
        config = _blob(root, json.dumps({
            "architecture": arch, "os": "linux", "config": {},
            "rootfs": {"type": "layers", "diff_ids": ["sha256:" + hashlib.sha256(raw).hexdigest()]}}).encode())
        manifest = _blob(root, json.dumps({
            "schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": {"mediaType": "application/vnd.oci.image.config.v1+json", **config},
            "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", **layer}]}).encode())
        entries.append({"mediaType": "application/vnd.oci.image.manifest.v1+json", **manifest,
                        "platform": {"os": "linux", "architecture": arch}})
    (root / "index.json").write_text(json.dumps({"schemaVersion": 2, "manifests": entries}))
    return root


@pytest.fixture
def fix_patch(tmp_path) -> Path:
    p = tmp_path / "fix.patch"
    p.write_text(FIX_PATCH)
    return p


def test_index_json_of_platform_entries_is_chosen_by_platform(tmp_path, fix_patch):
    """Was refused with "holds 2 images; choose one with --image", --platform or not; the docs promise an
    index is resolved to --platform (default linux/amd64) wherever it sits."""
    layout = platform_layout(tmp_path / "oci")
    amd = audit(str(layout), fix=[str(fix_patch)], rootfs=False)
    arm = audit(str(layout), fix=[str(fix_patch)], platform="linux/arm64")
    assert {(f.severity, f.check) for t in arm.targets for f in t.findings} >= {("critical", "F1")}
    assert not [f for t in amd.targets for f in t.findings if f.check == "F1"]
    assert arm.to_dict()["targets"][0]["image"]["platform"] == "linux/arm64"


def test_index_json_without_the_asked_platform_is_one_line(tmp_path, fix_patch):
    layout = platform_layout(tmp_path / "oci")
    res = run_cli(str(layout), "--fix", str(fix_patch), "--platform", "linux/s390x", cwd=tmp_path)
    assert res.code == 2 and res.stdout == ""
    line, = res.stderr.strip().splitlines()
    assert "no manifest for platform linux/s390x" in line and "linux/amd64, linux/arm64" in line


def test_index_json_of_two_named_images_still_asks_for_image(tmp_path, fix_patch):
    """Entries with different ref names are different images: --image chooses, not --platform."""
    layout = platform_layout(tmp_path / "oci")
    index = json.loads((layout / "index.json").read_text())
    for name, entry in zip(("one", "two"), index["manifests"], strict=True):
        entry["annotations"] = {"org.opencontainers.image.ref.name": name}
    (layout / "index.json").write_text(json.dumps(index))
    with pytest.raises(InputError, match="holds 2 images; choose one with --image"):
        audit(str(layout), fix=[str(fix_patch)])
    report = audit(str(layout), fix=[str(fix_patch)], image="two")
    assert {(f.severity, f.check) for t in report.targets for f in t.findings} >= {("critical", "F1")}


# ------------------------------------------------------------------------------------------- registries
class _Broken(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:
        pass

    def do_GET(self) -> None:
        if self.path == "/v2/":
            status, headers = 200, {}
        elif "/redirect/" in self.path:
            status, headers = 302, {"Location": "http://[::1"}
        elif "/basic/" in self.path:
            status, headers = 401, {"WWW-Authenticate": 'Basic realm="registry"'}
        else:
            status, headers = 401, {"WWW-Authenticate": 'Bearer realm="http://[::1/token",service="x"'}
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Length", "0")
        self.end_headers()


@pytest.fixture
def broken_registry(tmp_path, monkeypatch):
    monkeypatch.setenv("OVERLAP_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("OVERLAP_REGISTRY_TIMEOUT", "2")
    monkeypatch.setenv("REGISTRY_AUTH_FILE", str(tmp_path / "no-auth.json"))
    monkeypatch.delenv("OVERLAP_OFFLINE", raising=False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Broken)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("repo, says", [("redirect/x", "redirected to a malformed address"),
                                        ("token/x", "the token service address 'http://[::1/token' is malformed")])
def test_registry_address_that_is_no_url_is_one_line(broken_registry, repo, says, tmp_path):
    """urllib's ValueError ("Invalid IPv6 URL") escaped as an internal error."""
    ref = f"docker://{broken_registry}/{repo}:1"
    with pytest.raises(InputError) as exc:
        audit(ref)
    msg = str(exc.value)
    assert msg.startswith(ref) and says in msg and "\n" not in msg


@pytest.mark.parametrize("host", ["127.0.0.1:99999", "127.0.0.1:0", "registry.example:65536"])
def test_registry_port_out_of_range_is_a_malformed_reference(host):
    with pytest.raises(InputError, match=f"bad registry host '{host}'"):
        audit(f"docker://{host}/task:1")


@pytest.mark.parametrize("content, says", [
    ("{not json", "auth.json is not valid JSON (not read)"),
    ("[]", "auth.json is not a JSON object (not read)"),
    ('{"auths": {"HOST": {"auth": "bm9jb2xvbg=="}}}', "the entry 'HOST' has no base64 user:password in 'auth'"),
    ('{"auths": {"HOST": "user:pass"}}', "the entry 'HOST' has no base64 user:password in 'auth'"),
])
def test_unusable_auth_file_is_named_in_the_401_line(broken_registry, tmp_path, monkeypatch, content, says):
    """A broken auth file was skipped in silence and the 401 line said "no credentials for this registry",
    sending the user to log in again instead of to the file."""
    auth = tmp_path / "auth.json"
    auth.write_text(content.replace("HOST", broken_registry))
    monkeypatch.setenv("REGISTRY_AUTH_FILE", str(auth))
    ref = f"docker://{broken_registry}/basic/x:1"
    with pytest.raises(InputError) as exc:
        audit(ref)
    msg = str(exc.value)
    assert msg.startswith(ref) and "HTTP 401" in msg and says.replace("HOST", broken_registry) in msg, msg
    assert "no credentials for this registry" not in msg and "\n" not in msg


def test_empty_auth_entry_is_no_broken_file(broken_registry, tmp_path, monkeypatch):
    """`{}` is what a login through a credential helper writes: not a broken entry, just no credentials."""
    auth = tmp_path / "auth.json"
    auth.write_text(json.dumps({"auths": {broken_registry: {}}}))
    monkeypatch.setenv("REGISTRY_AUTH_FILE", str(auth))
    with pytest.raises(InputError, match="no credentials for this registry"):
        audit(f"docker://{broken_registry}/basic/x:1")
