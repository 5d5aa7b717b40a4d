"""The filter / card / report commands, registered on a tiny app the way overlap/cli/__init__.py registers them."""

import json

import pandas as pd
import pytest
import typer
from fixtures import data_args
from typer.testing import CliRunner

from overlap.cli import handles_errors
from overlap.cli.card import card
from overlap.cli.filter import filter_cmd
from overlap.cli.report import report
from overlap.outputs.report.result_folders import write_compare_report, write_report_extras
from overlap.outputs.ship import cards, splits

app = typer.Typer()
app.command("filter")(handles_errors(filter_cmd))
app.command("card")(handles_errors(card))
app.command("report")(handles_errors(report))
runner = CliRunner()


def run(*args):
    return runner.invoke(app, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture
def saved(demo_result, tmp_path):
    out = write_compare_report(demo_result, tmp_path / "result")
    write_report_extras(demo_result, out, reports=False)
    return out


def test_filter_writes_the_split_and_prints_counts(demo_copy, tmp_path):
    out = tmp_path / "split"
    result = run("filter", "mimo-cyber", "cybergym", *data_args(demo_copy), "--out", out)
    assert result.exit_code == 0, result.stderr
    assert "rows read: 11  removed: 8  kept: 3 (of which 0 made no item" in result.stdout
    assert "  dup:ossfuzz: 1\n  id:ossfuzz: 8\n" in result.stdout
    assert "verified: 0 of 3 rows match cybergym\n" in result.stdout
    assert f"written to {out}" in result.stderr
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith(".")) == [
        "README.md", "cybergym_clean_ids.txt", "cybergym_contaminated_ids.txt", "data", "filter.json", "removed.csv"]
    assert len(pd.read_parquet(out / "data" / "cyber.parquet")) == 3


def test_filter_drop_option_and_bad_reason(demo_copy, tmp_path):
    result = run("filter", "mimo-cyber", "cybergym", *data_args(demo_copy), "--out", tmp_path / "s", "--drop", "dup")
    assert result.exit_code == 0 and "removed: 1  kept: 10" in result.stdout
    # an ngram reason runs the text check at that n (the demo's texts share no 13- or 7-gram)
    for n in (13, 7):
        ok = run("filter", "mimo-cyber", "cybergym", *data_args(demo_copy), "--out", tmp_path / f"u{n}",
                 "--drop", f"ngram:{n}")
        assert ok.exit_code == 0 and "removed: 0  kept: 11" in ok.stdout
    bad = run("filter", "mimo-cyber", "cybergym", *data_args(demo_copy), "--out", tmp_path / "t", "--drop", "bogus")
    assert bad.exit_code == 2 and "unknown drop reason 'bogus'" in bad.stderr and not (tmp_path / "t").exists()


def test_filter_push_needs_a_token(demo_copy, tmp_path, monkeypatch):
    from outputs_helpers import FakeHfApi

    monkeypatch.setattr("huggingface_hub.get_token", lambda: None)
    monkeypatch.setattr(splits, "_hub_api", lambda token: FakeHfApi(token=None))
    result = run("filter", "mimo-cyber", "cybergym", *data_args(demo_copy), "--out", tmp_path / "s",
                 "--push-to-hub", "me/mimo")
    assert result.exit_code == 2
    assert result.stderr.startswith("overlap: error: no Hugging Face token")
    assert not (tmp_path / "s").exists()  # refused before any work


def test_filter_push_of_files_in_two_formats_is_refused_before_any_work(demo_copy, tmp_path, monkeypatch):
    """The split keeps each file's format and a push publishes one; files of two formats are refused up front
    (no Hub call, nothing written), not after the whole filter has run."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    monkeypatch.setattr(splits, "_hub_api", lambda token: pytest.fail("the Hub was asked"))
    train = tmp_path / "mixed"
    train.mkdir()
    pq.write_table(pa.table({"id": ["arvo:10055"]}), train / "a.parquet")
    (train / "b.json").write_text('[{"id": "arvo:1"}]')
    result = run("filter", train, "cybergym", *data_args(demo_copy), "--id-column", "id", "--out", tmp_path / "s",
                 "--push-to-hub", "me/mimo")
    assert result.exit_code == 2 and "its files mix jsonl and parquet" in result.stderr
    assert not (tmp_path / "s").exists()


def test_filter_push_of_a_hub_set_in_two_formats_is_refused_before_any_work(demo_copy, tmp_path, monkeypatch):
    """The same for a Hub dataset: its files are listed (here from the Hub cache, offline) before the filter."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from test_sources import _fake_hub_cache

    monkeypatch.setattr(splits, "_hub_api", lambda token: pytest.fail("the Hub was asked"))
    parquet, jsonl = tmp_path / "a.parquet", tmp_path / "b.jsonl"
    pq.write_table(pa.table({"id": ["arvo:10055"]}), parquet)
    jsonl.write_text('{"id": "arvo:1"}\n')
    _fake_hub_cache(tmp_path / "hub", "me/mixed", "c" * 40, {"data/a.parquet": parquet, "data/b.jsonl": jsonl})
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    result = run("filter", "me/mixed", "cybergym", *data_args(demo_copy), "--id-column", "id", "--out",
                 tmp_path / "s", "--push-to-hub", "me/mimo")
    assert result.exit_code == 2 and "its files mix jsonl and parquet" in result.stderr
    assert not (tmp_path / "s").exists()


