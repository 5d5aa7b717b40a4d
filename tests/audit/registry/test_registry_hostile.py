"""Hostile and broken registries, through a fault proxy in front of the real one: every fault is one
``InputError`` line naming the reference (exit 2 from the CLI), or a counted skip; never a hang, never a
file outside the cache, and a blob that failed is never cached."""

from __future__ import annotations

import base64
import hashlib
import http.server
import json
import re
import threading
import time

import pytest
from regkit import OCI_MANIFEST, make_repo, tar_layer

from overlap.audit import audit
from overlap.audit.image.blobcache import BlobCache
from overlap.audit.image.pull import pull
from overlap.errors import InputError


def rule(pattern: str, action, times: int | None = None):
    """A proxy rule: ``action(handler)`` answers requests whose path matches, ``times`` times (None: always)."""
    left = [times]

    def apply(h) -> bool:
        if not re.search(pattern, h.path) or left[0] == 0:
            return False
        if left[0] is not None:
            left[0] -= 1
        action(h)
        return True

    return apply


def stream(h, status: int, headers: dict, chunks) -> None:
    """An answer without Content-Length whose body is ``chunks`` (the client may hang up at any time)."""
    h.send_response(status)
    for k, v in headers.items():
        h.send_header(k, v)
    h.send_header("Connection", "close")
    h.end_headers()
    h.close_connection = True
    try:
        for c in chunks:
            h.wfile.write(c)
    except (BrokenPipeError, ConnectionResetError):
        pass


def one_line_error(ref: str, says: str, **kw) -> str:
    with pytest.raises(InputError) as exc:
        audit(ref, **kw)
    msg = str(exc.value)
    assert "\n" not in msg and msg.startswith(ref) and says in msg, msg
    return msg


def nothing_cached(cache, digest: str) -> None:
    assert not BlobCache(cache).path(digest).exists()
    assert not any((cache / "tmp").iterdir()) if (cache / "tmp").exists() else True
    assert {p.name for p in cache.iterdir()} <= {"blobs", "refs", "tmp", "locks"}
    # a download's lock stays behind as an empty file: a name, never content
    assert all(p.stat().st_size == 0 for p in (cache / "locks").iterdir()) if (cache / "locks").exists() else True


@pytest.mark.parametrize("status, says", [(401, "authentication required (HTTP 401)"), (403, "access denied"),
                                          (404, "not found (HTTP 404)"), (500, "answered HTTP 500")])
def test_status_errors(images, cache, proxy, status, says):
    proxy.rules.append(rule("/manifests/", lambda h: h.reply(status)))
    one_line_error(f"docker://{proxy.addr}/task/leak:1", says)


def test_429_retry_after_is_honoured(images, cache, proxy):
    proxy.rules.append(rule("/manifests/", lambda h: h.reply(429, headers={"Retry-After": "1"}), times=1))
    start = time.monotonic()
    pulled = pull(f"docker://{proxy.addr}/task/leak:1")
    assert time.monotonic() - start >= 1.0
    assert len(proxy.paths("/manifests/")) == 2 and pulled.downloaded_blobs


def test_retry_is_bounded(images, cache, proxy):
    proxy.rules.append(rule("/manifests/", lambda h: h.reply(429, headers={"Retry-After": "3600"})))
    start = time.monotonic()
    one_line_error(f"docker://{proxy.addr}/task/leak:1", "asked to retry after 3600 s")
    assert time.monotonic() - start < 5
    proxy.rules[:] = [rule("/blobs/", lambda h: h.reply(503, headers={"Retry-After": "0"}))]
    one_line_error(f"docker://{proxy.addr}/task/leak:1", "HTTP 503")
    assert len(proxy.paths("/blobs/")) == 4  # the first try and three retries


def test_truncated_blob_is_not_cached(images, cache, proxy):
    proxy.rules.append(rule(images.base_layer, lambda h: h.forward(cut=5000)))
    one_line_error(f"docker://{proxy.addr}/task/leak:1", "connection broken")
    nothing_cached(cache, images.base_layer)


def test_corrupt_blob_is_not_cached(images, cache, proxy):
    def flip(body: bytes) -> bytes:
        return bytes([body[0] ^ 1]) + body[1:]

    proxy.rules.append(rule(images.base_layer, lambda h: h.forward(body_filter=flip)))
    one_line_error(f"docker://{proxy.addr}/task/leak:1", "does not match its digest")
    nothing_cached(cache, images.base_layer)


def _serve_manifest(proxy, tag: str, doc: dict) -> None:
    body = json.dumps(doc).encode()
    proxy.rules.append(rule(f"/manifests/{tag}$", lambda h: h.reply(200, body, {"Content-Type": OCI_MANIFEST})))


