"""Text evidence wired into compare and the `overlap ngram` command, on hand-made fixtures."""

import json

import pytest
from fixtures import data_args, write_cybergym, write_mapping, write_mimo
from typer.testing import CliRunner

from overlap.api import compare
from overlap.cli import app
from overlap.errors import InputError
from overlap.text.attach import parse_text_options

SPAN = ("the parser reads one byte past the end of the attribute buffer when the closing quote is missing "
        "from the input")


def _copied_text_data(tmp_path):
    """One bench description copied into a training prompt (must flag at 13), one not."""
    mimo = write_mimo(tmp_path / "mimo", ids=["arvo_10288", "arvo_19999"])
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.read_table(mimo / "cyber.parquet").to_pylist()
    table[1]["prompt"] = [{"role": "user", "content": "Crash report. " + SPAN + ". Fix it."}]
    pq.write_table(pa.Table.from_pylist(table), mimo / "cyber.parquet")
    cg = write_cybergym(tmp_path / "cg", tasks=[("arvo:10288", "libxml2"), ("arvo:17777", "lcms")])
    tasks = json.loads((cg / "tasks.json").read_text())
    tasks[1]["vulnerability_description"] = "In lcms " + SPAN + " and corrupts the heap."
    (cg / "tasks.json").write_text(json.dumps(tasks))
    return {"mimo-cyber": mimo, "cybergym": cg, "arvo": write_mapping(tmp_path / "arvo")}


def test_default_fields_flag_a_copied_span_outside_the_id_pairs(tmp_path):
    result = compare("mimo-cyber", ["cybergym"], data=_copied_text_data(tmp_path), permutations=0)
    text = result.summary()["benches"][0]["text"]
    assert text["fields"] == {"train": "text_prompt", "bench": "text_description"}
    assert text["flags"]["13"]["rest"] == {"items": 1, "flagged": 1}
    assert text["flags"]["13"]["id_matched"]["flagged"] == 0
    assert result.train.items.set_index("item_id")["ngram_13"].to_dict() == {"arvo_10288": False,
                                                                            "arvo_19999": True}
    assert "longest_run" in result.benches[0].pairs.columns


def test_text_none_turns_it_off_and_bad_fields_are_named(tmp_path):
    data = _copied_text_data(tmp_path)
    off = compare("mimo-cyber", ["cybergym"], data=data, permutations=0, text=[]).summary()["benches"][0]["text"]
    assert off["status"] == "not_run" and off["reason"]  # the same keys whether the stage ran or not
    with pytest.raises(InputError, match="mimo-cyber has no text field 'nope'"):
        compare("mimo-cyber", ["cybergym"], data=data, permutations=0, text=[("nope", "description")])
    assert parse_text_options(["none"]) == []
    assert parse_text_options(["prompt:description"]) == [("prompt", "description")]
    with pytest.raises(InputError, match="TRAIN_FIELD:BENCH_FIELD"):
        parse_text_options(["prompt"])


def test_ngram_command_on_datasets_and_plain_files(tmp_path):
    data = _copied_text_data(tmp_path)
    run = CliRunner().invoke(app, ["ngram", "mimo-cyber", "cybergym", *data_args(data), "--field",
                                   "prompt:description", "--out", str(tmp_path / "out")])
    assert run.exit_code == 0, run.stderr
    assert "13-gram: 1 train item flagged by 1 bench item;" in run.stdout
    flags = (tmp_path / "out" / "flags.csv").read_text().splitlines()
    assert flags[0].startswith("train_id,n,bench_id") and any(",arvo:17777," in f for f in flags[1:])
    train = tmp_path / "train.jsonl"
    train.write_text(json.dumps({"id": "t1", "text": "x " + SPAN}) + "\n")
    bench = tmp_path / "bench.jsonl"
    bench.write_text(json.dumps({"id": "b1", "text": SPAN + " y"}) + "\n")
    run = CliRunner().invoke(app, ["ngram", str(train), str(bench), "--field", "text:text", "--id-column", "id",
                                   "--format", "json"])
    assert run.exit_code == 0, run.stderr
    assert json.loads(run.stdout)["flags"]["13"]["train_items_flagged"] == 1
    bad = CliRunner().invoke(app, ["ngram", str(train), str(bench), "--field", "body:text", "--id-column", "id"])
    assert bad.exit_code == 2 and "'body'" in bad.stderr
