"""Bench index + streamed scan: attribution, boilerplate spans, short items, bad input, long items."""

import tracemalloc

import numpy as np
import pyarrow as pa
import pytest

from overlap.text.ngram import boilerplate as ngram_boilerplate
from overlap.text.ngram import build as ngram_build
from overlap.text.ngram import build_index, scan, scan_chunk, scan_long_row
from overlap.text.ngram import chunk as ngram_chunk
from overlap.text.ngram import jit as ngram_jit
from overlap.text.ngram import match as ngram_match


def words(prefix: str, k: int, start: int = 0) -> list[str]:
    return [f"{prefix}{i}" for i in range(start, start + k)]


def text(*parts) -> str:
    out = []
    for p in parts:
        out.extend(p if isinstance(p, list) else p.split())
    return " ".join(out)


def batch(texts, ids=None):
    ids = ids or [f"t{i}" for i in range(len(texts))]
    return pa.record_batch({"item_id": pa.array(ids, pa.string()), "text": pa.array(texts, pa.string())})


def run(index, texts, **kw):
    kw.setdefault("workers", 1)
    return scan(index, [batch(texts)], text_col="text", **kw)


def flag_rows(res):
    f = res.flags
    return sorted(zip(f["train_id"].tolist(), f["n"].tolist(), f["item"].tolist(), f["shared"].tolist(),
                      f["train_start"].tolist(), f["train_end"].tolist(), f["bench_start"].tolist(),
                      f["bench_end"].tolist(), strict=True))


BENCH = [
    text(words("a", 40)),  # b0
    text(words("b", 40)),  # b1
    text(words("c", 5)),  # b2: short
    None,  # b3: no text
    text(words("d", 30)),  # b4
]
IDS = [f"b{i}" for i in range(len(BENCH))]


@pytest.fixture(scope="module")
def index():
    return build_index(pa.array(BENCH), IDS, ns=(13, 8), boilerplate_threshold=3)


def test_flag_names_the_bench_item_and_the_spans(index):
    train = [
        text(words("x", 3), words("a", 20, start=5), words("y", 4)),  # 20 words of b0, at train pos 3
        text(words("b", 10, start=30), "zz"),  # 10 words of b1: only n = 8
        text(words("q", 50)),  # nothing
    ]
    res = run(index, train)
    assert flag_rows(res) == [
        ("t0", 8, 0, 13, 3, 23, 5, 25),
        ("t0", 13, 0, 8, 3, 23, 5, 25),
        ("t1", 8, 1, 3, 0, 10, 30, 40),
    ]
    assert res.counts["items"] == 3 and res.counts["tokens"] == 27 + 11 + 50


def test_one_train_item_two_bench_items(index):
    train = [text(words("a", 13), "sep", words("d", 15, start=10))]
    rows = flag_rows(run(index, train))
    assert [(r[1], r[2]) for r in rows if r[1] == 13] == [(13, 0), (13, 4)]
    got = {r[2]: r for r in rows if r[1] == 13}
    assert got[0][4:] == (0, 13, 0, 13)
    assert got[4][4:] == (14, 29, 10, 25) and got[4][3] == 3


def test_unseen_word_breaks_windows(index):
    # 12 words of b0, a word no bench item has, 12 more: no 13 consecutive shared words
    train = [text(words("a", 12), "never_seen", words("a", 12, start=13))]
    res = run(index, train, pairs=None)
    assert not any(n == 13 for n in res.flags["n"].tolist())


def test_window_never_crosses_a_row(index):
    # row 1 ends with b0 words 0-6, row 2 starts with b0 words 7-12: together 13, but two items
    train = [text(words("a", 7)), text(words("a", 6, start=7))]
    res = run(index, train)
    assert 13 not in res.flags["n"].tolist()


