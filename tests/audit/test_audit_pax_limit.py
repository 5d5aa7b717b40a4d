"""Extended tar headers (PAX, GNU long name/link) over 1 MiB, which the runtime (Go's archive/tar,
maxSpecialFileSize) refuses: tarfile read them whole, so a 5 MB gzip layer holding a 1 GiB PAX header took
minutes and gigabytes of memory, then the audit said CLEAN. Each is now one line naming the layer (exit 2),
in bounded memory, and in a `--targets` run an error for that target, never a verdict; a header of exactly
1 MiB is read. Layers are built here with tarfile and zlib; the oracle is the documented 1 MiB rule."""

from __future__ import annotations

import hashlib
import io
import json
import resource
import subprocess
import sys
import tarfile
import time
import zlib
from pathlib import Path

import pytest

from overlap.audit import audit
from overlap.errors import InputError

MIB = 1 << 20
REPO = Path(__file__).resolve().parents[2]


def _member(name: str, data: bytes) -> bytes:
    info = tarfile.TarInfo(name)
    info.size, info.mtime, info.mode = len(data), 1_700_000_000, 0o644
    return info.tobuf(format=tarfile.USTAR_FORMAT) + data + bytes(-len(data) % 512)


def _special_header(kind: bytes, size: int) -> bytes:
    info = tarfile.TarInfo("././@PaxHeader" if kind in (tarfile.XHDTYPE, tarfile.XGLTYPE) else "././@LongLink")
    info.type, info.size = kind, size
    return info.tobuf(format=tarfile.USTAR_FORMAT)


def _layer_chunks(kind: bytes, size: int, body: bytes | None = None):
    """A layer tar as chunks: a header of `kind` declaring `size` bytes, its body (`body`, else zeros), then
    one ordinary file and the two end blocks."""
    yield _member("etc/os-release", b"ID=test\n")
    yield _special_header(kind, size)
    if body is not None:
        yield body
    else:
        zeros, left = bytes(16 * MIB), size
        while left:
            yield zeros[:min(left, len(zeros))]
            left -= min(left, len(zeros))
    yield bytes(-size % 512)
    yield _member("root/late.txt", b"late\n")
    yield bytes(1024)


def _gzip_layer(chunks) -> tuple[bytes, str]:
    """(gzip blob, diff_id of the plain tar), streamed: the plain tar is never held whole."""
    z, plain, out = zlib.compressobj(1, zlib.DEFLATED, 31), hashlib.sha256(), []
    for chunk in chunks:
        plain.update(chunk)
        out.append(z.compress(chunk))
    out.append(z.flush())
    return b"".join(out), "sha256:" + plain.hexdigest()


def _docker_save(path: Path, layers: list[tuple[bytes, str]]) -> Path:
    config = json.dumps({"architecture": "amd64", "os": "linux", "config": {},
                         "rootfs": {"type": "layers", "diff_ids": [d for _, d in layers]}}).encode()
    files = [*((f"l{i}/layer.tar", blob) for i, (blob, _) in enumerate(layers)), ("config.json", config),
             ("manifest.json", json.dumps([{"Config": "config.json", "RepoTags": ["t:1"],
                                            "Layers": [f"l{i}/layer.tar" for i in range(len(layers))]}]).encode())]
    with tarfile.open(path, "w") as t:
        for name, data in files:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    return path


def _pax_record(key: str, value_length: int) -> bytes:
    """One PAX record `LEN key=value\\n` of exactly `value_length` value bytes."""
    rest = f" {key}=".encode() + b"v" * value_length + b"\n"
    length = len(rest) + len(str(len(rest)))
    length = len(rest) + len(str(length))
    return str(length).encode() + rest


def _pax_record_of_size(size: int) -> bytes:
    """A `comment` PAX record of exactly `size` bytes (a comment the runtime reads and ignores)."""
    value = size - len(" comment=\n") - len(str(size))
    record = _pax_record("comment", value)
    assert len(record) == size
    return record


