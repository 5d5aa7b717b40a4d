"""The layout of ``overlap/audit`` (see its ``__init__``): no import cycle between its modules, each layer
importing only the layers below it, and nothing of ``overlap`` but ``overlap.errors``, ``overlap.words`` (counts
in words), ``overlap.resources`` (the shipped mappings) and the version."""

from __future__ import annotations

import pytest

grimp = pytest.importorskip("grimp")

# top to bottom; a module may import its own layer's modules and any layer below
LAYERS = (("study",), ("run", "report", "network"), ("checks", "package_meta", "arguments"),
          ("context", "index", "discovery"), ("source", "grading"), ("content", "image", "listing"),
          ("git", "targets"), ("zstd_input",), ("tree", "model", "scratch", "catalog", "wording", "tar_headers"))
RANK = {part: i for i, parts in enumerate(LAYERS) for part in parts}


@pytest.fixture(scope="module")
def graph():
    return grimp.build_graph("overlap", cache_dir=None)


def _audit_modules(graph) -> list[str]:
    return sorted(m for m in graph.modules if m.startswith("overlap.audit."))


def _part(module: str) -> str:
    return module.split(".")[2]


def test_no_import_cycle_inside_audit(graph):
    cycles = [f"{a} <-> {b}" for a in _audit_modules(graph) for b in graph.find_modules_directly_imported_by(a)
              if b.startswith("overlap.audit.") and a != b and graph.chain_exists(importer=b, imported=a)]
    assert not cycles


def test_every_module_sits_in_a_layer(graph):
    assert {_part(m) for m in _audit_modules(graph)} == set(RANK)


def test_layers_import_only_downwards(graph):
    upward = [f"{a} -> {b}" for a in _audit_modules(graph) for b in graph.find_modules_directly_imported_by(a)
              if b.startswith("overlap.audit.") and _part(a) != _part(b) and RANK[_part(b)] <= RANK[_part(a)]]
    assert not upward


def test_audit_imports_only_the_floor_from_overlap(graph):
    outside = {b for a in [*_audit_modules(graph), "overlap.audit"] for b in graph.find_modules_directly_imported_by(a)
               if b.startswith("overlap") and not b.startswith("overlap.audit")}
    # overlap.resources: where the shipped mappings sit (the network route's repository -> package table)
    assert outside <= {"overlap", "overlap.errors", "overlap.words", "overlap.reach", "overlap.resources"}