@pytest.mark.parametrize("path", ["numpy", "compiled"])
def test_hash_collisions_never_make_flags(monkeypatch, path):
    """With every hash forced equal, exact verification alone must give the true flags."""
    def same_hash(ids, r64):
        return np.zeros(len(ids) + 1, dtype=np.uint64)

    for module in (ngram_build, ngram_boilerplate, ngram_match):  # bench, background and train sides
        monkeypatch.setattr(module, "prefix_hashes", same_hash)
    if path == "numpy":
        monkeypatch.setitem(ngram_jit._STATE, "kernels", None)
    else:  # the compiled path hashes in its kernel: every window of every row collides with every entry
        assert ngram_jit.kernels() is not None

        def all_collide(index, values, row_tokens):
            cols = []
            for n in index.ns:
                t = index.tables[n]
                starts = np.concatenate([np.arange(s, e - n + 1) for s, e in zip(row_tokens[:-1], row_tokens[1:],
                                                                                   strict=True)]).astype(np.int64)
                for real, keys in ((True, t.real_hash), (False, t.bp_hash)):
                    if len(keys):
                        cols.append((starts, np.full(len(starts), n, np.int32), np.full(len(starts), real),
                                     np.zeros(len(starts), np.int64), np.full(len(starts), len(keys), np.int64),
                                     np.zeros(len(starts), np.uint64)))
            return ngram_jit.Hits(*(np.concatenate(c) for c in zip(*cols, strict=True)))

        monkeypatch.setattr(ngram_jit, "window_hits", all_collide)
    idx = build_index(pa.array(BENCH), IDS, ns=(13, 8), boilerplate_threshold=None)
    train = [text(words("x", 3), words("a", 20, start=5)), text(words("b", 12)), text(words("q", 30))]
    rows = flag_rows(run(idx, train))
    assert {(r[0], r[1], r[2]) for r in rows} == {("t0", 13, 0), ("t0", 8, 0), ("t1", 8, 1)}


# ------------------------------------------------------------------------------------------- boilerplate

TEMPLATE = ("please describe the problem you are seeing in as much detail as you can and attach the logs "
            "that show it")  # 21 words


def template_bench(copies=6, followed_by_the=2):
    bench = []
    for i in range(copies):
        follow = "the" if i < followed_by_the else f"unique{i}"
        bench.append(text(TEMPLATE, follow, words(f"body{i}_", 25)))
    bench.append(text(words("own", 30)))
    return bench


def test_template_alone_is_boilerplate_not_a_flag():
    bench = template_bench()
    idx = build_index(pa.array(bench), [f"b{i}" for i in range(len(bench))], ns=(13, 8), boilerplate_threshold=5)
    res = run(idx, [text("intro words here", TEMPLATE, "and then more words of my own")])
    assert len(res.flags["n"]) == 0
    bp = res.boilerplate
    assert sorted(bp["n"].tolist()) == [8, 13]
    assert set(bp["train_start"].tolist()) == {3} and set(bp["train_end"].tolist()) == {24}
    assert idx.stats["boilerplate_spans"][0]["bench_items"] == 6
    assert idx.stats["boilerplate_spans"][0]["words"].startswith("please describe the problem")


def test_template_plus_one_common_word_needs_span_masking():
    """`template + the` is in 2 bench items (< T): a rare 13-gram made of boilerplate. Spans stop it."""
    bench = template_bench(copies=6, followed_by_the=2)
    ids = [f"b{i}" for i in range(len(bench))]
    train = [text("my report", TEMPLATE, "the", words("mine", 20))]
    plain = build_index(pa.array(bench), ids, ns=(13,), boilerplate_threshold=5, mask_spans=False)
    flagged = run(plain, train)
    assert set(flagged.flags["item"].tolist()) == {0, 1}  # dropping boilerplate n-grams alone is not enough
    masked = build_index(pa.array(bench), ids, ns=(13,), boilerplate_threshold=5)
    res = run(masked, train)
    assert len(res.flags["n"]) == 0
    assert res.boilerplate["hits"].tolist() == [9]  # reported apart, not as a flag


def test_real_copy_next_to_the_template_still_flags():
    bench = template_bench()
    idx = build_index(pa.array(bench), [f"b{i}" for i in range(len(bench))], ns=(13, 8), boilerplate_threshold=5)
    train = [text(TEMPLATE, "unique3", words("body3_", 25))]  # copies b3 whole, template included
    res = run(idx, train)
    rows = [r for r in flag_rows(res) if r[1] == 13]
    assert [(r[2], r[4], r[5], r[6], r[7]) for r in rows] == [(3, 21, 47, 21, 47)]  # only the body, not template


def test_threshold_none_means_no_boilerplate_from_frequency():
    bench = template_bench()
    idx = build_index(pa.array(bench), [f"b{i}" for i in range(len(bench))], ns=(13,), boilerplate_threshold=None)
    res = run(idx, [text(TEMPLATE)])
    assert sorted(set(res.flags["item"].tolist())) == [0, 1, 2, 3, 4, 5]