def test_filter_push_prints_the_pr_url(demo_copy, tmp_path, monkeypatch, fake_api):
    pushed = []
    monkeypatch.setattr(splits, "_hub_api", lambda token: fake_api)
    monkeypatch.setattr(splits, "_push_with_datasets",
                        lambda table, repo, config, token, desc: pushed.append(config) or "https://hf.test/pr/7")
    result = run("filter", "mimo-cyber", "cybergym", *data_args(demo_copy), "--out", tmp_path / "s",
                 "--push-to-hub", "me/mimo")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.endswith("pull request: https://hf.test/pr/7\n") and pushed == ["minus-cybergym"]


def test_card_writes_locally_and_is_idempotent(saved, tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("# MiMo\n")
    first = run("card", saved, "--card", readme, "--out", tmp_path / "c1")
    assert first.exit_code == 0, first.stderr
    assert first.stdout.splitlines() == [str(tmp_path / "c1" / "README.md"),
                                         str(tmp_path / "c1" / ".overlap" / "cybergym.json")]
    assert readme.read_text() == "# MiMo\n"  # the input card is never modified
    second = run("card", saved, "--card", tmp_path / "c1" / "README.md", "--out", tmp_path / "c2")
    assert second.exit_code == 0
    for name in ("README.md", ".overlap/cybergym.json"):
        assert (tmp_path / "c1" / name).read_bytes() == (tmp_path / "c2" / name).read_bytes()
    assert json.loads((tmp_path / "c1" / ".overlap" / "cybergym.json").read_text())["schema_version"] == 1


def test_card_refuses_broken_markers(saved, tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("# MiMo\n<!-- overlap:begin cybergym -->\nhalf a section\n")
    result = run("card", saved, "--card", readme, "--out", tmp_path / "c")
    assert result.exit_code == 2
    assert "broken overlap markers for 'cybergym' (1 begin, 0 end)" in result.stderr
    assert not (tmp_path / "c").exists()


def test_card_push_prints_pr_url(saved, tmp_path, monkeypatch, fake_api):
    monkeypatch.setattr(cards, "_hub_api", lambda token: fake_api)
    readme = tmp_path / "README.md"
    readme.write_text("# MiMo\n")
    result = run("card", saved, "--card", readme, "--push")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "https://huggingface.co/datasets/XiaomiMiMo/MiMo-V2.6-RL-oss/discussions/1\n"
    assert not (saved / "card").exists() and len(fake_api.commits) == 1


def test_card_with_a_missing_local_card_says_so_and_never_pushes_it(saved, tmp_path, monkeypatch, fake_api):
    """A --card path that does not exist starts an empty card, said on stderr; pushed, it would replace the Hub
    card with the overlap section alone, so --push refuses it (a typo must not become a pull request)."""
    monkeypatch.setattr(cards, "_hub_api", lambda token: fake_api)
    missing = tmp_path / "READNE.md"
    pushed = run("card", saved, "--card", missing, "--push")
    assert pushed.exit_code == 2 and f"--card {missing}: no such file" in pushed.stderr
    assert fake_api.commits == []
    written = run("card", saved, "--card", missing, "--out", tmp_path / "c")
    assert written.exit_code == 0 and f"{missing} does not exist: the card starts empty" in written.stderr


def test_report_command(saved):
    result = run("report", saved)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines() == [str(saved / "report.md"), str(saved / "report.html")]
    assert "Matched pairs, side by side" in (saved / "report.md").read_text()


def test_report_on_a_folder_without_summary(tmp_path):
    result = run("report", tmp_path)
    assert result.exit_code == 2 and "no summary.json" in result.stderr


def test_card_from_the_hub_offline_says_what_to_do(saved):
    result = run("card", saved)  # no --card: the training set's Hub card, but tests are offline
    assert result.exit_code == 2
    assert "XiaomiMiMo/MiMo-V2.6-RL-oss: cannot load its dataset card" in result.stderr
    assert "--card" in result.stderr


def test_everything_renders_when_nothing_overlaps(tmp_path):
    from fixtures import write_all

    from overlap.api import compare

    paths = write_all(tmp_path / "data")
    result = compare("sec-bench:cve", ["cybergym"], data=paths)  # CVE keys vs OSS-Fuzz keys: no pair
    out = write_compare_report(result, tmp_path / "result")
    write_report_extras(result, out, reports=False)
    assert run("report", out).exit_code == 0
    assert "0 of 7 cybergym items (0.0%)" in (out / "report.md").read_text()
    (tmp_path / "README.md").write_text("")
    assert run("card", out, "--card", tmp_path / "README.md").exit_code == 0
    record = json.loads((out / "card" / ".overlap" / "cybergym.json").read_text())
    assert record["pairs"] == [] and record["counts"]["bench_items_matched"] == 0
    filtered = run("filter", "sec-bench:cve", "cybergym", *data_args(paths), "--out", tmp_path / "split")
    assert "rows read: 2  removed: 0  kept: 2" in filtered.stdout
