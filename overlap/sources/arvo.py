"""Identity data from ARVO (GitHub n132/ARVO, pinned): the OSS-Fuzz old→new issue-id mapping.

`register_arvo_file` registers one file of that repo at the pinned revision as mapping data; the
new-tracker project list (`arvo-projects`, in `arvo_meta`) is registered through it too, so the pin
stands in one place.
"""

from __future__ import annotations

from ..ids.ossfuzz import OssFuzzMapping, parse_mapping
from .files import FileSource
from .registry import Adapter, DatasetSpec, register

ARVO_REPO = "n132/ARVO"
ARVO_REVISION = "bc2a373c6b32fb3d9e7f86c516b1844885dcec51"
MAPPING_FILE = "arvo/oss_fuzz_mappings.csv"


def register_arvo_file(name: str, title: str, relpath: str, extracts: str, adapter: Adapter,
                       aliases: tuple[str, ...] = ()) -> DatasetSpec:
    """Register `relpath` of the pinned n132/ARVO repo (GitHub) as mapping data read by `adapter`."""
    return register(DatasetSpec(name=name, title=title, hub_repo=ARVO_REPO, revision=ARVO_REVISION,
                                files={"": relpath}, extracts=extracts, adapter=adapter, aliases=aliases,
                                host="github", role="mapping"))


def load_arvo_mapping(source: FileSource, spec: DatasetSpec, subsets: tuple[str, ...], single: bool) -> OssFuzzMapping:
    path = source.fetch(MAPPING_FILE)
    mapping = parse_mapping(path.read_bytes(), str(path))
    source.record(MAPPING_FILE, path, len(mapping))
    return mapping


ARVO = register_arvo_file("arvo", "OSS-Fuzz old→new issue ids (ARVO)", MAPPING_FILE,
                          "headerless CSV old Monorail id,new tracker id (one-to-one)", load_arvo_mapping)
