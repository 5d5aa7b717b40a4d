"""Identity data from ARVO: the OSS-Fuzz old→new issue-id mapping (GitHub n132/ARVO, pinned)."""

from __future__ import annotations

from ..ids.ossfuzz import OssFuzzMapping, parse_mapping
from .files import FileSource
from .registry import DatasetSpec, register

MAPPING_FILE = "arvo/oss_fuzz_mappings.csv"


def load_arvo_mapping(source: FileSource, spec: DatasetSpec, subsets: tuple[str, ...], single: bool) -> OssFuzzMapping:
    path = source.fetch(MAPPING_FILE)
    mapping = parse_mapping(path.read_bytes(), str(path))
    source.record(MAPPING_FILE, path, len(mapping))
    return mapping


ARVO = register(
    DatasetSpec(
        name="arvo",
        title="OSS-Fuzz old→new issue ids (ARVO)",
        hub_repo="n132/ARVO",
        revision="bc2a373c6b32fb3d9e7f86c516b1844885dcec51",
        files={"": MAPPING_FILE},
        extracts="headerless CSV old Monorail id,new tracker id (one-to-one)",
        adapter=load_arvo_mapping,
        host="github",
        role="mapping",
    )
)