def test_background_corpus_marks_boilerplate():
    license_text = text(words("lic", 16))
    bench = [text(words("p", 10), license_text, words("r", 10)), text(words("s", 30))]
    ids = ["b0", "b1"]
    train = [text("x", license_text, "y")]
    without = build_index(pa.array(bench), ids, ns=(13,), boilerplate_threshold=5)
    assert run(without, train).flags["item"].tolist() == [0]
    background = ["some other project " + license_text + " trailing words", None, ""]
    idx = build_index(pa.array(bench), ids, ns=(13,), boilerplate_threshold=5, background=background)
    res = run(idx, train)
    assert len(res.flags["n"]) == 0 and res.boilerplate["hits"].tolist() == [4]
    assert idx.stats["boilerplate_ngrams"][13]["background"] == 4
    # the rest of that bench item is still indexed
    assert run(idx, [text(words("r", 10), words("q", 3))]).flags["item"].tolist() == []
    assert run(idx, [text(words("p", 10))]).flags["item"].tolist() == []
    assert idx.stats["background_rows"] == 3


# ------------------------------------------------------------------------------------------- short, bad input


def test_short_items_are_counted(index):
    assert index.stats["short"] == {13: 1, 8: 1}  # b2 (5 words); b3 has no text and is counted as null
    assert index.stats["short_ids"][13] == ["b2"]
    assert index.stats["null"] == 1
    res = run(index, [text(words("c", 5)), text(words("a", 9)), ""])
    assert res.short == {13: 3, 8: 2}
    assert res.counts["empty"] == 1


def test_null_empty_and_non_utf8_train_rows(index):
    b = pa.record_batch({"item_id": pa.array(["t0", "t1", "t2", "t3"]),
                         "text": pa.array([b"\xff\xfe broken", None, b"", text(words("a", 13)).encode()],
                                          pa.binary())})
    res = scan(index, [b], text_col="text", workers=1)
    assert res.counts["non_utf8"] == 1
    assert res.counts["null"] == 2  # the non-UTF-8 row is nulled (the api reports null without it)
    assert res.counts["empty"] == 1
    assert res.flags["train_id"].tolist() == ["t3", "t3"]


def test_all_null_train_column(index):
    b = pa.record_batch({"item_id": pa.array(["t0", "t1"]), "text": pa.nulls(2)})
    res = scan(index, [b], text_col="text", workers=1)
    assert res.counts["items"] == 2 and res.counts["null"] == 2 and len(res.flags["n"]) == 0


def test_empty_bench_and_empty_train():
    idx = build_index(pa.array([None, ""], pa.string()), ["b0", "b1"], ns=(13, 8))
    res = run(idx, [text(words("a", 20)), ""])
    assert len(res.flags["n"]) == 0 and res.counts["items"] == 2
    assert scan(idx, [], text_col="text").counts["items"] == 0


# ------------------------------------------------------------------------------------------- streaming, pool


def test_pool_and_inline_give_the_same_result(index):
    rng = np.random.default_rng(3)
    texts = []
    for i in range(300):
        if i % 7 == 0:
            texts.append(text(words("w", 5), words("a", 15, start=int(rng.integers(0, 25))), words("w", 5)))
        elif i % 11 == 0:
            texts.append(None)
        else:
            texts.append(text(words("w", int(rng.integers(0, 40)))))
    batches = [batch(texts[i : i + 50], [f"t{j}" for j in range(i, i + 50)]) for i in range(0, 300, 50)]
    inline = scan(index, batches, text_col="text", workers=1, chunk_rows=16)
    pooled = scan(index, iter(batches), text_col="text", workers=2, chunk_rows=16)
    for key in inline.flags:
        assert inline.flags[key].tolist() == pooled.flags[key].tolist()
    assert inline.counts == pooled.counts
    assert len(set(inline.flags["train_id"].tolist())) == 43


def test_long_item_is_scanned_in_blocks_with_bounded_memory(index):
    """A single ~16 MB item: blocks of 256 KB, flags across block edges, numpy memory ~ the block."""
    filler = " ".join(words("f", 2000))  # ~ 11 KB of words no bench item has
    pieces = []
    for k in range(1400):
        pieces.append(filler)
        if k % 200 == 199:
            pieces.append(text(words("a", 20, start=3)))
    big = " ".join(pieces)
    assert len(big) > 15_000_000
    arr = pa.array([big])
    tracemalloc.start()
    got = scan_long_row(index, arr, block_bytes=256 << 10)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 40_000_000, peak  # scanning it as one chunk allocates several hundred MB
    assert got["tokens_per_row"].tolist() == [1400 * 2000 + 7 * 20]
    assert got["item"].tolist() == [0, 0] and got["shared"].tolist() == [13, 8] or got["shared"].tolist() == [8, 13]
    ref = scan_chunk(index, pa.array([" ".join(pieces[:400])]))
    assert ref["train_start"].tolist() == got["train_start"].tolist()
    # through scan(): the long-row path is chosen by size and the counts are right
    res = scan(index, [batch(["short " + text(words("a", 13)), big])], text_col="text", workers=1,
               long_row_bytes=1 << 20)
    assert sorted(set(res.flags["train_id"].tolist())) == ["t0", "t1"]
    assert res.counts["tokens"] == 14 + 1400 * 2000 + 7 * 20


