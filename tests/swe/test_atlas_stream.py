"""`overlap atlas` streams a training set read by its columns alone against the benchmarks (as compare streams a
user's file): its cells and pairs are the held path's byte for byte on mixes (OSS-Fuzz ids in both trackers'
spellings, CVEs, PRs as URLs and `owner__repo-N`, repeats, blanks, nulls, junk), it is never held whole, and a
re-run scans it only against the benchmarks whose cells with it are not cached, and not at all when all are."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

import overlap.keyjoin.scan as scan
from overlap.api import atlas_stream
from overlap.api.atlas import atlas
from overlap.cli import app
from overlap.errors import InputError
from overlap.outputs.ship.atlas_repo import write_atlas
from overlap.sources.registry import registry

DEMO = Path(__file__).resolve().parents[2] / "data" / "demo"
TRAINS = ("mix-a", "mix-b", "mix-c", "mix-d", "mix-e")
# the user's benchmarks, read by their columns (held: benchmarks are read whole), and a training set with a
# text column (held: the text check reads every row's)
NAMES = [*TRAINS, "mix-held", "cybergym", "cve-bench", "pr-bench"]
OSSFUZZ = ("arvo:10055", "arvo_10055", "arvo:10340", "arvo_42471005", "oss-fuzz:42471120", "libxml2.ossfuzz-12007",
           "https://issues.oss-fuzz.com/issues/42471233", "arvo:99999", "oss-fuzz:386128948", "arvo:10190")
CVES = ("CVE-2023-50246", "jq.cve-2023-50246", "cve-2021-3156", "CVE-1999-0001", "fix for CVE-2024-123456 in jq")
PRS = ("https://github.com/Owner/Repo/pull/12", "owner__repo-12", "Owner/Repo#13", "keras-team__keras-19284",
       "github.com/BurntSushi/ripgrep/pull/1234", "burntsushi__ripgrep-1234", "psf__requests-2317")
JUNK = ("arvo:0", "task-7", "10055", "CVE-2023-123", "owner/repo#0", "https://github.com/owner/repo/issues/12", "",
        "   ", None)


def _mix(rng: random.Random, rows: int) -> list[str | None]:
    """Ids of every scheme in one column, some rows repeating an earlier one."""
    out: list[str | None] = []
    for _ in range(rows):
        if out and rng.random() < 0.15:
            out.append(rng.choice(out))
        else:
            out.append(rng.choice(rng.choice((OSSFUZZ, CVES, PRS, JUNK))))
    return out


def _declaration(name: str, role: str, path: Path, **columns: str) -> str:
    named = "".join(f'{k} = "{v}"\n' for k, v in {"id": "task", **columns}.items())
    return f'[[dataset]]\nname = "{name}"\nrole = "{role}"\npath = "{path}"\n[dataset.columns]\n{named}'


@pytest.fixture
def mixes(tmp_path) -> dict[str, Path]:
    """The mixes as registered datasets (`--registry`), and the data for cybergym and the mapping."""
    rng = random.Random(11)
    root = tmp_path / "mixes"
    root.mkdir()
    paths = {"mix-a": root / "mix-a.parquet", "mix-b": root / "mix-b.jsonl", "mix-c": root / "mix-c.csv",
             "mix-d": root / "mix-d", "mix-e": root / "mix-e.parquet", "mix-held": root / "mix-held.parquet",
             "cve-bench": root / "cve-bench.parquet", "pr-bench": root / "pr-bench.jsonl"}
    pq.write_table(pa.table({"task": _mix(rng, 400)}), paths["mix-a"])
    paths["mix-b"].write_text("".join(json.dumps({"task": t, "project": rng.choice(["jq", "libxml2", None])}) + "\n"
                                      for t in _mix(rng, 150)), encoding="utf-8")
    # OSS-Fuzz ids no benchmark holds (its baselines still run: both sides have OSS-Fuzz ids), and CVEs
    paths["mix-c"].write_text("task\n" + "".join(f"{t}\n" for t in ("arvo:99999", "arvo:20001", "CVE-2021-3156", "",
                                                                      "arvo:20001", "oss-fuzz:42499999")))
    paths["mix-d"].mkdir()  # a folder of shards, read in place
    for shard in range(3):
        pq.write_table(pa.table({"task": _mix(rng, 90)}), paths["mix-d"] / f"part-{shard}.parquet")
    # PR tasks by their repo, PR and base cells (their problems counted), ids of any scheme beside them
    repos = ["owner/repo", "BurntSushi/ripgrep", "not a repo", None]
    pq.write_table(pa.table({"task": _mix(rng, 80), "repo": [rng.choice(repos) for _ in range(80)],
                             "pr": [rng.choice([12, 1234, None, -1]) for _ in range(80)],
                             "base": [rng.choice(["a" * 40, None, "zz", ""]) for _ in range(80)]}), paths["mix-e"])
    pq.write_table(pa.table({"task": _mix(rng, 60), "text": [rng.choice(["fix the parser", None]) for _ in range(60)]}),
                   paths["mix-held"])
    pq.write_table(pa.table({"task": ["CVE-2023-50246", "CVE-2021-3156", "arvo:10102", "oss-fuzz:42471120",
                                      "CVE-2020-0001"]}), paths["cve-bench"])
    paths["pr-bench"].write_text("".join(json.dumps({"task": t}) + "\n" for t in (
        "owner__repo-12", "keras-team__keras-19999", "https://github.com/burntsushi/ripgrep/pull/1234",
        "psf__requests-1")), encoding="utf-8")
    declarations = [_declaration("mix-a", "training", paths["mix-a"]),
                    _declaration("mix-b", "training", paths["mix-b"], project="project"),
                    _declaration("mix-c", "training", paths["mix-c"]),
                    _declaration("mix-d", "training", paths["mix-d"]),
                    _declaration("mix-e", "training", paths["mix-e"], repo="repo", pr="pr", base="base"),
                    _declaration("mix-held", "training", paths["mix-held"], text="text"),
                    _declaration("cve-bench", "benchmark", paths["cve-bench"]),
                    _declaration("pr-bench", "benchmark", paths["pr-bench"])]
    (root / "registry.toml").write_text("\n".join(declarations), encoding="utf-8")
    registry.add_declarations([root / "registry.toml"])
    return paths | {"cybergym": DEMO / "cybergym", "arvo": DEMO / "arvo"}


@pytest.fixture
def scans(monkeypatch) -> list[tuple[str, list[str], object]]:
    """Every streamed scan of the run: (training set, benchmarks scanned against, its Dataset as it came back)."""
    seen: list[tuple[str, list[str], object]] = []
    stream = atlas_stream.stream_train

    def recorded(source, columns, benches, **options):
        dataset, dups = stream(source, columns, benches, **options)
        seen.append((Path(source).stem, [b.name for b in benches], dataset))
        return dataset, dups

    monkeypatch.setattr(atlas_stream, "stream_train", recorded)
    return seen


def _data(mixes: dict[str, Path]) -> dict[str, Path]:
    return {name: mixes[name] for name in ("cybergym", "arvo")}


@pytest.mark.parametrize("pool", ["none", str(DEMO / "arvo-meta")])
def test_streamed_cells_are_the_held_cells(mixes, scans, tmp_path, monkeypatch, pool):
    monkeypatch.setattr(scan, "BATCH_ROWS", 7)  # repeats across batches, the spill on disk
    monkeypatch.setattr(scan, "SPILL_ROWS", 50)
    streamed = atlas(NAMES, data=_data(mixes), cache=tmp_path / "c1", pool=pool)
    assert sorted(name for name, _, _ in scans) == sorted(TRAINS)  # each streamed once; the rest held
    held = atlas(NAMES, data=_data(mixes), cache=tmp_path / "c2", pool=pool, stream=False)
    assert len(scans) == len(TRAINS)  # the held run streams nothing
    write_atlas(streamed, tmp_path / "streamed")
    write_atlas(held, tmp_path / "held")
    files = sorted(p.relative_to(tmp_path / "held").as_posix() for p in (tmp_path / "held").rglob("*") if p.is_file())
    for name in files:  # cells, pairs, card, report pages, provenance: byte for byte
        assert (tmp_path / "streamed" / name).read_bytes() == (tmp_path / "held" / name).read_bytes(), name
    cells = {(c["train"], c["bench"]): c for c in streamed.cells}
    for train in ("mix-a", "mix-b", "mix-d"):
        assert cells[(train, "cybergym")]["bench_items_matched"] > 0 and cells[(train, "pr-bench")]["pairs"] > 0
    assert cells[("mix-c", "cve-bench")]["bench_items_matched"] == 1
    if pool != "none":
        assert cells[("mix-a", "cybergym")]["baseline_status"] == cells[("mix-c", "cybergym")]["baseline_status"] \
            == "ran"
        assert cells[("mix-a", "pr-bench")]["baseline_status"].startswith("not_run: a side has no OSS-Fuzz id")


def test_a_streamed_training_set_is_not_held_whole(mixes, scans, tmp_path):
    result = atlas(NAMES, data=_data(mixes), cache=tmp_path / "cache", pool="none")
    bench_values = {v for e in result.entries if e.role == "benchmark" for v in e.dataset.keys["value"]}
    for name, benches, dataset in scans:
        assert benches == ["cybergym", "cve-bench", "pr-bench"]
        assert dataset.totals is not None and 0 < len(dataset.items) < dataset.item_count, name
        matched = set(dataset.keys.loc[dataset.keys["value"].isin(bench_values), "item_id"])
        assert set(dataset.items["item_id"]) == matched, name  # only items with a key some benchmark has
    entries = {e.name: e for e in result.entries}
    for name in TRAINS:  # released once its cells were made; its counts stay
        assert len(entries[name].dataset.items) == 0 and entries[name].dataset.item_count > 0
        assert all(c["train_items"] == entries[name].dataset.item_count for c in result.cells if c["train"] == name)
    assert len(entries["mix-held"].dataset.items) == entries["mix-held"].dataset.item_count  # a text column: held


def test_a_rerun_scans_a_training_set_only_for_its_uncached_cells(mixes, scans, tmp_path):
    cache = tmp_path / "cache"
    first = atlas(NAMES, data=_data(mixes), cache=cache, pool="none")
    assert len(first.recomputed) == len(first.cells) == len(NAMES) * 3 - 3  # no benchmark against itself
    scans.clear()
    again = atlas(NAMES, data=_data(mixes), cache=cache, pool="none")
    assert again.recomputed == [] and again.cells == first.cells and scans == []  # no training set is read
    assert all(e.cached for e in again.entries)

    rows = pq.read_table(mixes["mix-a"])
    pq.write_table(rows.slice(0, rows.num_rows - 1), mixes["mix-a"])
    changed = atlas(NAMES, data=_data(mixes), cache=cache, pool="none")
    assert sorted(changed.recomputed) == [("mix-a", b) for b in ("cve-bench", "cybergym", "pr-bench")]
    assert [(n, b) for n, b, _ in scans] == [("mix-a", ["cybergym", "cve-bench", "pr-bench"])]

    scans.clear()
    with mixes["pr-bench"].open("a", encoding="utf-8") as rows_file:
        rows_file.write(json.dumps({"task": "psf__requests-2317"}) + "\n")
    bench_changed = atlas(NAMES, data=_data(mixes), cache=cache, pool="none")
    assert sorted(bench_changed.recomputed) == sorted(
        [(t, "pr-bench") for t in (*TRAINS, "mix-held", "cybergym", "cve-bench")]
        + [("pr-bench", "cybergym"), ("pr-bench", "cve-bench")])
    assert sorted((n, tuple(b)) for n, b, _ in scans) == [(t, ("pr-bench",)) for t in TRAINS]


def test_a_training_set_whose_counts_are_lost_is_read_again_and_its_cells_still_come_from_the_cache(
        mixes, scans, tmp_path):
    cache = tmp_path / "cache"
    first = atlas(NAMES, data=_data(mixes), cache=cache, pool="none")
    for side in (cache / "sides").iterdir():
        side.unlink()
    scans.clear()
    again = atlas(NAMES, data=_data(mixes), cache=cache, pool="none")
    assert sorted(n for n, _, _ in scans) == sorted(TRAINS)  # its counts decide its cells' keys
    assert again.recomputed == [] and again.cells == first.cells


def test_the_streamed_key_scans_run_on_the_engine_asked_for(mixes, scans, tmp_path):
    """`--engine ray` runs the streamed training sets' key scans on Ray Data, with the local cells; with nothing
    that runs on an engine (no text check, no streamed scan) it is refused, not ignored."""
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'overlap[ray]')")
    names = ["mix-a", "mix-d", "cybergym", "cve-bench", "pr-bench"]  # the Ray key scan reads parquet
    local = atlas(names, data=_data(mixes), cache=tmp_path / "local", pool="none")
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        scans.clear()
        on_ray = atlas(names, data=_data(mixes), cache=tmp_path / "ray", pool="none", engine="ray", workers=1)
    finally:
        ray.shutdown()
    assert sorted(n for n, _, _ in scans) == ["mix-a", "mix-d"] and on_ray.cells == local.cells
    with pytest.raises(InputError, match="engine 'ray': nothing in this atlas runs on it"):
        atlas(["mix-held", "cybergym"], data=_data(mixes), cache=tmp_path / "c", pool="none", engine="ray")
    with pytest.raises(InputError, match="engine 'spark'"):
        atlas(["mix-a", "cybergym"], data=_data(mixes), cache=tmp_path / "c", pool="none", engine="spark")


def test_the_cli_says_how_each_set_read_in_the_run_had_its_ids_read(mixes, tmp_path):
    """As compare says it: one stderr line per dataset read by its columns (streamed or held), none for a
    registered set (its ids are known) or for one whose cells all came from the cache."""
    args = ["atlas", "mix-a", "mix-held", "cybergym", "cve-bench", "--pool", "none", "--cache", str(tmp_path / "c"),
            "-d", f"cybergym={mixes['cybergym']}", "-d", f"arvo={mixes['arvo']}"]
    first = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "a1")])
    assert first.exit_code == 0, first.output
    said = [line for line in first.stderr.splitlines() if "ids read as" in line]
    assert [line.split(":")[1].strip() for line in said] == ["mix-a", "mix-held", "cve-bench"], said
    assert all("ossfuzz" in line for line in said[:2])
    again = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "a2")])
    assert again.exit_code == 0 and "ids read as" not in again.stderr
