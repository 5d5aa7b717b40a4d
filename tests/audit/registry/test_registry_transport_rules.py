"""The transport rules of docs/audit.md against the real registry behind a loopback fault proxy: plain HTTP only
to loopback and --insecure-registry hosts, redirects included (a plain-HTTP loopback registry's redirect to a
plain-HTTP outside host is refused before anything connects there); `OVERLAP_REGISTRY_TIMEOUT` takes seconds
above 0 and is otherwise one line naming it.

No traffic leaves loopback: every connection the client opens is recorded, and one to a host that is not
loopback goes to 127.0.0.1 instead (its name is never resolved), so a followed redirect shows as a connection
to the outside name."""

from __future__ import annotations

import ipaddress

import pytest
import urllib3.util.connection
from regkit import Proxy
from test_registry_hostile import nothing_cached, one_line_error, rule

from overlap.audit import audit

OUTSIDE = ["blobs.example.com", "10.11.12.13", "registry.invalid", "[2001:db8::1]"]


@pytest.fixture
def connections(monkeypatch):
    """Hosts the client connects to; a connection to a host that is not loopback goes to 127.0.0.1 instead."""
    seen: list[str] = []
    real = urllib3.util.connection.create_connection

    def loopback_only(address, *args, **kwargs):
        host, port = address
        seen.append(host)
        try:
            stays = host == "localhost" or ipaddress.ip_address(host).is_loopback
        except ValueError:
            stays = False
        return real(address if stays else ("127.0.0.1", port), *args, **kwargs)

    monkeypatch.setattr(urllib3.util.connection, "create_connection", loopback_only)
    return seen


@pytest.mark.parametrize("where", ["blob", "manifest"])
@pytest.mark.parametrize("outside", OUTSIDE)
def test_plain_http_redirect_from_loopback_to_an_outside_host_is_refused(images, cache, proxy, connections,
                                                                         outside, where):
    port = int(proxy.addr.rsplit(":", 1)[1])  # were it followed, it would reach the proxy again (loopback_only)
    target = f"http://{outside}:{port}/v2/task/leak/blobs/{images.base_layer}"
    pattern = images.base_layer if where == "blob" else "/manifests/"
    proxy.rules.append(rule(pattern, lambda h: h.reply(307, headers={"Location": target})))
    msg = one_line_error(f"docker://{proxy.addr}/task/leak:1", "redirected to http://")
    assert outside in msg and "loopback" in msg
    assert outside.strip("[]") not in connections, connections
    if cache.exists():
        nothing_cached(cache, images.base_layer)


@pytest.mark.parametrize("loopback", ["127.0.0.2", "localhost"])
def test_plain_http_redirect_to_another_loopback_host_is_followed(images, cache, proxy, connections, loopback):
    """The rule's other side: a second loopback server (127.0.0.2, or localhost) is spoken to over plain HTTP."""
    second = Proxy(images.registry.port, host="127.0.0.2" if loopback == "127.0.0.2" else "127.0.0.1")
    try:
        port = int(second.addr.rsplit(":", 1)[1])
        target = f"http://{loopback}:{port}/v2/task/leak/blobs/{images.base_layer}"
        proxy.rules.append(rule(images.base_layer, lambda h: h.reply(307, headers={"Location": target})))
        assert audit(f"docker://{proxy.addr}/task/leak:1", fix=[str(images.fix_patch)]).verdict == "leak"
        assert second.paths(images.base_layer)
        assert loopback in connections
    finally:
        second.close()


@pytest.mark.parametrize("value", ["-5", "nan", "0", "inf", "-inf", "1e400", "ten", "", "86401"])
def test_registry_timeout_outside_its_range_is_one_line(images, cache, proxy, monkeypatch, value):
    monkeypatch.setenv("OVERLAP_REGISTRY_TIMEOUT", value)
    if value == "":  # unset: the defaults
        assert audit(f"docker://{proxy.addr}/task/leak:1", fix=[str(images.fix_patch)]).verdict == "leak"
        return
    from overlap.errors import InputError

    with pytest.raises(InputError) as exc:
        audit(f"docker://{proxy.addr}/task/leak:1", fix=[str(images.fix_patch)])
    msg = str(exc.value)
    assert "\n" not in msg and f"OVERLAP_REGISTRY_TIMEOUT={value}:" in msg and "above 0" in msg, msg
    assert not proxy.log  # refused before any request


@pytest.mark.parametrize("value", ["0.5", "30", " 7 ", "86400"])
def test_registry_timeout_in_range_is_taken(images, cache, proxy, monkeypatch, value):
    monkeypatch.setenv("OVERLAP_REGISTRY_TIMEOUT", value)
    assert audit(f"docker://{proxy.addr}/task/leak:1", fix=[str(images.fix_patch)]).verdict == "leak"
