"""The text check on a lazily loaded training set (SWE-rebench-V2-PRs): texts are streamed by row group,
the first row of a repeated id is the item's text, and pairs get their longest run."""

from swe_fixtures import offline_hub, prs_folder, swe_data  # noqa: F401

from overlap.api import compare
from overlap.sources.load import load_dataset
from overlap.sources.registry.later_columns import iter_lazy_batches


def test_batches_hold_each_item_once_with_its_first_text(prs_folder):  # noqa: F811
    dataset = load_dataset("swe-rebench-v2-prs", {"swe-rebench-v2-prs": prs_folder})
    rows = [r for batch in iter_lazy_batches(dataset, "text_problem_statement") for r in batch.to_pylist()]
    ids = [r["item_id"] for r in rows]
    assert len(ids) == len(set(ids)) == len(dataset.items)
    texts = {r["item_id"]: r["text_problem_statement"] for r in rows}
    assert texts["burntsushi__ripgrep-1367"] == "LLM text ripgrep (first)"
    loaded = dataset.items.get("text_problem_statement")
    assert loaded is None or loaded.isna().all()  # nothing was loaded into memory


def test_compare_runs_the_text_check_on_streamed_texts(swe_data, prs_folder):  # noqa: F811
    data = dict(swe_data, **{"swe-rebench-v2-prs": prs_folder})
    result = compare("swe-rebench-v2-prs", ["swe-bench-multilingual"], data=data, permutations=0)
    text = result.summary()["benches"][0]["text"]
    assert text["train"]["null"] == 0 and text["train"]["items"] == len(result.train.items)
    assert text["runs"]["with_text"] >= 1
