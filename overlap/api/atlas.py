"""`atlas(names)`: every dataset against every benchmark among them, one cell per (train, bench).

A cell is what `compare TRAIN BENCH` finds by ids (the same `id_comparison`, so the numbers are the same):
bench items matched, their share, what a plain id join finds, bench items by pair kind, per subset, the pairs
reported beside the overlap, and the chance baseline where a pool fits the cell. A benchmark is paired with
every other dataset, benchmarks included, never with itself or its own subset (as the matrix skips them).

Incremental: each dataset's items and keys are cached under its fingerprint (its declaration, the pinned
Hub revision, or the sha256 of every local file it is read from), and each cell under the two fingerprints;
a re-run reads and joins only what changed and says which cells it recomputed.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pandas as pd

from .. import __version__
from ..atlas_model import AtlasEntry, AtlasResult
from ..errors import HubUnavailableError, InputError
from ..join import duplicates
from ..model import COUNTED_PAIR_KINDS, Dataset, FileRecord, Problem, Provenance
from ..progress import stage
from ..sources.files import sha256_of
from ..sources.github import cache_root
from ..sources.load import load_dataset, load_pool
from ..sources.registry import all_specs, get_spec, parse_selection
from ..stats.wiring import cyber_baselines
from .atlas_text import CellText
from .compare import canonical_ossfuzz_ids, data_paths, id_comparison
from .matrix import is_own_subset

ATLAS_ROLES = ("training", "benchmark", "reference", "dataset")
# Item columns the cells need; texts, patches and crash reports are not cached (the atlas joins ids).
_CACHED_ITEM_COLUMNS = ("item_id", "row", "file", "file_row", "subset", "project", "repo", "base_commit", "pr")


def _cache_folder(cache: str | os.PathLike | None) -> Path:
    return Path(cache) if cache is not None else cache_root() / "atlas"


def _files_digest(path: Path) -> list[tuple[str, str]]:
    """(relative path, sha256) of a local file, or of every file under a local folder (hidden ones too:
    a dataset's folder holds only what it is read from)."""
    if path.is_file():
        return [(path.name, sha256_of(path))]
    files = sorted(p for p in path.rglob("*") if p.is_file() and not p.is_symlink())
    return [(p.relative_to(path).as_posix(), sha256_of(p)) for p in files]


def fingerprint(name: str, data: Mapping[str, Path]) -> str | None:
    """What a dataset's keys depend on, hashed: its declaration and either the sha256 of every local file it
    is read from (`-d NAME=PATH` or a declared path) or its pinned Hub/GitHub revision. None for an unpinned
    remote dataset (its content can change under the same name: never cached)."""
    selection = parse_selection(name)
    spec = get_spec(selection.name)
    local = data.get(spec.name)
    if local is None and spec.path:
        base = Path(spec.origin).parent if spec.origin and Path(spec.origin).exists() else Path.cwd()
        local = (base / spec.path).resolve()
    parts: dict[str, Any] = {"tool": __version__, "selection": name, "declaration": spec.declaration or spec.name}
    if local is not None:
        parts["files"] = _files_digest(Path(local))
    elif selection.revision or spec.revision:
        parts["remote"] = [spec.host, spec.hub_repo, selection.revision or spec.revision]
    else:
        return None
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


def _save_keys(folder: Path, dataset: Dataset) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder.with_name(folder.name + f".{os.getpid()}.tmp")
    tmp.mkdir(parents=True, exist_ok=True)
    items = dataset.items[[c for c in dataset.items.columns
                           if c in _CACHED_ITEM_COLUMNS or c.startswith("in_")]]
    items.to_parquet(tmp / "items.parquet", index=False)
    dataset.keys.to_parquet(tmp / "keys.parquet", index=False)
    meta = {"name": dataset.name, "provenance": dataset.provenance.to_dict(),
            "problems": [asdict(p) for p in dataset.problems]}
    (tmp / "meta.json").write_text(json.dumps(meta, sort_keys=True), encoding="utf-8")
    for part in ("items.parquet", "keys.parquet", "meta.json"):
        os.replace(tmp / part, folder / part)
    tmp.rmdir()


def _load_keys(folder: Path) -> Dataset | None:
    try:
        meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
        items = pd.read_parquet(folder / "items.parquet")
        keys = pd.read_parquet(folder / "keys.parquet")
    except (OSError, ValueError):
        return None  # not cached, or a damaged entry: read the dataset again
    prov = dict(meta["provenance"])
    prov["files"] = [FileRecord(**f) for f in prov.get("files", [])]
    return Dataset(meta["name"], items, keys, Provenance(**prov), [Problem(**p) for p in meta["problems"]])


def _read(name: str, data: dict[str, Path], cache: Path) -> tuple[Dataset, str | None, bool]:
    """(dataset, fingerprint, read from the cache)."""
    fp = fingerprint(name, data)
    folder = cache / "keys" / fp if fp else None
    if folder is not None:
        cached = _load_keys(folder)
        if cached is not None:
            return cached, fp, True
    dataset = load_dataset(name, data)
    if folder is not None:
        _save_keys(folder, dataset)
    return dataset, fp, False


def _names(names: list[str] | None) -> list[str]:
    if names:
        return list(dict.fromkeys(names))
    return [s.name for s in all_specs() if s.role in ATLAS_ROLES]


def _role(name: str) -> str:
    return get_spec(parse_selection(name).name).role


def _json_text(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _baseline(result, pool) -> dict[str, Any]:
    if pool is None:
        return {"baseline_status": "not_run: no pool fits this cell"}
    if not all((d.keys["kind"] == "ossfuzz").any() for d in (result.train, result.benches[0].bench)):
        return {"baseline_status": "not_run: a side has no OSS-Fuzz id (the pool is OSS-Fuzz bugs)"}
    block = cyber_baselines(result, pool, strata="project", permutations=0)["benches"][result.benches[0].name]
    uniform, within = block["uniform"], block.get("stratified") or {}
    return {"baseline_status": "ran", "baseline_observed": int(uniform["observed"]),
            "baseline_expected_uniform": float(uniform["expected"]),
            "baseline_expected_within_project": within.get("expected"),
            "baseline_p_uniform": uniform.get("p_upper"), "baseline_p_within_project": within.get("p_upper")}


def _cell(train: AtlasEntry, bench: AtlasEntry, dups: dict[str, pd.DataFrame], pool) -> tuple[dict, list[dict]]:
    """One cell's row and its pairs (counted and reported), by the id stage of a compare."""
    result = id_comparison(train.dataset, [bench.dataset], train_duplicates=dups[train.name],
                           bench_duplicates=[dups[bench.name]], sections=False)
    comp = result.benches[0]
    block = result.summary()["benches"][0]
    by_kind = block["bench_items_by_pair_kind"]
    row: dict[str, Any] = {
        "bench_items": block["bench_items"], "bench_items_matched": block["bench_items_matched"],
        "share": block["bench_share"], "plain_matched": block["plain_join"]["bench_items_matched"],
        "train_items": int(len(train.dataset.items)), "train_items_matched": block["train_items_matched"],
        "pairs": block["pairs"], "related_pairs": int(len(comp.related)),
        **{f"matched_{k}": int(by_kind.get(k, 0)) for k in COUNTED_PAIR_KINDS},
        "by_subset": _json_text(block.get("by_subset", {})), "skipped": "", "evidence": "ids",
    }
    row |= _baseline(result, pool)
    pairs = []
    for frame in (comp.pairs, comp.related):
        for record in frame.astype(object).where(frame.notna(), None).to_dict("records"):
            pairs.append({"train": train.name, "bench": bench.name, "train_id": record["train_id"],
                          "bench_id": record["bench_id"], "kinds": record["kinds"],
                          "match_type": record["match_type"], "pair_kind": record.get("pair_kind"),
                          "counted": bool(record.get("counted")) if record.get("counted") is not None else True,
                          "train_raw": record["train_raw"], "bench_raw": record["bench_raw"]})
    return row, pairs


def _load_pool(pool: str | None, entries: list[AtlasEntry], data: dict[str, Path], mapping):
    """The chance-baseline pool: `auto` loads ARVO-Meta when two datasets have OSS-Fuzz ids and it can be
    had (else the cells say why not); a pool named explicitly must load."""
    if pool in (None, "none"):
        return None, "no pool (--pool none)"
    with_ids = [e for e in entries if (e.dataset.keys["kind"] == "ossfuzz").any()]
    if pool == "auto" and len(with_ids) < 2:
        return None, "no two datasets with OSS-Fuzz ids"
    try:
        return load_pool("arvo-meta" if pool == "auto" else pool, data=data, mapping=mapping), None
    except HubUnavailableError as exc:
        if pool != "auto":
            raise
        return None, str(exc)


def atlas(names: list[str] | None = None, *, data: Mapping[str, str | os.PathLike] | None = None,
          cache: str | os.PathLike | None = None, pool: str | None = "auto", text: bool = False,
          engine: str = "local", ray_address: str | None = None, workers: int | None = None) -> AtlasResult:
    """Every dataset of `names` (default: every registered training set, benchmark and reference set,
    declarations added with `--registry` included) against every benchmark among them.

    `data` maps registered names to local files or folders, as for `compare`. `cache` is the folder of the
    key and cell caches (default: the user cache, `OVERLAP_CACHE`). `pool` ("auto", a pool name or path,
    None) gives the cells with OSS-Fuzz ids on both sides their chance baselines. `text` adds each cell's
    n-gram text check, as `compare` runs it (`overlap.api.atlas_text`), on `engine` ("local" or "ray", at
    `ray_address`) with `workers`.
    """
    data = data_paths(data)
    chosen = _names(names)
    if not chosen:
        raise InputError("no datasets to map; name some, or register them (overlap datasets)")
    if not any(_role(n) == "benchmark" for n in chosen):
        raise InputError(f"none of {', '.join(chosen)} is declared a benchmark (role = \"benchmark\"); the atlas "
                         "pairs every dataset with the benchmarks among them")
    folder = _cache_folder(cache)
    texts = CellText(data, {get_spec(parse_selection(n).name).name: n for n in chosen}, engine=engine,
                     ray_address=ray_address, workers=workers) if text else None
    entries = []
    for name in chosen:
        stage(f"reading {name}")
        dataset, fp, cached = _read(name, data, folder)
        spec = get_spec(parse_selection(name).name)
        entries.append(AtlasEntry(name=dataset.name, role=spec.role, fingerprint=fp, cached=cached,
                                  revision=dataset.provenance.revision or spec.revision, dataset=dataset))
    mapping, mapping_provenance = canonical_ossfuzz_ids([e.dataset for e in entries], data)
    loaded_pool, pool_reason = _load_pool(pool, entries, data, mapping)
    mapping_fp = _json_text(mapping_provenance.to_dict()) if mapping_provenance is not None else "none"
    pool_fp = _json_text([pool, loaded_pool.summary() if loaded_pool is not None else pool_reason])
    dups: dict[str, pd.DataFrame] = {}
    rows, pairs, recomputed = [], [], []
    benches = [e for e in entries if e.role == "benchmark"]
    for train in entries:
        for bench in benches:
            if bench is train:
                continue
            head = {"train": train.name, "train_role": train.role, "train_revision": train.revision,
                    "bench": bench.name, "bench_revision": bench.revision}
            if is_own_subset(train.dataset, bench.dataset):
                rows.append(head | {"bench_items": int(len(bench.dataset.items)), "skipped": "own subset"})
                continue
            key = None
            if train.fingerprint and bench.fingerprint:
                key = hashlib.sha256("\n".join((train.fingerprint, bench.fingerprint, mapping_fp, pool_fp,
                                                __version__, *([texts.cache_key()] if texts else []))
                                               ).encode()).hexdigest()
            cached = _load_cell(folder, key)
            if cached is None:
                stage(f"joining {train.name} × {bench.name}")
                for entry in (train, bench):
                    if entry.name not in dups:  # once per dataset, as compare counts them
                        dups[entry.name] = duplicates(entry.dataset)
                row, cell_pairs = _cell(train, bench, dups, loaded_pool)
                if loaded_pool is None:
                    row["baseline_status"] = f"not_run: {pool_reason}"
                if texts is not None:
                    stage(f"text check {train.name} × {bench.name}")
                    row |= texts.cell(train, bench, cell_pairs)
                cached = {"row": row, "pairs": cell_pairs}
                _save_cell(folder, key, cached)
                recomputed.append((train.name, bench.name))
            rows.append(head | cached["row"])
            pairs += cached["pairs"]
    return AtlasResult(entries=entries, cells=rows, pairs=pairs, recomputed=recomputed,
                       parameters={"datasets": [e.name for e in entries], "benches": [b.name for b in benches],
                                   "pool": pool, **({"text": texts.parameters()} if texts else {})},
                       mapping_provenance=mapping_provenance)


def _load_cell(folder: Path, key: str | None) -> dict | None:
    if key is None:
        return None
    try:
        return json.loads((folder / "cells" / f"{key}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _save_cell(folder: Path, key: str | None, cell: dict) -> None:
    if key is None:
        return
    target = folder / "cells" / f"{key}.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(cell, sort_keys=True), encoding="utf-8")
    os.replace(tmp, target)
