"""`docker://` references parsed as docker and skopeo do, and credentials found in the auth files (no
registry needed)."""

from __future__ import annotations

import base64
import json

import pytest

from overlap.audit.image import authfile
from overlap.audit.image.reference import is_loopback, parse_ref
from overlap.errors import InputError

D = "sha256:" + "a" * 64


@pytest.mark.parametrize("given, host, api, repo, tag, digest", [
    ("docker://python", "docker.io", "registry-1.docker.io", "library/python", "latest", None),
    ("docker://python:3.12-slim", "docker.io", "registry-1.docker.io", "library/python", "3.12-slim", None),
    ("docker://org/task:1", "docker.io", "registry-1.docker.io", "org/task", "1", None),
    ("docker://docker.io/python", "docker.io", "registry-1.docker.io", "library/python", "latest", None),
    ("docker://index.docker.io/org/x", "docker.io", "registry-1.docker.io", "org/x", "latest", None),
    ("docker://ghcr.io/org/sub/task:v1.0", "ghcr.io", "ghcr.io", "org/sub/task", "v1.0", None),
    ("docker://localhost/task", "localhost", "localhost", "task", "latest", None),
    ("docker://127.0.0.1:5000/a/b@" + D, "127.0.0.1:5000", "127.0.0.1:5000", "a/b", None, D),
    ("docker://quay.io/a/b:t@" + D, "quay.io", "quay.io", "a/b", "t", D),
    ("docker://[::1]:5000/a", "[::1]:5000", "[::1]:5000", "a", "latest", None),
])
def test_parse(given, host, api, repo, tag, digest):
    r = parse_ref(given)
    assert (r.host, r.api_host, r.repo, r.tag, r.digest) == (host, api, repo, tag, digest)
    assert r.reference == (digest or tag)


@pytest.mark.parametrize("given", ["docker://", "docker://Upper/Case", "docker://a/b@sha256:abc", "docker:///x",
                                   "docker://a b", "docker://x/../y", "docker://a:/b", "docker://h.io/a:bad tag",
                                   "docker://a/b@md5:" + "a" * 32])
def test_bad_references_are_input_errors(given):
    with pytest.raises(InputError) as exc:
        parse_ref(given)
    assert str(exc.value).startswith(given) and "\n" not in str(exc.value)


def test_loopback():
    assert is_loopback("127.0.0.2") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("10.0.0.1") and not is_loopback("example.com")
    assert parse_ref("docker://[::1]:5000/a").hostname == "::1"


def test_auth_file_entries(tmp_path, monkeypatch):
    def b64(s: str) -> str:
        return base64.b64encode(s.encode()).decode()

    f = tmp_path / "auth.json"
    f.write_text(json.dumps({"auths": {
        "https://index.docker.io/v1/": {"auth": b64("hub:1")},
        "ghcr.io": {"auth": b64("gh:2")}, "ghcr.io/org": {"auth": b64("org:3")},
        "quay.io": {"auth": "!!not base64"}}, "credsStore": "desktop"}))
    monkeypatch.setenv("REGISTRY_AUTH_FILE", str(f))
    assert authfile.lookup(parse_ref("docker://python"))[0] == ("hub", "1")
    assert authfile.lookup(parse_ref("docker://ghcr.io/other/x"))[0] == ("gh", "2")
    assert authfile.lookup(parse_ref("docker://ghcr.io/org/x"))[0] == ("org", "3")  # the longest key wins
    creds, note = authfile.lookup(parse_ref("docker://quay.io/a/b"))
    assert creds is None and "docker-credential-desktop" in note


def test_auth_file_order(tmp_path, monkeypatch):
    monkeypatch.delenv("REGISTRY_AUTH_FILE", raising=False)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "run"))
    monkeypatch.setenv("DOCKER_CONFIG", str(tmp_path / "docker"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    (tmp_path / "docker").mkdir()
    (tmp_path / "docker" / "config.json").write_text(json.dumps({"auths": {"h.io": {"auth": "ZDpk"}}}))  # d:d
    assert authfile.lookup(parse_ref("docker://h.io/a"))[0] == ("d", "d")
    (tmp_path / "run" / "containers").mkdir(parents=True)
    (tmp_path / "run" / "containers" / "auth.json").write_text(json.dumps({"auths": {"h.io": {"auth": "cjpy"}}}))
    assert authfile.lookup(parse_ref("docker://h.io/a"))[0] == ("r", "r")


def test_plain_http_only_for_loopback_or_named_hosts(tmp_path, monkeypatch):
    from overlap.audit.image.registry import Client, parse_challenge

    monkeypatch.setenv("REGISTRY_AUTH_FILE", str(tmp_path / "none.json"))
    assert Client(parse_ref("docker://127.0.0.5:5000/a")).plain_ok
    assert not Client(parse_ref("docker://registry.test:5000/a")).plain_ok
    named = Client(parse_ref("docker://registry.test:5000/a"), insecure=["registry.test:5000"])
    assert named.plain_ok and not named._verify("https://registry.test:5000/v2/")
    assert Client(parse_ref("docker://registry.test/a")).base_url() == "https://registry.test"  # no request made
    assert parse_challenge('Bearer realm="https://a/token",service="s",scope="repository:x:pull"') == \
        ("bearer", {"realm": "https://a/token", "service": "s", "scope": "repository:x:pull"})


def test_missing_tools_fail_in_ci_and_skip_locally(monkeypatch):
    import regkit

    monkeypatch.setattr(regkit.shutil, "which", lambda name: None)
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI must install them"):
        regkit.need_tools()
    monkeypatch.delenv("CI")
    with pytest.raises(pytest.skip.Exception, match="apt-get install docker-registry skopeo umoci"):
        regkit.need_tools()
