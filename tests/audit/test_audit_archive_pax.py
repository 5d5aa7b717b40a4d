"""An archive left in an audited tree whose tar holds an extended header (PAX, GNU long name) over 1 MiB: its
members are read only as far as the runtime reads such a tar (up to that header), in bounded memory and time,
never by reading the header whole as tarfile would (a 256 MiB header in a 256 KB gzip file). A header of
exactly 1 MiB is read, and the member after it is found, under the name the header gives it. The oracle is the
documented 1 MiB rule."""

from __future__ import annotations

import subprocess
import sys
import tarfile
import zlib
from pathlib import Path

import pytest
from test_audit_pax_limit import _layer_chunks

from overlap.audit.content.archives import members

MIB = 1 << 20


def _gzip_file(path: Path, chunks) -> None:
    z = zlib.compressobj(1, zlib.DEFLATED, 31)
    with path.open("wb") as fh:
        for chunk in chunks:
            fh.write(z.compress(chunk))
        fh.write(z.flush())


@pytest.mark.parametrize("kind", [tarfile.XHDTYPE, tarfile.GNUTYPE_LONGNAME])
def test_a_huge_extended_header_stops_the_archive_in_bounded_memory(tmp_path, kind):
    path = tmp_path / "cache.tgz"
    _gzip_file(path, _layer_chunks(kind, 256 * MIB))
    # in a fresh process, so its peak memory is the read's alone: VmHWM, which starts anew at exec (ru_maxrss
    # would carry over the test runner's own peak from the fork)
    code = ("from pathlib import Path; from overlap.audit.content.archives import members;"
            f"names = [n for n, _ in members(Path({str(path)!r}), 16 << 20)];"
            "hwm = next(l for l in open('/proc/self/status') if l.startswith('VmHWM'));"
            "print(names, int(hwm.split()[1]) // 1024)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    names, peak_mb = out.stdout.rsplit(" ", 1)
    assert names == "['etc/os-release']"  # read up to the header, as the runtime reads it
    assert int(peak_mb) < 200  # the header alone would be 256 MB


def test_a_header_of_exactly_one_mib_is_read(tmp_path):
    path = tmp_path / "cache.tgz"
    body = (b"%d path=" % (MIB,)).ljust(MIB - 1, b"a") + b"\n"
    _gzip_file(path, _layer_chunks(tarfile.XHDTYPE, MIB, body=body))
    found = dict(members(path, 16 * MIB))
    named = [name for name, data in found.items() if data == b"late\n"]  # the PAX path names the next member
    assert found["etc/os-release"] == b"ID=test\n" and len(named) == 1 and set(named[0]) == {"a"}
