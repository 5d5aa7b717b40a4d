import json

import pytest
from outputs_helpers import attach_test_baselines

from overlap.errors import InputError, OverlapError
from overlap.outputs.report.result_view import view_of
from overlap.outputs.ship.cards import (
    begin_marker,
    bench_record,
    card_update,
    end_marker,
    push_card,
    render_section,
    update_card_text,
    validate_record,
)

CARD = "---\nlicense: mit\n---\n# MiMo RL data\n\nRows for RL.\n"


@pytest.fixture
def view(demo_result):
    return view_of(demo_result)


def test_section_is_appended_once_and_replaced_on_rerun(view):
    first = card_update(view, CARD).files["README.md"]
    assert first.startswith(CARD) and first.count(begin_marker("cybergym")) == 1
    assert "**7 of 10 cybergym tasks (70.0%)**" in first
    assert "[.overlap/cybergym.json](.overlap/cybergym.json)" in first
    second = card_update(view, first).files["README.md"]
    assert second.encode() == first.encode()
    # Text the user wrote after the section survives a re-run untouched.
    edited = first + "\n## Citation\n\nPlease cite.\n"
    assert card_update(view, edited).files["README.md"] == edited


def test_section_is_replaced_in_place_with_new_numbers(view, demo_result):
    old = CARD + "\n" + begin_marker("cybergym") + "\nold numbers\n" + end_marker("cybergym") + "\n\n## After\n"
    new = card_update(view, old).files["README.md"]
    assert "old numbers" not in new and new.endswith("\n## After\n") and new.startswith(CARD)
    assert new.count(end_marker("cybergym")) == 1


@pytest.mark.parametrize(("text", "message"), [
    (CARD + begin_marker("cybergym") + "\n", "1 begin, 0 end"),
    (CARD + end_marker("cybergym") + "\n", "0 begin, 1 end"),
    (CARD + (begin_marker("cybergym") + "\nx\n" + end_marker("cybergym") + "\n") * 2, "2 begin, 2 end"),
    (CARD + end_marker("cybergym") + "\n" + begin_marker("cybergym") + "\n", "comes before its begin"),
    (CARD + begin_marker("cybergym") + "\n" + begin_marker("sec-bench") + "\n" + end_marker("cybergym"),
     "contains markers of 'sec-bench'"),
])
def test_broken_markers_are_refused(view, text, message):
    with pytest.raises(InputError, match=message):
        update_card_text(text, "cybergym", render_section(view, "cybergym"), "README.md")


def test_other_benches_sections_are_left_alone(view):
    other = begin_marker("sec-bench") + "\nkept\n" + end_marker("sec-bench") + "\n"
    out = card_update(view, CARD + "\n" + other).files["README.md"]
    assert other in out and out.index(other) < out.index(begin_marker("cybergym"))


def test_record_validates_against_its_schema(view, demo_result):
    record = bench_record(view, "cybergym")
    validate_record(record)
    assert record["schema_version"] == 1
    assert len(record["pairs"]) == 8 and record["counts"]["bench_items_matched"] == 7
    assert record["bench_ids"] == sorted(set(demo_result.benches[0].pairs["bench_id"]))
    translated = [p for p in record["pairs"] if p["match_type"] == "translated"][0]
    assert translated["kinds"] == ["ossfuzz"] and translated["train_raw"] != translated["bench_raw"]
    import jsonschema

    broken = json.loads(json.dumps(record))
    broken["pairs"][0]["match_type"] = "fuzzy"
    with pytest.raises(jsonschema.ValidationError):
        validate_record(broken)


def test_baselines_and_evidence_reach_the_card_and_record(demo_result):
    block = attach_test_baselines(demo_result)["cybergym"]
    demo_result.benches[0].pairs["crash_grade"] = ["same", "same", "same", "different", "", "same", "same", "same"]
    view = view_of(demo_result)
    section = render_section(view, "cybergym")
    uniform, within = block["uniform"], block["stratified"]
    assert f"Chance baseline: {uniform['observed']} shared bugs are in the reference pool" in section
    assert f"{uniform['expected']:,.4g} (uniform; 95% range {uniform['expected_interval'][0]}–" in section
    assert f" or {within['expected']:,.4g} (within project; " in section
    record = bench_record(view, "cybergym")
    validate_record(record)
    assert record["baselines"] == {"status": "ran", **json.loads(json.dumps(block))}
    assert record["pairs"][0]["evidence"] == {"crash_grade": "same", "pair_kind": "same_ossfuzz", "counted": True}
    assert {k: v for k, v in record["pairs"][4]["evidence"].items() if k not in ("pair_kind", "counted")} == {}


def test_push_is_one_pr_commit_with_both_files(view, fake_api):
    update = card_update(view, CARD)
    url = push_card(update, "XiaomiMiMo/MiMo-V2.6-RL-oss", api=fake_api)
    assert url.endswith("/discussions/1")
    (commit,) = fake_api.commits
    assert commit["create_pr"] is True and commit["repo_type"] == "dataset"
    assert [op.path_in_repo for op in commit["operations"]] == ["README.md", ".overlap/cybergym.json"]
    assert "Provenance:" in commit["commit_description"]
    assert "sunblaze-ucb/cybergym" in commit["commit_description"]


def test_push_without_token_sends_nothing(view, monkeypatch):
    from outputs_helpers import FakeHfApi

    monkeypatch.setattr("huggingface_hub.get_token", lambda: None)
    api = FakeHfApi(token=None)
    with pytest.raises(OverlapError, match="no Hugging Face token"):
        push_card(card_update(view, CARD), "me/data", api=api)
    assert api.commits == []


def test_a_benchmark_asked_twice_is_written_once(view):
    once = card_update(view, CARD, ["cybergym"])
    twice = card_update(view, CARD, ["cybergym", "cybergym"])
    assert twice.files == once.files and twice.benches == ["cybergym"]
