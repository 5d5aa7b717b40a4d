"""Hostile indexes and archives: each is one line for the task or a counted skip, never a hang and never a file
outside the cache."""

from __future__ import annotations

import gzip
import hashlib
import http.server
import io
import json
import tarfile
import time
import zipfile

import pytest
from netkit import sdist, static_server
from scenarios import CREATED, TEXTS, fix_patch

from overlap.audit.network import NetworkOptions, check_task

NAME = "hostilepkg"
PATH = f"src/{NAME}/calc.py"


def _record(package: str = f"pypi:{NAME}") -> dict:
    return {"instance_id": "h-1", "package": package, "version": "1.0", "created_at": CREATED.isoformat(),
            "patch": fix_patch(PATH)}


class Handler(http.server.BaseHTTPRequestHandler):
    """Serves ``routes``: path -> (status, headers, body or a callable writing the body)."""
    routes: dict = {}

    def log_message(self, *a):
        pass

    def do_GET(self):  # noqa: N802 - http.server's name
        status, headers, body = self.routes.get(self.path.split("?")[0], (404, {}, b"no"))
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        if not callable(body):
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            body(self.wfile) if callable(body) else self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass


def serve(routes: dict):
    cls = type("H", (Handler,), {"routes": routes})
    return static_server(None, cls)


JSON = {"Content-Type": "application/vnd.pypi.simple.v1+json"}


def _page(files: list[dict]) -> bytes:
    return json.dumps({"meta": {"api-version": "1.1"}, "name": NAME, "files": files}).encode()


def _entry(fname: str, data: bytes, **over) -> dict:
    return {"filename": fname, "url": f"/files/{fname}", "hashes": {"sha256": hashlib.sha256(data).hexdigest()},
            "size": len(data), "upload-time": "2024-03-05T00:00:00Z", **over}


def _index(archive_name: str, archive: bytes | object, **over) -> dict:
    unfixed_name, unfixed = sdist(NAME, "0.9.0", {PATH: TEXTS[None]})
    body = archive if callable(archive) else archive
    files = [_entry(unfixed_name, unfixed, **{"upload-time": "2023-01-01T00:00:00Z"})]
    files.append(_entry(archive_name, archive if isinstance(archive, bytes) else b"", **over))
    return {f"/simple/{NAME}/": (200, JSON, _page(files)), f"/files/{unfixed_name}": (200, {}, unfixed),
            f"/files/{archive_name}": (200, {}, body)}


def _check(routes: dict, **kw) -> dict:
    with serve(routes) as url:
        return check_task(_record(), NetworkOptions(index_url=f"{url}/simple/", **kw))


def _tar_gz(members: list[tarfile.TarInfo], datas: list[bytes]) -> bytes:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tar:
        for info, data in zip(members, datas, strict=True):
            tar.addfile(info, io.BytesIO(data) if info.isreg() else None)
    return gzip.compress(raw.getvalue())


def test_archive_lying_about_its_hash_is_a_counted_skip(cache):
    name, data = sdist(NAME, "1.0.1", {PATH: TEXTS["full"]})
    section = _check(_index(name, data, hashes={"sha256": "0" * 64}))
    assert section["first_release"] is None
    assert section["releases_read"][0]["status"] == "unreadable" and "sha256 differs" in \
        section["releases_read"][0]["reason"]
    assert section["skipped"]["release archive unreadable"] == 1
    assert not list((cache / "index" / "sha256").glob("*")) or all(
        hashlib.sha256(p.read_bytes()).hexdigest() == p.name for p in (cache / "index" / "sha256").iterdir())


def test_archive_lying_about_its_size(cache):
    name, data = sdist(NAME, "1.0.1", {PATH: TEXTS["full"]})
    section = _check(_index(name, data, size=100))
    assert "more than its declared 100 bytes" in section["releases_read"][0]["reason"]


def test_endless_page_is_cut_at_the_limit(cache):
    def endless(w):
        w.write(b'{"files": [')
        while True:
            w.write(b" " * 65536)

    section = _check({f"/simple/{NAME}/": (200, JSON, endless)})
    assert section["route"] == "unavailable" and "larger than" in section["reason"]