def test_a_one_gib_pax_header_in_a_small_gzip_layer_is_refused_in_bounded_memory(tmp_path):
    blob, diff_id = _gzip_layer(_layer_chunks(tarfile.XHDTYPE, 1 << 30))
    assert len(blob) < 8 * MIB
    image = _docker_save(tmp_path / "img.tar", [(blob, diff_id)])

    def limit_memory():  # 1.5 GiB of data: the header alone is 1 GiB, tarfile's parse of it several times that
        resource.setrlimit(resource.RLIMIT_DATA, (3 << 29, 3 << 29))

    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "overlap.cli", "audit", str(image)], capture_output=True, text=True,
                          timeout=120, preexec_fn=limit_memory, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO),
                                                                     "HOME": str(tmp_path), "OVERLAP_OFFLINE": "1"})
    took = time.monotonic() - start
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1, proc.stderr[-2000:]
    assert "layer 0" in lines[0] and f"{1 << 30:,} bytes" in lines[0] and "1 MiB" in lines[0], lines[0]
    assert took < 60, took


@pytest.mark.parametrize("kind, size", [(tarfile.XHDTYPE, MIB + 1), (tarfile.XHDTYPE, 8 * MIB),
                                        (tarfile.XGLTYPE, MIB + 512), (tarfile.GNUTYPE_LONGNAME, MIB + 1),
                                        (tarfile.GNUTYPE_LONGLINK, 4 * MIB)])
def test_an_extended_header_over_one_mib_is_one_line(tmp_path, kind, size):
    image = _docker_save(tmp_path / "img.tar", [_gzip_layer(_layer_chunks(kind, size))])
    with pytest.raises(InputError) as raised:
        audit(str(image))
    message = str(raised.value)
    assert "\n" not in message and message.startswith(f"{image}: layer 0 (l0/layer.tar): "), message
    assert f"of {size:,} bytes" in message and "1 MiB" in message, message


@pytest.mark.parametrize("size", [MIB, MIB - 1, 4096])
def test_a_pax_header_of_at_most_one_mib_is_read(tmp_path, size):
    """The rule's other side: the runtime reads 1 MiB; the file after the header is in the image."""
    from overlap.audit.context import DEFAULT_LIMITS
    from overlap.audit.image.archive import open_image
    from overlap.audit.image.layers import merge

    image = _docker_save(tmp_path / "img.tar",
                         [_gzip_layer(_layer_chunks(tarfile.XHDTYPE, size, _pax_record_of_size(size)))])
    merged = merge(open_image(image, "docker-save"), DEFAULT_LIMITS)
    assert {"etc/os-release", "root/late.txt"} <= set(merged.entries)


def test_an_outer_archive_member_with_a_pax_header_over_one_mib_is_one_line(tmp_path):
    layer = _gzip_layer(_layer_chunks(tarfile.XHDTYPE, 4096, _pax_record_of_size(4096)))
    image = _docker_save(tmp_path / "img.tar", [layer])
    data = image.read_bytes()
    bad = tmp_path / "bad.tar"
    bad.write_bytes(_special_header(tarfile.XHDTYPE, 2 * MIB) + bytes(2 * MIB) + data)
    with pytest.raises(InputError) as raised:
        audit(str(bad))
    message = str(raised.value)
    assert "\n" not in message and str(bad) in message and f"of {2 * MIB:,} bytes" in message, message


def test_a_refused_layer_is_an_error_of_its_target_in_a_targets_run(tmp_path):
    bomb = _docker_save(tmp_path / "bomb.tar", [_gzip_layer(_layer_chunks(tarfile.XHDTYPE, 2 * MIB))])
    ok = tmp_path / "ok"  # a repository folder: a target that audits
    ok.mkdir()
    (ok / "a.py").write_text("x = 1\n")
    for args in (["init", "-q"], ["add", "a.py"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "a"]):
        subprocess.run(["git", *args], cwd=ok, check=True)
    targets = tmp_path / "targets.jsonl"
    targets.write_text("".join(json.dumps({"path": p.name, "instance_id": p.stem}) + "\n" for p in (bomb, ok)))
    proc = subprocess.run([sys.executable, "-m", "overlap.cli", "audit", "--targets", str(targets), "--jobs", "1",
                           "--format", "json", "--out", str(tmp_path / "run")], capture_output=True, text=True,
                          timeout=300, cwd=tmp_path, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO),
                                                          "HOME": str(tmp_path), "OVERLAP_OFFLINE": "1"})
    document = json.loads(proc.stdout)
    rows = {t["instance_id"]: t for t in document["targets"]}
    assert rows["bomb"]["status"] == "error" and rows["bomb"].get("verdict") in (None, "incomplete"), rows["bomb"]
    assert "1 MiB" in rows["bomb"]["error"]
    assert rows["ok"]["status"] == "ok"
    assert proc.returncode == 2  # some target failed
