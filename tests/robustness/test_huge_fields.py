"""A huge text or patch field costs bounded memory; over the cap it is truncated and counted."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from overlap.model import FIELD_CAP_BYTES, cap_field, utf8_cut
from overlap.text.api import text_check
from overlap.text.cell_checks import CellCounts, text_cells

GB = 1 << 30


def _words_text(n_bytes: int, seed: int = 0) -> str:
    """~n_bytes of ASCII words ("w0123 ..."), made fast with numpy."""
    vocab = np.frombuffer(b"".join(b"w%04d " % i for i in range(4096)), np.uint8).reshape(4096, 6)
    ids = np.random.default_rng(seed).integers(0, 4096, n_bytes // 6)
    return vocab[ids].tobytes().decode("ascii")


def _run_child(code: str, timeout: int = 120) -> tuple[dict, float]:
    """Run `code` in a fresh interpreter; it prints one JSON line. Returns (that, its peak RSS in bytes)."""
    # VmHWM, not getrusage's ru_maxrss: Linux keeps ru_maxrss across execve, so a child started from a large
    # pytest process (vfork + exec) reports the parent's peak once the suite has grown past it.
    wrapped = code + textwrap.dedent("""
        import re as _re
        _hwm = _re.search(r"VmHWM:\\s+(\\d+) kB", open("/proc/self/status").read())
        print("PEAK", int(_hwm.group(1)) * 1024)
    """)
    proc = subprocess.run([sys.executable, "-c", wrapped], capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.strip().splitlines()
    peak = int(lines[-1].split()[1])
    return json.loads(lines[-2]), peak


# ------------------------------------------------------------------------------------------------ cap


def test_cap_field_cuts_on_a_character_boundary():
    assert cap_field(None) == (None, False)
    assert cap_field("short") == ("short", False)
    assert cap_field("abcd", 4) == ("abcd", False)
    assert cap_field("abcde", 4) == ("abcd", True)
    assert cap_field("aé€😀", 4) == ("aé", True)  # 1 + 2 bytes; the € would be cut
    assert cap_field("😀😀", 5) == ("😀", True)
    assert cap_field("€€", 2) == ("", True)
    text, cut = cap_field("é" * FIELD_CAP_BYTES)  # 2 bytes per character: half of it fits
    assert cut and len(text.encode()) == FIELD_CAP_BYTES and text == "é" * (FIELD_CAP_BYTES // 2)
    assert cap_field("\ud800x" * 4, 4) == ("\ud800x", True)  # lone surrogates (JSON escapes) never raise
    assert utf8_cut("aé".encode(), 2) == 1


def test_arrow_texts_over_the_cap_are_truncated_and_counted():
    counts = CellCounts("text_prompt", cap=4)
    got = text_cells(pa.array(["abcdé", "aé€", None, "ok"]), ["i1", "i2", "i3", "i4"], counts)
    assert got.to_pylist() == ["abcd", "aé", None, "ok"]
    summary = counts.summary()
    assert summary["truncated"] == {"fields": 2, "column": "text_prompt", "example": "i1", "cap_bytes": 4}
    binary = text_cells(pa.array([b"ab\xc3\xa9x"], pa.binary()), ["b"], CellCounts("t", cap=3))
    assert binary.to_pylist() == [b"ab"]


def test_a_train_text_over_the_cap_is_truncated_for_matching_and_counted():
    big = _words_text(20 << 20)  # 20 MB: over the 8 MiB cap
    early = " ".join(big[:600].split()[1:40])  # words from the kept head
    late = " ".join(big[-600:].split()[1:40])  # words from the cut tail
    train = pd.DataFrame({"item_id": ["big", "small"], "text": [big, "nothing in common here at all"]})
    bench = pd.DataFrame({"item_id": ["early", "late"], "text": [early, late]})
    res = text_check(train, bench, "text", "text", workers=1)
    s = res.summary()
    assert s["train"]["truncated"] == {"fields": 1, "column": "text", "example": "big",
                                       "cap_bytes": FIELD_CAP_BYTES}
    assert s["bench"]["truncated"]["fields"] == 0
    assert set(res.flags.loc[res.flags["n"] == 13, "bench_id"]) == {"early"}  # the tail was not matched
    assert s["train"]["bytes"] <= FIELD_CAP_BYTES + 100


def test_a_100mb_bench_field_stays_under_1gb_and_is_counted(tmp_path):
    """The issue's case: `overlap ngram` with one 100 MB text (it cost 4.1 GB: the bench index)."""
    big = _words_text(100 << 20, seed=1)
    bench = tmp_path / "bench.jsonl"
    with open(bench, "w") as f:
        f.write(json.dumps({"id": "huge", "text": big}) + "\n")
        f.write(json.dumps({"id": "small", "text": "a small bench item"}) + "\n")
    train = tmp_path / "train.jsonl"
    with open(train, "w") as f:
        f.write(json.dumps({"id": "copy", "text": " ".join(big[:3000].split()[1:30])}) + "\n")
        f.write(json.dumps({"id": "other", "text": "words that share nothing with the bench"}) + "\n")
    del big
    code = f"""
import json, time
from pathlib import Path
import pandas as pd
from overlap.sources.formats.whole_file import read_records
from overlap.text.api import text_check
t = time.time()
def frame(path):
    rows = read_records(Path(path), ["id", "text"], required=["id", "text"])
    return pd.DataFrame(rows, columns=["id", "text"]).rename(columns={{"id": "item_id"}})
res = text_check(frame({str(train)!r}), frame({str(bench)!r}), "text", "text")
s = res.summary()
print(json.dumps({{"bench": s["bench"]["truncated"], "flagged": sorted(res.flagged(13)),
                  "seconds": time.time() - t}}))
"""
    got, peak = _run_child(code)
    assert got["bench"] == {"fields": 1, "column": "text", "example": "huge", "cap_bytes": FIELD_CAP_BYTES}
    assert got["flagged"] == ["copy"]
    assert got["seconds"] < 60
    assert peak < GB, f"peak RSS {peak / 2**20:.0f} MiB"