@pytest.mark.parametrize("delta", [-100, +100])
def test_declared_size_lies(images, cache, proxy, delta):
    _, doc = images.registry.manifest("task/leak", "1")
    doc["layers"][0]["size"] += delta
    _serve_manifest(proxy, "liar", doc)
    one_line_error(f"docker://{proxy.addr}/task/leak:liar", "its manifest declares")
    nothing_cached(cache, doc["layers"][0]["digest"])


@pytest.mark.parametrize("body_bytes, says", [(None, "sent more than the 1,048,576 bytes"),
                                              (1000, "ended after 1,000 of the 1,048,576 bytes")])
def test_blob_without_length_is_capped_at_its_declared_size(images, cache, proxy, body_bytes, says):
    """A blob that never ends (or ends early), sent without Content-Length."""
    _, doc = images.registry.manifest("task/leak", "1")
    fake = "sha256:" + "ab" * 32
    doc["layers"][0] = {"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": fake, "size": 1 << 20}
    _serve_manifest(proxy, "endless", doc)
    sent = [0]

    def chunks():
        for _ in range(64 if body_bytes is None else 1):  # 64 MiB at most: the test must end even if the client doesn't
            sent[0] += 1
            yield b"x" * ((1 << 20) if body_bytes is None else body_bytes)

    proxy.rules.append(rule(fake, lambda h: stream(h, 200, {}, chunks())))
    one_line_error(f"docker://{proxy.addr}/task/leak:endless", says)
    assert sent[0] < 16
    nothing_cached(cache, fake)


def test_manifest_of_a_million_layers(images, cache, proxy):
    layer = json.dumps({"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": "sha256:" + "0" * 64,
                        "size": 1}).encode()

    def chunks():
        yield b'{"schemaVersion":2,"config":{"digest":"sha256:' + b"1" * 64 + b'","size":2},"layers":['
        for i in range(10 ** 6):
            yield (b"," if i else b"") + layer
        yield b"]}"

    proxy.rules.append(rule("/manifests/huge$", lambda h: stream(h, 200, {"Content-Type": OCI_MANIFEST}, chunks())))
    one_line_error(f"docker://{proxy.addr}/task/leak:huge", "larger than 4,194,304 bytes")
    many = {"schemaVersion": 2, "config": {"digest": "sha256:" + "1" * 64, "size": 2},
            "layers": [json.loads(layer)] * 5000}
    _serve_manifest(proxy, "many", many)
    one_line_error(f"docker://{proxy.addr}/task/leak:many", "lists 5,000 layers, more than 4,096")


