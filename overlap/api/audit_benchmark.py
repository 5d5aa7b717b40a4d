"""A benchmark's tasks as audit targets (`overlap audit --benchmark NAME --tag TAG --sample N --seed S`).

The benchmark is loaded through the registry (`load_dataset`, honouring `--data NAME=PATH`); its declaration's
`[audit]` table says how an instance maps to an image and which record columns are its reference. Items keep
no test patch, so the reference columns are read from the same files the items came from, by instance id.

The sample is `random.Random(seed).sample(sorted(instance_ids), N)`: the same ids for a given benchmark
version, seed and N, whatever the tags. Each (benchmark, tag) is one image set, named `NAME:TAG` (`NAME` when
the image is named by the record, as in SWE-bench Pro).
"""

from __future__ import annotations

import random
from pathlib import Path

from ..audit.study.naming import RECORD_ROLES, ImageNaming, mirrored, parse_mirrors, record_value
from ..audit.study.targets import BatchTarget
from ..errors import InputError
from ..sources.formats.whole_file import read_records
from ..sources.load import load_dataset
from ..sources.registry.later_columns import str_or_none
from ..sources.registry.registry import get_spec, parse_selection, selection_label


def draw(ids: list[str], sample: int | None, seed: int) -> list[str]:
    """The instance ids to audit: all of them, or a reproducible sample of the sorted ids."""
    if sample is not None and sample < 1:
        raise InputError(f"--sample {sample}: give 1 or more")
    ids = sorted(ids)
    if sample is None or sample >= len(ids):
        return ids
    return sorted(random.Random(seed).sample(ids, sample))


def _records(dataset, naming: ImageNaming) -> dict[str, dict]:
    """Instance id -> the record's columns the naming needs, read from the files the items came from (a dotted
    name is read from the column it starts at)."""
    id_col = naming.columns["id"]
    out: dict[str, dict] = {}
    labels = sorted({str(f) for f in dataset.items.get("file", []) if isinstance(f, str)})
    for label in labels:
        for row in read_records(dataset.source.fetch(label), naming.read_columns()):
            key = str_or_none(record_value(row, id_col))
            if key is not None:
                out.setdefault(key, row)
    return out


def _declaration_folder(spec) -> Path:
    origin = Path(spec.origin) if spec.origin else None
    return origin.resolve().parent if origin is not None and origin.is_file() else Path.cwd()


def sampling_of(population: int, sample: int | None, seed: int) -> dict:
    """How a set's tasks were drawn, as the document records it (the estimates read ``population``)."""
    drawn = population if sample is None else min(sample, population)
    if drawn == population:
        return {"population": population, "drawn": drawn, "method": "all", "seed": None}
    return {"population": population, "drawn": drawn, "seed": seed,
            "method": "random.Random(seed).sample(sorted(instance_ids), drawn)"}


def benchmark_targets(names: list[str], tags: list[str] | None = None, sample: int | None = None, seed: int = 0,
                      data: dict[str, Path] | None = None, mirrors: list[str] | None = None) -> list[BatchTarget]:
    """The targets of every (benchmark, tag): a sample of its instances, each with its image and reference."""
    return benchmark_sets(names, tags, sample, seed, data, mirrors)[0]


def split_tags(tags: list[str] | None, names: list[str]) -> tuple[list[str], dict[str, list[str]]]:
    """``--tag TAG`` (every benchmark) and ``--tag NAME=TAG`` (that benchmark only; a tag never holds ``=``)."""
    common: list[str] = []
    own: dict[str, list[str]] = {}
    for value in tags or ():
        name, sep, tag = value.partition("=")
        if not sep:
            common.append(value)
            continue
        if name not in names or not tag:
            raise InputError(f"--tag {value}: NAME=TAG names one of the --benchmark values "
                             f"({', '.join(names)}) and a tag")
        own.setdefault(name, []).append(tag)
    return common, own


def benchmark_sets(names: list[str], tags: list[str] | None = None, sample: int | None = None, seed: int = 0,
                   data: dict[str, Path] | None = None, mirrors: list[str] | None = None
                   ) -> tuple[list[BatchTarget], dict[str, dict]]:
    """``benchmark_targets`` and, per image set, how its tasks were drawn from how many (``sampling_of``).
    ``mirrors``: ``HOST=MIRROR`` pairs, each image named on HOST read from MIRROR instead."""
    out: list[BatchTarget] = []
    sampling: dict[str, dict] = {}
    hosts = parse_mirrors(mirrors)
    common, own = split_tags(tags, names)
    for text in names:
        selection = parse_selection(text)
        if selection.path is not None:
            raise InputError(f"--benchmark {text}: name a registered benchmark (its local copy: -d NAME=PATH); "
                             "a file of targets is --targets")
        spec = get_spec(selection.name)
        if not spec.audit:
            raise InputError(f"--benchmark {text}: {spec.name} declares no [audit] table (how its instances map to "
                             "images); add one to its declaration (docs/audit.md) or give --targets")
        naming = ImageNaming.from_table(spec.audit, spec.origin or spec.name)
        wanted = own.get(text) or common
        if wanted and not naming.uses_tag:
            raise InputError(f"--tag: {spec.name} names each image by its record ({naming.image}); drop --tag "
                             "(or give the other benchmarks theirs as --tag NAME=TAG)")
        chosen_tags = list(dict.fromkeys(wanted or naming.tags[:1])) if naming.uses_tag else [None]
        if not chosen_tags:
            raise InputError(f"--benchmark {text}: its declaration lists no tags; give --tag")
        dataset = load_dataset(text, data)
        ids = [str(i) for i in dataset.items["item_id"].tolist() if str_or_none(i) is not None]
        records = _records(dataset, naming)
        base = _declaration_folder(spec)
        label = selection_label(text)
        for tag in chosen_tags:
            set_name = f"{label}:{tag}" if tag else label
            sampling[set_name] = sampling_of(len(set(ids)), sample, seed)
            for iid in draw(ids, sample, seed):
                out.append(_target(naming, records.get(iid), iid, tag, base, set_name, hosts))
    return out, sampling


def _target(naming: ImageNaming, record: dict | None, iid: str, tag: str | None, base: Path,
            set_name: str, mirrors: dict[str, str] | None = None) -> BatchTarget:
    if record is None:
        return BatchTarget(set_name, "", "image", instance_id=iid,
                           error=f"no record with {naming.columns['id']} = {iid} in the benchmark's files")
    ref = {role: str_or_none(record_value(record, naming.columns[role]))
           for role in ("base_commit", "patch", "test_patch", "fix_commit", *RECORD_ROLES) if role in naming.columns}
    try:
        kind, target = naming.target(record, iid, tag, base)
    except InputError as exc:
        return BatchTarget(set_name, "", "image", instance_id=iid, error=str(exc), **ref)
    if kind == "image":
        target = mirrored(target, mirrors or {})
    return BatchTarget(set_name, target, kind, instance_id=iid, repo_path=naming.repo_path, **ref)
