"""`import overlap` as a Python user expects: the entry points at package level, loaded on first use (the
import itself loads no pandas, datasets, huggingface_hub or scipy), and result types that say what they hold."""

from __future__ import annotations

import inspect
import subprocess
import sys

import overlap
from overlap.api import CompareResult, FilteredSplit, filter_train
from overlap.api.demo import demo_data

HEAVY = ("pandas", "pyarrow", "datasets", "huggingface_hub", "scipy")


def test_import_overlap_is_cheap():
    code = ("import overlap, sys\n"
            f"heavy = [m for m in sys.modules if m.split('.')[0] in {HEAVY!r}]\n"
            "assert not heavy, heavy\n"
            "assert 'compare' in dir(overlap) and 'overlap.api' not in sys.modules\n")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_entry_points_at_package_level():
    from overlap.api import compare, matrix, text_check
    from overlap.sources.load import load_dataset

    assert overlap.compare is compare and overlap.filter_train is filter_train and overlap.matrix is matrix
    assert overlap.text_check is text_check and overlap.load_dataset is load_dataset
    # `overlap.audit` is the audit package, callable as its function, with the function's options
    assert callable(overlap.audit) and "fix" in inspect.signature(overlap.audit).parameters
    assert overlap.CompareResult is CompareResult and overlap.FilteredSplit is FilteredSplit
    assert set(overlap.__all__) <= set(dir(overlap))
    try:
        overlap.no_such_thing  # noqa: B018
    except AttributeError as exc:
        assert "no_such_thing" in str(exc)
    else:
        raise AssertionError("an unknown name must raise AttributeError")


def test_filter_train_returns_named_fields_that_still_unpack(tmp_path):
    split = filter_train("mimo-cyber", ["cybergym"], tmp_path / "f", data=demo_data(), reasons=("id",))
    assert isinstance(split, FilteredSplit) and split._fields == ("comparison", "decision", "report")
    comparison, decision, report = split  # callers of the 3-tuple keep working
    assert comparison is split.comparison and decision is split.decision and report is split.report
    assert split.out == tmp_path / "f" and report.verification["rows_matching"] == 0
    text = repr(split)
    assert len(text) < 300 and "rows removed" in text and "verified: 0 of" in text


def test_compare_result_documents_its_fields():
    doc = CompareResult.__doc__ or ""
    for name in ("train", "benches", "train_duplicates", "mapping", "mapping_provenance", "parameters",
                 "sections", "pool"):
        assert f"`{name}`" in doc, name


def test_python_dash_m_overlap_is_the_cli():
    done = subprocess.run([sys.executable, "-m", "overlap", "--help"], capture_output=True, text=True, check=True)
    assert "compare" in done.stdout and "filter" in done.stdout