class _Slow(http.server.ThreadingHTTPServer):
    """Another host (127.0.0.2) that takes far longer to answer than the read timeout."""

    daemon_threads = True

    def __init__(self):
        seen = self.seen = []
        done = self.done = threading.Event()

        class H(http.server.BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_GET(self):  # noqa: N802
                seen.append(dict(self.headers))
                done.wait(20)

        super().__init__(("127.0.0.2", 0), H)
        threading.Thread(target=self.serve_forever, daemon=True).start()

    def close(self):
        self.done.set()
        self.shutdown()
        self.server_close()


def _bearer(proxy, user: str = "u", password: str = "pw", anonymous: bool = False) -> list[dict]:
    """Make the proxy demand a bearer token from its own /token realm (Basic credentials checked there)."""
    token_requests: list[dict] = []
    good = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()

    def token(h):
        token_requests.append(dict(h.headers))
        if anonymous or h.headers.get("Authorization") == good:
            h.reply(200, json.dumps({"token": "tok-123"}).encode(), {"Content-Type": "application/json"})
        else:
            h.reply(401)

    def guard(h) -> bool:
        if h.path.startswith("/token"):
            token(h)
            return True
        if h.headers.get("Authorization") != "Bearer tok-123":
            challenge = f'Bearer realm="http://{proxy.addr}/token",service="test",scope="repository:task/leak:pull"'
            h.reply(401, b"{}", {"WWW-Authenticate": challenge})
            return True
        return False

    proxy.rules.insert(0, guard)
    return token_requests


def test_slow_redirect_to_another_host_times_out_without_credentials(images, cache, proxy, tmp_path, monkeypatch):
    auth = tmp_path / "auth.json"
    auth.write_text(json.dumps({"auths": {proxy.addr: {"auth": base64.b64encode(b"u:pw").decode()}}}))
    monkeypatch.setenv("REGISTRY_AUTH_FILE", str(auth))
    _bearer(proxy)
    slow = _Slow()
    try:
        where = f"http://127.0.0.2:{slow.server_address[1]}/blob"
        proxy.rules.append(rule(images.base_layer, lambda h: h.reply(307, headers={"Location": where})))
        start = time.monotonic()
        one_line_error(f"docker://{proxy.addr}/task/leak:1", "no answer within the read timeout")
        assert time.monotonic() - start < 15
        assert slow.seen and all("Authorization" not in h for h in slow.seen)
    finally:
        slow.close()
    nothing_cached(cache, images.base_layer)


def test_bearer_token_with_auth_file_credentials(images, cache, proxy, tmp_path, monkeypatch):
    auth = tmp_path / "config.json"
    auth.write_text(json.dumps({"auths": {f"https://{proxy.addr}/v1/": {"auth": base64.b64encode(b"u:pw").decode()}}}))
    monkeypatch.setenv("REGISTRY_AUTH_FILE", str(auth))
    tokens = _bearer(proxy)
    assert audit(f"docker://{proxy.addr}/task/leak:1", fix=[str(images.fix_patch)]).verdict == "leak"
    assert tokens and tokens[0]["Authorization"].startswith("Basic ")
    auth.write_text(json.dumps({"auths": {proxy.addr: {"auth": base64.b64encode(b"u:wrong").decode()}}}))
    one_line_error(f"docker://{proxy.addr}/task/clean:1", "credentials in your auth file were refused")


def test_anonymous_bearer_token(images, cache, proxy):
    tokens = _bearer(proxy, anonymous=True)
    pull(f"docker://{proxy.addr}/task/clean:1")
    assert tokens and "Authorization" not in tokens[0]


def test_layer_with_escaping_names_is_a_counted_skip(images, cache, tmp_path):
    reg = images.registry
    repo = tmp_path / "src"
    make_repo(repo, leak=False)
    entries = [(f"testbed/{p.relative_to(repo)}", p.read_bytes()) for p in sorted(repo.rglob("*")) if p.is_file()]
    entries += [("../../escaped-dotdot", b"x"), ("/../escaped-abs", b"y"), ("testbed/../../escaped-mid", b"z")]
    layer = tar_layer(entries)
    diff_id = "sha256:" + hashlib.sha256(layer).hexdigest()
    config = json.dumps({"architecture": "amd64", "os": "linux", "config": {"WorkingDir": "/testbed"},
                         "rootfs": {"type": "layers", "diff_ids": [diff_id]}}).encode()
    doc = {"schemaVersion": 2, "mediaType": OCI_MANIFEST,
           "config": {"mediaType": "application/vnd.oci.image.config.v1+json", **reg.push_blob("task/evil", config)},
           "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar", **reg.push_blob("task/evil", layer)}]}
    reg.push_manifest("task/evil", "1", doc)
    report = audit(f"docker://{images.host}/task/evil:1").to_dict()
    skipped = [f for f in report["targets"][0]["findings"] if f["key"] == "L11:archive:skipped"]
    assert skipped and len(skipped[0]["evidence"]["items"]) == 3
    for parent in (tmp_path, tmp_path.parent, cache.parent):
        assert not list(parent.glob("escaped-*"))


def test_slow_drip_is_cut(images, cache, proxy, monkeypatch):
    """A blob that trickles in (each read well inside the read timeout) is cut by the average-rate floor."""
    from overlap.audit.image import body

    monkeypatch.setattr(body, "RATE_GRACE", 1.0)
    _, doc = images.registry.manifest("task/leak", "1")
    fake = "sha256:" + "cd" * 32
    doc["layers"][0] = {"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": fake, "size": 1 << 20}
    _serve_manifest(proxy, "drip", doc)

    def drip():
        for _ in range(100):  # 30 s at most: the test must end even if the client doesn't
            time.sleep(0.3)
            yield b"x"

    proxy.rules.append(rule(fake, lambda h: stream(h, 200, {}, drip())))
    start = time.monotonic()
    one_line_error(f"docker://{proxy.addr}/task/leak:drip", "too slow")
    assert time.monotonic() - start < 10
    nothing_cached(cache, fake)


def test_manifest_nested_past_the_json_parser_is_one_line(images, cache, proxy):
    """JSON nested 100,000 deep (well under the 4 MiB manifest limit) ended in an internal RecursionError."""
    body = b'{"layers": ' + b"[" * 100_000
    proxy.rules.append(rule("/manifests/deep$", lambda h: h.reply(200, body, {"Content-Type": OCI_MANIFEST})))
    one_line_error(f"docker://{proxy.addr}/task/leak:deep", "is not valid JSON")
