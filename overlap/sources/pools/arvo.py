"""Identity data from ARVO (GitHub n132/ARVO, pinned): the OSS-Fuzz old→new issue-id mapping.

Declared in `declarations/arvo.toml` (the pinned revision; `arvo-projects` reads another file of the same
repo at the same pin); `load_arvo_mapping` is its adapter.
"""

from __future__ import annotations

from ...ids.ossfuzz import OssFuzzMapping, parse_mapping
from ..places.files import FileSource
from ..places.streams import refuse_lfs_pointer
from ..spec import DatasetSpec

MAPPING_FILE = "arvo/oss_fuzz_mappings.csv"


def load_arvo_mapping(source: FileSource, spec: DatasetSpec, subsets: tuple[str, ...], single: bool) -> OssFuzzMapping:
    path = source.fetch(MAPPING_FILE)
    refuse_lfs_pointer(str(path), str(path))
    mapping = parse_mapping(path.read_bytes(), str(path))
    source.record(MAPPING_FILE, path, len(mapping))
    return mapping
