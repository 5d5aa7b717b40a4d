"""`overlap matrix` on generated mixes used as benchmarks (beside the demo CyberGym and benchmarks of our own),
differential against the mix oracle: every cell (items of one benchmark in a counted pair with another) and
every couple's count of counted pairs is the oracle's. The matrix must translate old OSS-Fuzz ids to new ones
and count OSS-Fuzz, CVE and fix-commit pairs as a compare does, not only pull-request pair kinds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from mix_oracle import REPO_ROOT, Columns, Data, counted_pairs, matrix_cells
from mix_strategies import COLUMN_CHOICES, DATA, FORMATS, MixCase, Written, benches, row, train_rows

from overlap.api.matrix import matrix
from overlap.sources.rows.generic import read_generic

SETTINGS = {"deadline": None, "database": None, "derandomize": True,
            "suppress_health_check": [HealthCheck.function_scoped_fixture, HealthCheck.too_slow]}
CYBERGYM = ("cybergym", None, None)


@st.composite
def matrix_cases(draw) -> MixCase:
    """A mix (read as a benchmark) and one to three other benchmarks, all read by the same columns."""
    return MixCase(draw(COLUMN_CHOICES), draw(train_rows(max_size=10)), draw(st.sampled_from(FORMATS)),
                   draw(benches()))


# An old OSS-Fuzz id against CyberGym's new one and a PR beside it; CyberGym holds `oss-fuzz:42471120`, the new id
# of 11873, and `arvo:10055`, whose new id is 42471001.
TRANSLATED = MixCase(Columns(), [row("arvo_11873"), row("oss-fuzz:42471001"), row("https://github.com/Owner/Repo/pull/12")],
                     "jsonl", [CYBERGYM, ("swe", [row("owner__repo-12", "owner/repo", 12)], "jsonl")])
CVE_AND_FIX = MixCase(Columns(), [row("jq.cve-2023-50246"), row("https://github.com/jqlang/jq/commit/" + "b" * 40)],
                      "csv", [("sec", [row("CVE-2023-50246"), row("https://github.com/php/php-src/commit/" + "b" * 40),
                                       row("arvo:10055")], "parquet")])


def _datasets(written: Written, columns: Columns) -> list:
    out = [read_generic(str(written.train_path), columns.options())]
    for arg in written.bench_args:
        out.append(arg if arg == "cybergym" else read_generic(arg, columns.options()))
    return out


def _expected(written: Written) -> tuple[list[Data], dict, dict]:
    datas = [written.train, *written.benches]
    cells = matrix_cells(datas)
    couples = {(a.name, b.name): len(counted_pairs(a, b)) for i, a in enumerate(datas) for b in datas[i + 1:]}
    return datas, cells, couples


@settings(max_examples=15, **SETTINGS)
@example(TRANSLATED)
@example(CVE_AND_FIX)
@given(matrix_cases())
def test_library_matrix_cells_are_the_oracle_counts(tmp_path_factory, case):
    written = case.write(tmp_path_factory.mktemp("matrix"))
    _, cells, couples = _expected(written)
    result = matrix(_datasets(written, case.columns), data=DATA)
    got_cells = {(r["bench"], r["other"]): int(r["bench_items_found"]) for r in result.cells.to_dict("records")}
    got_couples = {(r["a"], r["b"]): int(r["pairs_counted"]) for r in result.couples.to_dict("records")}
    story = f"{case!r}\noracle cells: {cells}\nmatrix cells: {got_cells}\noracle couples: {couples}\n" \
            f"matrix couples: {got_couples}"
    assert got_cells == cells, story
    assert got_couples == couples, story


def declared(name: str) -> str:
    """The name a file of ours is declared under for the CLI (a file name would be read as a path)."""
    return name if name == "cybergym" else "decl-" + name.replace(".", "-")


def _cli_matrix(written: Written, columns: Columns, folder: Path) -> dict:
    """`python -m overlap.cli matrix … --format json`, each of our files declared by its columns (a TOML file
    given with --registry, in a process of its own: declarations are process-wide)."""
    registries = []
    for path in [written.train_path, *(Path(a) for a in written.bench_args if a != "cybergym")]:
        toml = folder / f"{path.stem}.toml"
        lines = [f'name = "{declared(path.name)}"', f'path = "{path.name}"', "[columns]"]
        lines += [f'{key} = "{value}"' for key, value in columns.options().items()]
        toml.write_text("\n".join(lines) + "\n", encoding="utf-8")
        registries += ["--registry", str(toml)]
    names = [declared(d.name) for d in [written.train, *written.benches]]
    data = [a for name, path in DATA.items() for a in ("--data", f"{name}={path}")]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")]))
    args = [sys.executable, "-m", "overlap.cli", "matrix", *names, *registries, *data, "--format", "json"]
    done = subprocess.run(args, capture_output=True, text=True, cwd=folder, env=env, timeout=120)
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    return json.loads(done.stdout)


@settings(max_examples=3, **SETTINGS)
@example(TRANSLATED)
@given(matrix_cases())
def test_cli_matrix_cells_are_the_oracle_counts(tmp_path_factory, case):
    folder = tmp_path_factory.mktemp("matrix")
    written = case.write(folder)
    _, cells, couples = _expected(written)
    cells = {(declared(a), declared(b)): n for (a, b), n in cells.items()}
    couples = {(declared(a), declared(b)): n for (a, b), n in couples.items()}
    summary = _cli_matrix(written, case.columns, folder)
    got_cells = {(c["bench"], c["other"]): c["bench_items_found"] for c in summary["cells"]}
    got_couples = {(c["a"], c["b"]): c["pairs_counted"] for c in summary["couples"]}
    story = f"{case!r}\noracle cells: {cells}\nmatrix cells: {got_cells}\noracle couples: {couples}\n" \
            f"matrix couples: {got_couples}"
    assert got_cells == cells, story
    assert got_couples == couples, story