def test_block_edges_inside_words_and_giant_tokens(index):
    """Blocks cut anywhere: words split by a block edge are rejoined; a word longer than any bench word
    (here 3 MB without a separator) counts as one unseen token and breaks windows."""
    copy = text(words("a", 20, start=2))
    giant = "z" * 3_000_000
    big = " ".join([copy, giant, copy, "tail"])
    got = scan_long_row(index, pa.array([big]), block_bytes=4099)
    ref = scan_chunk(index, pa.array([big]))
    assert got["tokens_per_row"].tolist() == ref["tokens_per_row"].tolist() == [42]
    for key in ("row", "n", "item", "shared", "train_start", "train_end", "bench_start", "bench_end"):
        assert got[key].tolist() == ref[key].tolist(), key


def test_pair_runs_in_chunks_and_long_rows(index):
    train = text(words("x", 3), words("a", 20, start=5), words("y", 4))
    res = scan(index, [batch([train])], text_col="text", pairs={"t0": [0, 1]}, workers=1)
    assert res.runs[("t0", 0)] == (20, 3, 5)
    assert res.runs[("t0", 1)] == (0, -1, -1)
    long = " ".join([" ".join(words("f", 3000)), train, " ".join(words("f", 3000))])
    res2 = scan(index, [batch([long])], text_col="text", pairs={"t0": [0]}, workers=1, long_row_bytes=10_000)
    assert res2.runs[("t0", 0)] == (20, 3003, 5)


@pytest.mark.parametrize("block", [4200, 5000, 7777, 10_000, 65_536])
def test_long_row_equals_one_chunk_for_any_block_size(index, block, monkeypatch):
    """Dense copies cut by block edges at every offset: same window matches, flags, spans and runs."""
    raw = []
    finish = ngram_match.finish_matches

    def spy(idx, acc):
        cols = [acc.cat(k, np.int64).tolist() for k in ("pos", "n", "item", "bpos", "bp_pos", "bp_n")]
        raw.append((sorted(zip(*cols[:4], strict=True)), sorted(zip(*cols[4:], strict=True))))
        return finish(idx, acc)

    monkeypatch.setattr(ngram_chunk, "finish_matches", spy)
    rng = np.random.default_rng(block)
    parts = []
    for _ in range(300):
        k = int(rng.integers(0, 4))
        if k == 0:
            s = int(rng.integers(0, 25))
            parts.append(text(words("a", int(rng.integers(8, 16)), start=s)))
        elif k == 1:
            parts.append(text(words("b", int(rng.integers(12, 30)))))
        else:
            parts.append(text(words("n", int(rng.integers(1, 6)))))
    big = " ".join(parts)
    ref = scan_chunk(index, pa.array([big]), {0: [0, 1, 4]})
    got = scan_long_row(index, pa.array([big]), [0, 1, 4], block_bytes=block)
    assert got["tokens_per_row"].tolist() == ref["tokens_per_row"].tolist()
    assert len(ref["row"]) > 0
    for key in ("row", "n", "item", "shared", "train_start", "train_end", "bench_start", "bench_end"):
        assert got[key].tolist() == ref[key].tolist(), key
    assert got["runs"] == ref["runs"]
    assert raw[0] == raw[1] and len(raw[0][0]) > 100


def test_long_items_in_pool_mode_keep_input_order(index):
    texts = [text(words("a", 14)), " ".join([" ".join(words("f", 300)), text(words("b", 20))] * 3),
             text(words("b", 14)), None, text(words("d", 14))]
    batches = [batch(texts[:3], ["t0", "t1", "t2"]), batch(texts[3:], ["t3", "t4"])]
    kw = {"text_col": "text", "chunk_rows": 1, "long_row_bytes": 1000}
    pooled = scan(index, batches, workers=2, **kw)
    inline = scan(index, batches, workers=1, **kw)
    assert pooled.flags["train_id"].tolist() == ["t0", "t0", "t1", "t1", "t2", "t2", "t4", "t4"]
    for key in inline.flags:
        assert inline.flags[key].tolist() == pooled.flags[key].tolist()
    assert inline.counts == pooled.counts
