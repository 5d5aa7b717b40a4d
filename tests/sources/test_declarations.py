"""Datasets as data: every built-in dataset is a TOML declaration; a user's declaration file (`--registry`) or
an installed package's entry point (`overlap.datasets`) adds a benchmark without code; `overlap datasets
--show NAME` prints a declaration that reads back as the same dataset."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from overlap.api import compare, filter_train
from overlap.api.demo import DEMO_ROOT
from overlap.errors import InputError
from overlap.sources.registry import registry
from overlap.sources.spec import declaration_text, read_declaration

ROOT = Path(__file__).resolve().parents[2]
DECLARATIONS = ROOT / "overlap" / "sources" / "registry" / "declarations"


@pytest.fixture
def clean_registry():
    """The registry is process-wide: each test's user declarations are removed after it."""
    registry._load_builtin()
    saved = dict(registry._REGISTRY), dict(registry._ALIASES)
    yield registry
    registry._REGISTRY.clear()
    registry._REGISTRY.update(saved[0])
    registry._ALIASES.clear()
    registry._ALIASES.update(saved[1])


def demo_bench_rows(tmp_path: Path) -> Path:
    """The demo CyberGym tasks as a user's own JSONL with other column names."""
    tasks = json.loads((DEMO_ROOT / "cybergym" / "tasks.json").read_text())
    path = tmp_path / "my-tasks.jsonl"
    path.write_text("".join(json.dumps({"task": t["task_id"], "about": t.get("vulnerability_description", "")})
                            + "\n" for t in tasks))
    return path


def test_every_builtin_is_a_declaration_file_and_reads_back_from_its_shown_text(clean_registry):
    names = {p.stem for p in DECLARATIONS.glob("*.toml")}
    specs = {s.name: s for s in registry.all_specs()}
    assert names == set(specs), "each built-in dataset is one file in overlap/sources/registry/declarations/"
    for spec in specs.values():
        again = read_declaration(declaration_text(spec), spec.origin)
        assert again == spec


def test_a_declaration_made_in_python_is_shown_as_toml_that_reads_back(clean_registry):
    spec = read_declaration('name = "x"\npath = "rows.jsonl"\n[columns]\nid = "task"\n', "x.toml")
    shown = declaration_text(spec.__class__(**{**spec.__dict__, "declaration": ""}))
    assert read_declaration(shown, "x.toml") == spec


def test_a_user_declaration_adds_a_benchmark_without_code(clean_registry, tmp_path):
    rows = demo_bench_rows(tmp_path)
    declaration = tmp_path / "mine.toml"
    declaration.write_text(f'name = "my-cyber"\npath = "{rows.name}"\n\n[columns]\nid = "task"\ntext = "about"\n')
    (spec,) = registry.add_declarations([declaration])
    assert spec.adapter == "columns" and Path(spec.path) == rows  # relative to the declaration's folder

    data = {name: DEMO_ROOT / name for name in ("mimo-cyber", "cybergym", "arvo")}
    mine = compare("mimo-cyber", ["my-cyber"], data=data, pool=None, evidence=False)
    registered = compare("mimo-cyber", ["cybergym"], data=data, pool=None, evidence=False)
    pairs = sorted(zip(mine.pairs["train_id"], mine.pairs["bench_id"], strict=True))
    assert pairs and pairs == sorted(zip(registered.pairs["train_id"], registered.pairs["bench_id"], strict=True))
    assert mine.benches[0].name == "my-cyber"


def _filtered_beside_registered(tmp_path: Path, name: str, place) -> tuple:
    """(filter result, written split) of the mimo-cyber rows declared as `name` at `place` by their id column,
    and the registered mimo-cyber's filter result, each against the demo CyberGym."""
    (tmp_path / "mine.toml").write_text(f'name = "{name}"\npath = "{place}"\n'
                                        '[columns]\nid = "extra_info.instance_id"\n')
    registry.add_declarations([tmp_path / "mine.toml"])
    data = {n: DEMO_ROOT / n for n in ("cybergym", "arvo")}
    _, filtered, written = filter_train(name, ["cybergym"], tmp_path / "out", data=data)
    registered = filter_train("mimo-cyber", ["cybergym"], tmp_path / "reg",
                              data={**data, "mimo-cyber": DEMO_ROOT / "mimo-cyber"})[1]
    return filtered, written, registered


