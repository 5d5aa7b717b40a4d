"""A filter's read-back of the rows it wrote or removed goes through links in a temporary folder
(`000000/<file name>`): an error found there names the user's file, as every other input error does."""

from __future__ import annotations

import pytest

import overlap
from overlap.errors import InputError


def test_an_error_of_the_read_back_names_the_input_file(tmp_path):
    (tmp_path / "bench.jsonl").write_text('{"id": "CVE-2023-1111"}\n', encoding="utf-8")
    train = tmp_path / "one_list.jsonl"
    # A list cell beside a text cell: the read-back sees the list row alone and refuses the column.
    train.write_text('{"id": ["CVE-2023-1111"]}\n{"id": "x"}\n', encoding="utf-8")
    try:
        overlap.filter_train(str(train), [str(tmp_path / "bench.jsonl")], tmp_path / "out", id_column="id")
    except InputError as exc:
        message = str(exc)
        assert "000000" not in message and "overlap-reread-" not in message, message
        assert message.startswith("one_list.jsonl:"), message
    else:  # reading such a cell the same way in both passes is fine too; then nothing is left to name
        pytest.skip("the read-back accepted the file")
