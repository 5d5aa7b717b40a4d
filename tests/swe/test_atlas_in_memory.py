"""`atlas` with in-memory datasets beside registered names: every form gives the cells the same rows give as a
declared file (the names aside), its role comes from `overlap.named`, held forms are cached by their content
(a re-run joins nothing; changed rows are joined again) and streams are never cached."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest
from sources.in_memory_forms import FORMS, build, quiet_datasets

import overlap
from overlap.api.atlas import atlas
from overlap.errors import InputError
from overlap.sources.registry import registry

DEMO = Path(__file__).resolve().parents[2] / "data" / "demo"
TRAIN_IDS = ["arvo:10055", "CVE-2021-1234", "https://github.com/foo/bar/pull/12", "arvo:10055", None, "junk id",
             "oss-fuzz:42471002", "cve-2020-0001"]
BENCH_IDS = ["arvo:10055", "cve-2021-1234", "foo/bar#12", "oss-fuzz:42471002", "cve-1999-0001"]
STREAMS = ("datasets.IterableDataset", "pyarrow.RecordBatchReader", "pyarrow.dataset.Dataset")


def _declare(folder: Path, name: str, role: str, ids: list) -> None:
    (folder / f"{name}-rows").mkdir(parents=True)  # not the name: a folder named like a set is that set
    rows = "".join(json.dumps({"id": i}) + "\n" for i in ids)
    (folder / f"{name}-rows" / "rows.jsonl").write_text(rows, encoding="utf-8")
    declaration = f'name = "{name}"\nrole = "{role}"\npath = "{name}-rows"\n[columns]\nid = "id"\n'
    (folder / f"{name}.toml").write_text(declaration, encoding="utf-8")
    registry.add_declarations([str(folder / f"{name}.toml")])


@pytest.fixture
def sets(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    quiet_datasets()
    _declare(tmp_path, "decl-train", "training", TRAIN_IDS)
    _declare(tmp_path, "decl-bench", "benchmark", BENCH_IDS)
    return tmp_path


def _cells(result) -> dict:
    """(train, bench) → the cell's row without the train's name and revision (what names the inputs)."""
    return {(c["train"], c["bench"]): {k: v for k, v in c.items() if k not in ("train", "train_revision")}
            for c in result.cells}


def _pairs(result, train: str, bench: str) -> list[dict]:
    return sorted((r | {"train": "T"} for r in result.cell_pairs[(train, bench)].to_pylist()),
                  key=lambda r: json.dumps(r, sort_keys=True))


TABLE = pa.table({"id": pa.array(TRAIN_IDS, pa.string()), "n": pa.array(range(len(TRAIN_IDS)), pa.int64())})


@pytest.mark.parametrize("form", FORMS)
def test_every_form_gives_the_cells_of_the_same_rows_as_a_file(sets, form):
    data = {"arvo": DEMO / "arvo"}
    by_file = atlas(["decl-train", "decl-bench"], data=data, cache=sets / "c1", pool="none")
    value, _, split = build(form, TABLE, sets / "forms")
    mem = atlas([overlap.named(value, "mine", split=split), "decl-bench"], id_column="id", data=data,
                cache=sets / "c2", pool="none")
    assert _cells(mem)[("mine", "decl-bench")] == _cells(by_file)[("decl-train", "decl-bench")]
    assert _pairs(mem, "mine", "decl-bench") == _pairs(by_file, "decl-train", "decl-bench")
    assert [e.role for e in mem.entries] == ["benchmark", "training"] or \
        {e.name: e.role for e in mem.entries} == {"decl-bench": "benchmark", "mine": "training"}
    # the counts compare gives of the same value
    compared = overlap.compare(overlap.named(build(form, TABLE, sets / "again")[0], "mine", split=split),
                               "decl-bench", id_column="id", data=data, pool=None, evidence=False, text=[])
    assert _cells(mem)[("mine", "decl-bench")]["bench_items_matched"] == compared.benches[0].items_matched


@pytest.mark.parametrize("form", ["pandas.DataFrame", "datasets.Dataset", "pyarrow.Table", "pyarrow.RecordBatchReader"])
def test_held_forms_are_cached_by_content_streams_never(sets, form):
    data = {"arvo": DEMO / "arvo"}

    def run(table):
        value, _, split = build(form, table, sets / "forms")
        return atlas([overlap.named(value, "mine", split=split), "decl-bench"], id_column="id", data=data,
                     cache=sets / "cache", pool="none")

    first = run(TABLE)
    assert first.recomputed == [("mine", "decl-bench")]
    again = run(TABLE)
    assert again.recomputed == ([("mine", "decl-bench")] if form in STREAMS else [])
    assert _cells(again) == _cells(first)
    fewer = run(TABLE.slice(1))  # arvo:10055 is still on a later row: the same match, other rows
    assert fewer.recomputed == [("mine", "decl-bench")]
    changed = run(TABLE.filter(pa.compute.invert(pa.compute.equal(TABLE["id"], "arvo:10055"))))
    assert changed.recomputed == [("mine", "decl-bench")]
    assert _cells(changed)[("mine", "decl-bench")]["bench_items_matched"] == \
        _cells(first)[("mine", "decl-bench")]["bench_items_matched"] - 1


def test_an_in_memory_benchmark_is_paired_with_the_registered_sets(sets):
    import pandas as pd

    frame = pd.DataFrame({"task": BENCH_IDS})
    result = atlas(["decl-train", overlap.named(frame, "my-bench", role="benchmark")], id_column="task",
                   data={"arvo": DEMO / "arvo"}, cache=sets / "c", pool="none")
    by_file = atlas(["decl-train", "decl-bench"], data={"arvo": DEMO / "arvo"}, cache=sets / "c0", pool="none")
    got = {k: v for k, v in _cells(result)[("decl-train", "my-bench")].items() if k not in ("bench", "bench_revision")}
    want = {k: v for k, v in _cells(by_file)[("decl-train", "decl-bench")].items()
            if k not in ("bench", "bench_revision")}
    assert got == want and got["bench_items"] == len(BENCH_IDS)


def test_refusals_are_one_line(sets):
    import pandas as pd

    frame = pd.DataFrame({"id": TRAIN_IDS})
    with pytest.raises(InputError, match="id column"):
        atlas([frame, "decl-bench"], cache=sets / "c", pool="none")
    with pytest.raises(InputError, match="in-memory dataset"):
        atlas(["decl-train", "decl-bench"], id_column="id", cache=sets / "c", pool="none")
    with pytest.raises(InputError, match="role 'judge'"):
        overlap.named(frame, "x", role="judge")
    with pytest.raises(InputError, match="none of .* is declared a benchmark"):
        atlas([overlap.named(frame, "x"), "decl-train"], id_column="id", cache=sets / "c", pool="none")
    with pytest.raises(InputError, match="named twice"):
        atlas([overlap.named(frame, "decl-bench"), "decl-bench"], id_column="id", cache=sets / "c", pool="none")
    with pytest.raises(InputError, match="engine 'ray'"):
        atlas([frame, "decl-bench"], id_column="id", cache=sets / "c", pool="none", engine="ray")
    assert not (sets / "c").exists() or not any((sets / "c").rglob("*.json"))


# --- generated mixes against a plain oracle -----------------------------------------------------------------
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_NUMBERS = st.integers(10_000, 10_030)
_REPOS = st.sampled_from(["foo/bar", "Foo/Bar", "acme/widget"])
_IDS = st.one_of(
    _NUMBERS.map(lambda n: ("ossfuzz", n, f"arvo:{n}")),
    st.integers(1000, 1010).map(lambda n: ("cve", n, f"CVE-2021-{n}")),
    st.integers(1000, 1010).map(lambda n: ("cve", n, f"cve-2021-{n}")),
    st.tuples(_REPOS, st.integers(1, 6)).map(lambda t: ("pr", (t[0].lower(), t[1]), f"{t[0]}#{t[1]}")),
    st.tuples(_REPOS, st.integers(1, 6)).map(
        lambda t: ("pr", (t[0].lower(), t[1]), f"https://github.com/{t[0]}/pull/{t[1]}")),
    st.sampled_from([None, "", "junk id", "   "]).map(lambda v: (None, None, v)),
)


def _oracle_matched(train: list, bench: list) -> int:
    """Bench items (first row of each distinct id) whose identity some training row has: an ARVO number, a CVE
    up to case, a PR up to its repo's case, written as `owner/name#N` or its URL."""
    have = {(kind, key) for kind, key, _ in train if kind}
    seen, matched = set(), 0
    for kind, key, raw in bench:
        if kind is None or raw in seen:
            continue
        seen.add(raw)
        matched += (kind, key) in have
    return matched


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(train=st.lists(_IDS, min_size=1, max_size=25), bench=st.lists(_IDS, min_size=1, max_size=12))
def test_generated_mixes_match_the_oracle(tmp_path_factory, train, bench):
    import pandas as pd

    folder = tmp_path_factory.mktemp("gen")
    frame = pd.DataFrame({"task": [raw for _, _, raw in train]}, dtype=object)
    bench_frame = pd.DataFrame({"task": [raw for _, _, raw in bench]}, dtype=object)
    if not any(k for k, _, _ in bench):
        return  # a benchmark without one id is refused as such (no items), not this test's promise
    result = atlas([overlap.named(frame, "mix"), overlap.named(bench_frame, "bench", role="benchmark")],
                   id_column="task", cache=folder / "cache", pool="none", data={"arvo": DEMO / "arvo"})
    cell = next(c for c in result.cells if (c["train"], c["bench"]) == ("mix", "bench"))
    assert cell["bench_items_matched"] == _oracle_matched(train, bench)
