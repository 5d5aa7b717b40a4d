"""The network route against verdaccio (a real npm registry) and the Go module proxy's static layout, both on
loopback. verdaccio stamps each version with its publish time, so the task's created_at is taken between two
publishes; the Go proxy's ``.info`` files carry the times the fixture chose."""

from __future__ import annotations

import datetime as dt
import difflib
import json
import time

import pytest
from netkit import go_zip, npm_publish, npm_tarball, static_server, verdaccio
from scenarios import CREATED, TEXTS, Rel, expected_first

from overlap.audit.network import NetworkOptions, check_task

JS = {k: v.replace('"""', "//") for k, v in TEXTS.items()}


def _patch(path: str, old: str, new: str) -> str:
    lines = difflib.unified_diff(old.splitlines(True), new.splitlines(True), f"a/{path}", f"b/{path}")
    return f"diff --git a/{path} b/{path}\n" + "".join(lines)


def test_first_release_on_verdaccio(tmp_path, cache):
    releases = [("4.0.0", None), ("4.0.1", "partial"), ("4.0.2", "full"), ("4.1.0", "full")]
    with verdaccio(tmp_path / "verdaccio") as registry:
        created = None
        for i, (version, fix) in enumerate(releases):
            npm_publish(registry, "leftpadfix", version, npm_tarball("leftpadfix", version, {"lib/calc.js": JS[fix]}))
            if i == 0:  # the task is opened after the first publish, before the others
                time.sleep(1.1)
                created = dt.datetime.now(dt.UTC).isoformat()
                time.sleep(1.1)
        record = {"instance_id": "leftpadfix-1", "repo": "example/leftpadfix", "package": "npm:leftpadfix",
                  "version": "4.0", "created_at": created, "patch": _patch("lib/calc.js", JS[None], JS["full"])}
        section = check_task(record, NetworkOptions(index_url=registry))
    want = min((v for v, fix in releases if fix == "full"), key=lambda v: tuple(map(int, v.split("."))))
    assert section["route"] == "open", section["reason"]
    assert section["first_release"]["version"] == want and section["pin"] == f"leftpadfix<{want}"
    assert section["first_release"]["upload_time_source"] == "index"
    assert [p["version"] for p in section["partial"]] == [v for v, fix in releases if fix == "partial"]


def _go_layout(root, module: str, releases: list[Rel]) -> None:
    folder = root / module / "@v"
    folder.mkdir(parents=True)
    (folder / "list").write_text("".join(f"v{r.version}\n" for r in releases))
    for r in releases:
        (folder / f"v{r.version}.info").write_text(json.dumps({"Version": f"v{r.version}",
                                                               "Time": r.when.strftime("%Y-%m-%dT%H:%M:%SZ")}))
        (folder / f"v{r.version}.zip").write_bytes(go_zip(module, f"v{r.version}", {"calc/calc.go": _go(r.fix)}))
        (folder / f"v{r.version}.mod").write_text(f"module {module}\n")


def _go(fix) -> str:
    return "package calc\n\n" + TEXTS[fix].replace('"""', "//")


@pytest.mark.parametrize(("base", "releases"), [
    ("1.2", [Rel("1.2.0", -30, None), Rel("1.2.1", 4, None), Rel("1.2.2", 33, "full"), Rel("1.3.0", 90, "full")]),
    ("2.0", [Rel("1.9.0", -90, None), Rel("2.0.0", -3, None), Rel("1.9.1", 15, "full"), Rel("2.0.1", 16, "full")]),
])
def test_first_release_on_a_go_proxy(tmp_path, cache, base, releases):
    module = "example.com/Calc/v1"  # an upper-case letter: the proxy path escapes it as !calc
    escaped = "example.com/!calc/v1"
    _go_layout(tmp_path / "proxy", escaped, releases)
    record = {"instance_id": "calc-1", "repo": "example/calc", "package": f"go:{module}", "version": base,
              "created_at": CREATED.isoformat(), "patch": _patch("calc/calc.go", _go(None), _go("full"))}
    with static_server(tmp_path / "proxy") as url:
        section = check_task(record, NetworkOptions(index_url=url))
    want = expected_first(releases, base)
    f = section["first_release"]
    assert f["version"] == f"v{want.version}" and section["pin"] == f"{module}<v{want.version}"
    assert f["days_after_created"] == want.day
