"""The network route against pypiserver on loopback (and a static PEP 691 index for yanking, which pypiserver
does not serve): each scenario's expected first release is computed from how its releases were built."""

from __future__ import annotations

import json
import urllib.parse

import pytest
from netkit import pypiserver, sdist, static_server, wheel
from scenarios import CREATED, TEXTS, Rel, expected_first, fix_patch, stamp

from overlap.audit.network import NetworkOptions, check_task

# name -> (the task's version, the releases); each project is one fix scenario
PROJECTS = {
    "patchrel": ("1.1", [Rel("1.0.0", -400, None), Rel("1.1.0", -30, None), Rel("1.1.1", 5, "partial"),
                         Rel("1.1.2", 12, "full"), Rel("1.2.0", 40, "full")]),
    "nextminor": ("2.0", [Rel("2.0.0", -20, None), Rel("2.0.1", 3, None), Rel("2.1.0", 61, "full")]),
    # the fix lands in 2.0.1 and is backported to the older 1.4 line, uploaded after the task was opened
    "backport": ("2.0", [Rel("1.4.0", -200, None), Rel("2.0.0", -10, None), Rel("1.4.1", 7, "full"),
                         Rel("2.0.1", 9, "full")]),
    "reformat": ("3.0", [Rel("3.0.0", -5, None), Rel("3.0.1", 20, "tokens"), Rel("3.1.0", 50, "full")]),
    "wheelonly": ("0.9", [Rel("0.9.0", -5, None, wheel_only=True), Rel("0.9.1", 2.5, "full", wheel_only=True)]),
    "notyet": ("5.0", [Rel("5.0.0", -5, None), Rel("5.0.1", 4, "partial")]),
}


def _path(name: str) -> str:
    return f"src/{name}/calc.py"


def _record(name: str, version: str) -> dict:
    return {"instance_id": f"{name}-1", "repo": f"example/{name}", "package": f"pypi:{name}", "version": version,
            "created_at": CREATED.isoformat(), "patch": fix_patch(_path(name)), "base_commit": "0" * 40}


@pytest.fixture(scope="module")
def pypi_index(tmp_path_factory):
    folder = tmp_path_factory.mktemp("packages")
    for name, (_, releases) in PROJECTS.items():
        for r in releases:
            files = {_path(name): TEXTS[r.fix], f"src/{name}/__init__.py": ""}
            builders = [wheel] if r.wheel_only else [sdist, wheel]
            for build in builders:
                fname, data = build(name, r.version, files)
                (folder / fname).write_bytes(data)
                stamp(folder / fname, r.when)
    with pypiserver(folder) as url:
        yield url


@pytest.mark.parametrize("name", sorted(PROJECTS))
def test_first_release_on_pypiserver(pypi_index, cache, name):
    version, releases = PROJECTS[name]
    section = check_task(_record(name, version), NetworkOptions(index_url=pypi_index))
    want = expected_first(releases, version)
    if want is None:
        assert section["route"] == "checked" and section["first_release"] is None and section["pin"] is None
    else:
        f = section["first_release"]
        assert section["route"] == "open", section["reason"]
        assert f["version"] == want.version
        assert section["pin"] == f"{name}<{want.version}"
        assert f["match"] == ("tokens" if want.fix == "tokens" else "lines")
        assert f["upload_time_source"] == "last-modified"  # pypiserver serves no PEP 700 times
        assert f["days_after_created"] == round(want.day, 1)
        assert f["archive"].endswith(".whl" if want.wheel_only else ".tar.gz")
    # partial releases: lower than the first (or all, when none carries it), k of n from how they were built
    first_v = want.version if want else None
    from packaging.version import Version

    partial = [r.version for r in releases if r.fix == "partial" and (first_v is None or
                                                                      Version(r.version) < Version(first_v))]
    assert [p["version"] for p in section["partial"]] == partial
    assert all(p["lines_found"] == 2 and p["lines_total"] == 4 for p in section["partial"])


def test_offline_after_online_gives_the_same_json(pypi_index, cache, monkeypatch, capfd):
    record = _record("backport", "2.0")
    online = check_task(record, NetworkOptions(index_url=pypi_index))
    monkeypatch.setenv("OVERLAP_OFFLINE", "1")
    capfd.readouterr()
    offline = check_task(record, NetworkOptions(index_url=pypi_index))
    assert " 0 requests" in capfd.readouterr().err  # nothing was asked of the server
    assert json.dumps(online, sort_keys=True) == json.dumps(offline, sort_keys=True)
    assert online["first_release"]["version"] == "1.4.1"  # the backport: found offline through the cached dates


def test_offline_with_an_empty_cache_says_so(pypi_index, cache, monkeypatch):
    monkeypatch.setenv("OVERLAP_OFFLINE", "1")
    section = check_task(_record("patchrel", "1.1"), NetworkOptions(index_url=pypi_index))
    assert section["route"] == "unavailable" and "OVERLAP_OFFLINE=1" in section["reason"]


# ------------------------------------------------------------------------------------- PEP 691 + yanking
def _pep691(folder, base_url: str, name: str, releases: list[Rel]) -> None:
    import hashlib

    files = []
    for r in releases:
        fname, data = sdist(name, r.version, {_path(name): TEXTS[r.fix]})
        (folder / "files").mkdir(exist_ok=True)
        (folder / "files" / fname).write_bytes(data)
        files.append({"filename": fname, "url": f"../../files/{urllib.parse.quote(fname)}",
                      "hashes": {"sha256": hashlib.sha256(data).hexdigest()}, "size": len(data),
                      "upload-time": r.when.strftime("%Y-%m-%dT%H:%M:%S.000000Z"),
                      "yanked": r.yanked if r.yanked is not None else False})
    page = folder / "simple" / name
    page.mkdir(parents=True)
    (page / "index.html").write_text(json.dumps({"meta": {"api-version": "1.1"}, "name": name, "files": files}))


def test_yanked_first_release_counts_and_says_so(tmp_path, cache):
    """pypiserver has no yanking, so this index is the PEP 691 JSON layout served by http.server (a JSON body
    whatever the Accept: the client reads JSON by its content, not by a negotiated type)."""
    releases = [Rel("1.0.0", -9, None), Rel("1.0.1", 6, "full", yanked="broke installs"), Rel("1.0.2", 8, "full")]
    import http.server

    class Json(http.server.SimpleHTTPRequestHandler):
        def guess_type(self, path):
            return "application/vnd.pypi.simple.v1+json" if str(path).endswith(".html") else "application/gzip"

        def log_message(self, *a):
            pass

    import functools

    with static_server(tmp_path, functools.partial(Json, directory=str(tmp_path))) as url:
        _pep691(tmp_path, url, "yankpkg", releases)
        section = check_task(_record("yankpkg", "1.0"), NetworkOptions(index_url=f"{url}/simple/"))
    want = expected_first(releases, "1.0")
    f = section["first_release"]
    assert f["version"] == want.version and f["yanked"] is True and f["yanked_reason"] == want.yanked
    assert f["upload_time_source"] == "index" and f["days_after_created"] == want.day