def test_a_million_releases_are_refused(cache):
    versions = {f"1.0.{i}": {} for i in range(10**6)}
    doc = json.dumps({"name": "big", "versions": versions}).encode()
    with serve({"/big": (200, {"Content-Type": "application/json"}, doc)}) as url:
        section = check_task(_record("npm:big"), NetworkOptions(index_url=url))
    assert section["route"] == "unavailable" and "1,000,000 versions, over the limit" in section["reason"]


@pytest.mark.parametrize(("status", "words"), [(401, "needs credentials"), (404, "not found"), (429, "rate limited"),
                                               (500, "server error")])
def test_http_errors_are_one_line(cache, status, words):
    section = _check({f"/simple/{NAME}/": (status, {}, b"nope")})
    assert section["route"] == "unavailable" and words in section["reason"] and "\n" not in section["reason"]


def test_redirect_to_another_host_is_refused(cache):
    with serve({}) as other:
        target = other.replace("127.0.0.1", "localhost") + f"/simple/{NAME}/"
        section = _check({f"/simple/{NAME}/": (302, {"Location": target}, b"")})
    assert section["route"] == "unavailable" and "redirect to another host (localhost) refused" in section["reason"]


def test_tar_with_escaping_absolute_and_link_members(cache, tmp_path):
    top = f"{NAME}-1.0.1"
    infos, datas = [], []
    for name, data in ((f"../{NAME}/calc.py", TEXTS["full"].encode()), (f"/{PATH}", TEXTS["full"].encode()),
                       (f"{top}/setup.py", b"raise SystemExit('never run')\n")):
        info = tarfile.TarInfo(name)
        info.size = len(data)
        infos.append(info)
        datas.append(data)
    link = tarfile.TarInfo(f"{top}/{PATH}")
    link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
    infos.append(link)
    datas.append(b"")
    section = _check(_index(f"{top}.tar.gz", _tar_gz(infos, datas)))
    assert section["first_release"] is None and section["releases_read"][0]["status"] == "no_file"
    assert section["skipped"]["archive member with an absolute or '..' name"] == 2
    assert section["skipped"]["archive member that is a link (not followed)"] == 1
    assert not (tmp_path / NAME).exists()


def test_zip_bomb_member_is_skipped(cache):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(f"{NAME}/calc.py", b"\0" * (40 << 20))
    data = buf.getvalue()
    assert len(data) < 100_000
    section = _check(_index(f"{NAME}-1.0.1-py3-none-any.whl", data))
    assert section["skipped"]["archive member over the member limit"] == 1
    assert section["releases_read"][0]["status"] == "no_file"


class Sequenced(Handler):
    """Serves ``routes`` as Handler does, except that a path mapped to a list answers its items in turn (the last
    one from then on); every request is logged in ``asked``."""
    asked: list = []

    def do_GET(self):  # noqa: N802 - http.server's name
        path = self.path.split("?")[0]
        self.asked.append(path)
        answers = self.routes.get(path)
        if isinstance(answers, list):
            self.routes = {**self.routes, path: answers.pop(0) if len(answers) > 1 else answers[0]}
        super().do_GET()


def _check_sequenced(routes: dict) -> tuple[dict, list, float]:
    cls = type("S", (Sequenced,), {"routes": routes, "asked": []})
    start = time.monotonic()
    with static_server(None, cls) as url:
        section = check_task(_record(), NetworkOptions(index_url=f"{url}/simple/"))
    return section, cls.asked, time.monotonic() - start


def test_429_retry_after_is_honoured(cache):
    name, data = sdist(NAME, "1.0.1", {PATH: TEXTS["full"]})
    routes = _index(name, data)
    page = f"/simple/{NAME}/"
    routes[page] = [(429, {"Retry-After": "1"}, b"slow down"), routes[page]]
    section, asked, seconds = _check_sequenced(routes)
    assert section["route"] == "open", section.get("reason")
    assert section["first_release"]["version"] == "1.0.1" and asked.count(page) == 2 and seconds >= 1.0


def test_retry_is_bounded(cache):
    page = f"/simple/{NAME}/"
    section, asked, seconds = _check_sequenced({page: (429, {"Retry-After": "3600"}, b"later")})
    assert section["route"] == "unavailable" and "asked to retry after 3600 s" in section["reason"]
    assert asked.count(page) == 1 and seconds < 5
    section, asked, _ = _check_sequenced({page: (503, {"Retry-After": "0"}, b"down")})
    assert section["route"] == "unavailable" and "server error (503)" in section["reason"]
    assert asked.count(page) == 4  # the first try and three retries