def test_a_declared_dataset_is_filtered_and_its_split_verified(clean_registry, tmp_path):
    """The kept split of a [columns] dataset is read back through its declaration and matches nothing."""
    filtered, written, registered = _filtered_beside_registered(tmp_path, "my-mimo",
                                                                DEMO_ROOT / "mimo-cyber" / "cyber.parquet")
    assert written.verification["rows_matching"] == 0
    assert filtered.summary()["kept_rows"] == registered.summary()["kept_rows"] > 0


@pytest.mark.parametrize("relative", [True, False])
def test_a_declared_glob_path_reads_and_filters_the_files_it_matches(clean_registry, tmp_path, relative):
    """`path = "shards/*.parquet"` (the documented example), relative to the declaration or absolute: every
    file it matches is read, and the filtered split is written and read back (an absolute glob's files are
    named by absolute paths)."""
    import pyarrow.parquet as pq

    rows = pq.read_table(DEMO_ROOT / "mimo-cyber" / "cyber.parquet")
    (tmp_path / "shards").mkdir()
    half = rows.num_rows // 2
    pq.write_table(rows.slice(0, half), tmp_path / "shards" / "a.parquet")
    pq.write_table(rows.slice(half), tmp_path / "shards" / "b.parquet")
    place = "shards/*.parquet" if relative else f"{tmp_path}/shards/*.parquet"
    filtered, written, whole = _filtered_beside_registered(tmp_path, "my-shards", place)
    assert written.verification["rows_matching"] == 0
    assert filtered.summary()["kept_rows"] == whole.summary()["kept_rows"] > 0
    assert filtered.summary()["removed_rows"] == whole.summary()["removed_rows"]
    assert len(list((tmp_path / "out" / "data").rglob("*.parquet"))) == 2


def test_a_taken_name_is_refused_naming_both_files(clean_registry, tmp_path):
    declaration = tmp_path / "clash.toml"
    declaration.write_text('name = "cybergym"\npath = "x.jsonl"\n[columns]\nid = "task"\n')
    with pytest.raises(InputError, match=r"clash\.toml.*cybergym.*cybergym\.toml"):
        registry.add_declarations([declaration])


@pytest.mark.parametrize("text, message", [
    ('name = "a"\n[columns]\nid = "task"\n', "repo"),
    ('name = "a"\npath = "x"\n[columns]\nrepo = "r"\n', "id"),
    ('name = "a"\npath = "x"\n[columns]\nid = "t"\ncolour = "c"\n', "colour"),
    ('name = "a"\npath = "x"\nflavour = 1\n[columns]\nid = "t"\n', "flavour"),
    ('name = "a" path', "TOML"),
    pytest.param("a = " + "[" * 5000 + "]" * 5000 + "\n", "not valid TOML here .values nested too deep",
                 id="nested-5000-deep"),  # Python's TOML reader raises RecursionError
    ('name = "a b"\npath = "x"\n[columns]\nid = "t"\n', "dataset name"),
    ('name = "../up"\npath = "x"\n[columns]\nid = "t"\n', "dataset name"),
    ('name = "a"\npath = "x"\n[columns]\nid = "t"\nscheme = "oss-fuzz"\n', "scheme 'oss-fuzz'; use one of ossfuzz"),
    # an empty value is refused, not read as none given (`revision = ""` was read as the main branch)
    ('name = "a"\npath = "x"\nrevision = ""\n[columns]\nid = "t"\n', "revision is empty"),
    ('name = "a"\npath = " "\n[columns]\nid = "t"\n', "path is empty"),
    ('name = "a"\npath = "x"\n[columns]\nid = ""\n', "columns.id is empty; name its column$"),
    ('name = "a"\npath = "x"\n[columns]\nid = "t"\nrepo = " "\n', "columns.repo is empty"),
])
def test_a_bad_declaration_is_one_clear_error(clean_registry, tmp_path, text, message):
    declaration = tmp_path / "bad.toml"
    declaration.write_text(text)
    with pytest.raises(InputError, match=message) as error:
        registry.add_declarations([declaration])
    assert str(declaration) in str(error.value)