def test_an_uncapped_bench_index_costs_far_less_than_before():
    """The cause, not only the cap: building the index of one 20 MB text (no cap) took 750 MB above the
    interpreter (sorts of all windows twice, searchsorted temporaries, copies); now about half."""
    code = """
import json, re
import numpy as np, pyarrow as pa
vocab = np.frombuffer(b"".join(b"w%04d " % i for i in range(4096)), np.uint8).reshape(4096, 6)
text = vocab[np.random.default_rng(0).integers(0, 4096, (20 << 20) // 6)].tobytes().decode()
from overlap.text.ngram import build_index
arr = pa.array([text, "another item"], pa.string())
del text
base = int(re.search(r"VmHWM:\\s+(\\d+) kB", open("/proc/self/status").read()).group(1)) * 1024
index = build_index(arr, ["a", "b"])
print(json.dumps({"base": base, "tokens": int(len(index.ids))}))
"""
    got, peak = _run_child(code)
    per_token = (peak - got["base"]) / got["tokens"]
    assert per_token < 160, f"{per_token:.0f} bytes per bench token (was ~225)"


# ------------------------------------------------------------------------------------------- evidence


def test_a_patch_over_the_cap_is_truncated_counted_and_never_identical():
    from overlap.evidence.itemtexts import ItemTexts
    from overlap.evidence.patches import relate_patches
    from overlap.model import Dataset, Provenance, make_items

    hunk = "diff --git a/f.c b/f.c\n--- a/f.c\n+++ b/f.c\n@@ -1,1 +1,1 @@\n-old\n+new\n"
    big = hunk + "+" + "x" * (FIELD_CAP_BYTES + 10) + "\n"
    items = make_items(pd.DataFrame({"item_id": ["p1", "p2"], "row": [0, 1], "patch": [big, hunk]}), "d")
    ds = Dataset("d", items, pd.DataFrame(columns=["item_id", "kind", "value", "raw"]), Provenance("d", "builtin"))
    texts = ItemTexts(ds, "patch")
    assert texts.truncation() == {"fields": 1, "column": "patch", "example": "p1", "cap_bytes": FIELD_CAP_BYTES}
    assert len(texts.get("p1").encode()) <= FIELD_CAP_BYTES
    rel = relate_patches(texts.get("p1"), big)
    assert rel.relation == "not_comparable"


@pytest.mark.parametrize("size", [FIELD_CAP_BYTES - 1, FIELD_CAP_BYTES, FIELD_CAP_BYTES + 1])
def test_cap_edges(size):
    text, cut = cap_field("a" * size)
    assert cut == (size > FIELD_CAP_BYTES) and len(text) == min(size, FIELD_CAP_BYTES)


# ------------------------------------------------------------------------------------------------ huge ids


def test_a_20mb_id_in_a_streamed_side_is_one_pass_and_shown_cut(tmp_path):
    """A 20 MB id in a side big enough for the compiled loops: hashed in one pass over its bytes (the hash's
    multiplier table is fixed, not grown to the id's length), counted as unrecognised, and every report of it
    cut (the id lists keep it whole: it is an input row)."""
    import pyarrow.parquet as pq

    from overlap.api import compare
    from overlap.ids.id_arrays import EXAMPLE_CHARS
    from overlap.keyjoin.hashing import hash64

    ids = [f"owner{i % 7}__repo{i % 5}-{i}" if i % 3 else f"arvo:{10_000 + i}" for i in range(30_000)]
    ids[5] = "x" * 20_000_000
    pq.write_table(pa.table({"id": pa.array(ids)}), tmp_path / "train.parquet")
    pq.write_table(pa.table({"id": pa.array(["owner1__repo1-1", "x" * 20_000_000])}), tmp_path / "bench.parquet")
    result = compare(str(tmp_path / "train.parquet"), [str(tmp_path / "bench.parquet")], columns={"id": "id"},
                     pool=None, evidence=False, text=[],
                     data={"arvo": Path(__file__).resolve().parents[2] / "data" / "demo" / "arvo"})
    block = result.summary()
    assert block["benches"][0]["bench_items_matched"] == 1  # the PR id (an id no scheme takes has no key)
    unrecognised = block["train"]["id_recognition"]["unrecognised"]
    assert unrecognised["count"] == 1 and len(unrecognised["examples"][0]) == EXAMPLE_CHARS + 1
    assert all(len(p["example"]) <= 301 for p in block["train"]["problems"])
    assert len(result.train.recognition.summary()) < 1000
    # equal long strings hash alike, and one byte apart beyond the table's length do not
    long = pa.array(["y" * 9000, "y" * 9000, "y" * 8999 + "z", "y" * 4095 + "z" + "y" * 4904])
    hashes = hash64(long).tolist()
    assert hashes[0] == hashes[1] and len(set(hashes)) == 3
