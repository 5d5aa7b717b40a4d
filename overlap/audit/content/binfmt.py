"""Binary file kinds by magic bytes, and what two builds of one program share: an ELF's build-id and its
defined global symbols (read from the section headers with ``struct``; a malformed file gives nothing, never
an error, as it is hostile input)."""

from __future__ import annotations

import struct
from dataclasses import dataclass

# symbols every C runtime start file defines: two unrelated programs share them, so they never pair builds
RUNTIME_SYMBOLS = frozenset({
    "_start", "_init", "_fini", "main", "_IO_stdin_used", "__dso_handle", "__data_start", "data_start", "_edata",
    "_end", "__bss_start", "__libc_csu_init", "__libc_csu_fini", "__TMC_END__", "_dl_relocate_static_pie",
    "__GNU_EH_FRAME_HDR", "_GLOBAL_OFFSET_TABLE_", "_DYNAMIC", "__init_array_start", "__init_array_end",
    "__fini_array_start", "__fini_array_end", "__FRAME_END__", "__x86.get_pc_thunk.bx", "__stack_chk_guard"})
MAX_SECTIONS = 4096
MAX_SYMBOLS = 200_000


def kind_of(head: bytes, name: str) -> str | None:
    """The binary kind of a file from its first bytes and name (None: not a binary this audit pairs)."""
    if head.startswith(b"\x7fELF"):
        return "elf"
    if head[:4] in (b"\xfe\xed\xfa\xce", b"\xfe\xed\xfa\xcf", b"\xce\xfa\xed\xfe", b"\xcf\xfa\xed\xfe",
                    b"\xca\xfe\xba\xbe"):
        return "mach-o" if not name.endswith(".class") else None
    if head.startswith(b"MZ"):
        return "pe"
    if head.startswith(b"\0asm"):
        return "wasm"
    if head.startswith(b"!<arch>\n"):
        return "ar"
    if head.startswith(b"PK\x03\x04") and name.endswith(".jar"):
        return "jar"
    return None


@dataclass(frozen=True)
class ElfInfo:
    machine: int
    etype: int
    build_id: str | None
    symbols: frozenset[str]  # defined global functions and objects (the symbol table, else the dynamic one)

    @property
    def own_symbols(self) -> frozenset[str]:
        return self.symbols - RUNTIME_SYMBOLS


def elf_info(data: bytes) -> ElfInfo | None:
    try:
        return _elf(data)
    except (struct.error, IndexError, ValueError, UnicodeDecodeError):
        return None


def _elf(data: bytes) -> ElfInfo | None:
    if not data.startswith(b"\x7fELF") or len(data) < 52:
        return None
    wide = data[4] == 2
    end = "<" if data[5] == 1 else ">"
    etype, machine = struct.unpack_from(end + "HH", data, 16)
    if wide:
        shoff, = struct.unpack_from(end + "Q", data, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from(end + "HHH", data, 0x3A)
        shfmt = end + "IIQQQQIIQQ"
    else:
        shoff, = struct.unpack_from(end + "I", data, 0x20)
        shentsize, shnum, shstrndx = struct.unpack_from(end + "HHH", data, 0x2E)
        shfmt = end + "IIIIIIIIII"
    if not shoff or shnum > MAX_SECTIONS or shentsize < struct.calcsize(shfmt):
        return ElfInfo(machine, etype, None, frozenset())
    sections = []
    for i in range(shnum):
        f = struct.unpack_from(shfmt, data, shoff + i * shentsize)
        sections.append({"name": f[0], "type": f[1], "offset": f[4], "size": f[5], "link": f[6]})
    names_at = sections[shstrndx]["offset"] if shstrndx < len(sections) else None

    def name_of(s: dict) -> str:
        if names_at is None:
            return ""
        start = names_at + s["name"]
        return data[start:data.index(b"\0", start)].decode("ascii", "replace")

    build_id = None
    for s in sections:
        if s["type"] == 7 and name_of(s) == ".note.gnu.build-id":
            namesz, descsz, _ = struct.unpack_from(end + "III", data, s["offset"])
            at = s["offset"] + 12 + ((namesz + 3) & ~3)
            build_id = data[at:at + descsz].hex() or None
    symbols: set[str] = set()
    for wanted in (2, 11):  # SHT_SYMTAB, else SHT_DYNSYM
        for s in sections:
            if s["type"] != wanted or s["link"] >= len(sections):
                continue
            strtab = sections[s["link"]]["offset"]
            entsize = 24 if wide else 16
            for k in range(min(s["size"] // entsize, MAX_SYMBOLS)):
                at = s["offset"] + k * entsize
                if wide:
                    st_name, st_info, _, st_shndx = struct.unpack_from(end + "IBBH", data, at)
                else:
                    st_name, _, _, st_info, _, st_shndx = struct.unpack_from(end + "IIIBBH", data, at)
                if st_info >> 4 in (1, 2) and st_info & 0xF in (1, 2) and st_shndx != 0 and st_name:
                    start = strtab + st_name
                    symbols.add(data[start:data.index(b"\0", start)].decode("utf-8", "replace"))
        if symbols:
            break
    return ElfInfo(machine, etype, build_id, frozenset(symbols))


def printable_strings(data: bytes, least: int = 8) -> list[str]:
    """Runs of printable ASCII of at least ``least`` characters (what `strings -n 8` prints)."""
    out, run = [], bytearray()
    for b in data:
        if 32 <= b < 127 or b == 9:
            run.append(b)
            continue
        if len(run) >= least:
            out.append(run.decode("ascii"))
        run.clear()
    if len(run) >= least:
        out.append(run.decode("ascii"))
    return out