def test_a_declaration_saved_with_a_byte_order_mark_reads_as_without(clean_registry, tmp_path):
    declaration = tmp_path / "bom.toml"
    declaration.write_bytes(b"\xef\xbb\xbf" + b'name = "mine"\npath = "x.jsonl"\n[columns]\nid = "task"\n')
    (spec,) = registry.add_declarations([declaration])
    assert spec.name == "mine" and spec.columns == {"id": "task"} and not spec.declaration.startswith("\ufeff")


def test_unreadable_declarations_and_empty_folders_are_one_clear_error(clean_registry, tmp_path):
    (tmp_path / "binary.toml").write_bytes(b"\xff\xfe\x00name")
    with pytest.raises(InputError, match="not a UTF-8 text file"):
        registry.add_declarations([tmp_path / "binary.toml"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="no .toml declaration"):
        registry.add_declarations([tmp_path / "empty"])
    with pytest.raises(InputError, match="no such declaration file"):
        registry.add_declarations([tmp_path / "missing.toml"])


def test_a_declared_path_that_does_not_exist_names_the_declaration(clean_registry, tmp_path):
    declaration = tmp_path / "gone.toml"
    declaration.write_text('name = "gone"\npath = "nothere.jsonl"\n[columns]\nid = "t"\n')
    registry.add_declarations([declaration])
    with pytest.raises(InputError, match=r"gone\.toml: path .*nothere\.jsonl does not exist"):
        compare("gone", ["cybergym"], data={"cybergym": DEMO_ROOT / "cybergym"}, pool=None, evidence=False)


def test_several_declarations_in_one_file_and_a_folder_of_files(clean_registry, tmp_path):
    (tmp_path / "a.toml").write_text('[[dataset]]\nname = "one"\npath = "1.jsonl"\n[dataset.columns]\nid = "i"\n'
                                     '[[dataset]]\nname = "two"\npath = "2.jsonl"\n[dataset.columns]\nid = "i"\n')
    (tmp_path / "b.toml").write_text('name = "three"\nrepo = "me/three"\n[columns]\nid = "i"\n')
    added = registry.add_declarations([tmp_path])
    assert [s.name for s in added] == ["one", "two", "three"]
    assert registry.get_spec("me/three").name == "three"  # the Hub id is an alias


class _EntryPoint:
    def __init__(self, name, value, loaded):
        self.name, self.value, self._loaded = name, value, loaded

    def load(self):
        if isinstance(self._loaded, Exception):
            raise self._loaded
        return self._loaded


def test_entry_points_declare_datasets(clean_registry, tmp_path, monkeypatch):
    toml = tmp_path / "plugin.toml"
    toml.write_text('name = "from-file"\nrepo = "org/file"\n[columns]\nid = "id"\n')
    points = [_EntryPoint("by-path", "pkg:PATH", str(toml)),
              _EntryPoint("by-dict", "pkg:TABLE", {"name": "from-dict", "repo": "org/dict", "columns": {"id": "id"}}),
              _EntryPoint("by-function", "pkg:declare",
                          lambda: [{"name": "from-function", "path": "x.parquet", "columns": {"id": "id"}}])]
    monkeypatch.setattr(registry, "entry_points", lambda group: points if group == "overlap.datasets" else [])
    monkeypatch.setattr(registry, "_BUILTIN_READ", [])
    names = {s.name for s in registry.all_specs()}
    assert {"from-file", "from-dict", "from-function", "cybergym"} <= names


def test_a_broken_entry_point_names_itself(clean_registry, monkeypatch):
    points = [_EntryPoint("broken", "pkg.mod:THING", ImportError("No module named 'pkg'"))]
    monkeypatch.setattr(registry, "entry_points", lambda group: points)
    monkeypatch.setattr(registry, "_BUILTIN_READ", [])
    with pytest.raises(InputError, match=r"entry point broken = pkg\.mod:THING.*No module named"):
        registry.all_specs()


def run_cli(*args, cwd):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "NO_COLOR": "1", "COLUMNS": "120"}
    return subprocess.run([sys.executable, "-m", "overlap.cli", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)


def test_cli_registry_and_show(tmp_path):
    rows = demo_bench_rows(tmp_path)
    (tmp_path / "mine.toml").write_text(f'name = "my-cyber"\npath = "{rows.name}"\n[columns]\nid = "task"\n')
    shown = run_cli("datasets", "--registry", "mine.toml", "--show", "my-cyber", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout == (tmp_path / "mine.toml").read_text()
    listed = run_cli("datasets", "--registry", "mine.toml", "--format", "json", cwd=tmp_path)
    assert "my-cyber" in {row["name"] for row in json.loads(listed.stdout)}
    demo = [f"--data={name}={DEMO_ROOT / name}" for name in ("mimo-cyber", "arvo")]
    done = run_cli("compare", "mimo-cyber", "my-cyber", "--registry", "mine.toml", *demo, "--no-report",
                   "--pool", "none", "--no-evidence", "--format", "json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["benches"][0]["bench_items_matched"] > 0
    missing = run_cli("datasets", "--registry", "nope.toml", cwd=tmp_path)
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1 and "nope.toml" in missing.stderr
    unknown = run_cli("datasets", "--show", "no-such-set", cwd=tmp_path)
    assert unknown.returncode == 2 and "known datasets: " in unknown.stderr


def test_a_bare_folder_is_not_taken_for_a_declared_columns_dataset(clean_registry, tmp_path):
    """A [columns] declaration lists no files, so every folder "had" them all: a folder of other rows was
    read as the first such declaration, silently. It is now not laid out like any dataset, as before."""
    rows = demo_bench_rows(tmp_path)
    (tmp_path / "mine.toml").write_text(f'name = "my-cyber"\npath = "{rows.name}"\n[columns]\nid = "task"\n')
    registry.add_declarations([tmp_path / "mine.toml"])
    other = tmp_path / "other"
    other.mkdir()
    (other / "rows.jsonl").write_text('{"task": "arvo:1"}\n')
    with pytest.raises(InputError, match="not laid out like any registered dataset"):
        compare(str(other), ["my-cyber"], pool=None, evidence=False)


def test_a_declared_text_column_is_the_datasets_default_text(clean_registry, tmp_path):
    """`text = "about"` in a [columns] declaration is the text its evidence reads by default (it was ignored
    unless named again with --text, so text evidence said the dataset had no text field)."""
    from overlap.sources.load import load_dataset
    from overlap.text.attach import default_field

    rows = demo_bench_rows(tmp_path)
    (tmp_path / "mine.toml").write_text(f'name = "my-cyber"\npath = "{rows.name}"\n[columns]\nid = "task"\n'
                                        'text = "about"\n')
    registry.add_declarations([tmp_path / "mine.toml"])
    assert default_field(load_dataset("my-cyber")) == "text_about"


def test_data_may_be_a_glob_for_a_dataset_read_by_its_columns(clean_registry, tmp_path):
    """`-d NAME='shards/*.jsonl'` reads the files the pattern matches (a declared `path` may be one already);
    a registered layout wants its folder, and a pattern that matches nothing says so."""
    from overlap.sources.load import parse_data_options

    rows = demo_bench_rows(tmp_path)
    (tmp_path / "mine.toml").write_text(f'name = "my-cyber"\npath = "{rows.name}"\n[columns]\nid = "task"\n')
    registry.add_declarations([tmp_path / "mine.toml"])
    shards = tmp_path / "shards"
    shards.mkdir()
    (shards / "a.jsonl").write_text(rows.read_text())
    pattern = f"{shards}/*.jsonl"
    mine = compare("mimo-cyber", ["my-cyber"], data={**{n: DEMO_ROOT / n for n in ("mimo-cyber", "arvo")},
                                                     **parse_data_options([f"my-cyber={pattern}"])},
                   pool=None, evidence=False)
    assert mine.summary()["benches"][0]["bench_items"] > 0
    with pytest.raises(InputError, match="no file matches"):
        parse_data_options([f"my-cyber={shards}/*.csv"])
    with pytest.raises(InputError, match="read from its folder"):
        parse_data_options([f"cybergym={shards}/*.json"])
