"""Contractions are one token, every flag reports its longest shared run, the
fast scan path (token values from bytes, ids looked up on demand) gives the same answer as the plain
tokenizer, and the same inputs give a byte-identical flags.csv."""

import random

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from test_text_ngrams import run, text, words  # tests/text is on the path (no __init__.py)

from overlap.outputs.report.result_folders import ngram_summary, write_ngram_report
from overlap.text import text_check
from overlap.text.ngram import build_index
from overlap.text.ngram.chunk import ChunkTokens, _block_ids
from overlap.text.ngram.hashing import token_values
from overlap.text.tokenize import split_tokens, tokenize_flat


def flags_of(res) -> list[tuple]:
    f = res.flags
    return sorted(zip(f["train_id"].tolist(), f["n"].tolist(), f["item"].tolist(), f["train_start"].tolist(),
                      f["train_end"].tolist(), f["bench_start"].tolist(), f["bench_end"].tolist(), strict=True))


# ------------------------------------------------------------------------------------------ contractions

# 10 words, 4 of them contractions: 14 tokens if the apostrophe split them
TEN = "We'll see it's fine and don't worry, they're ok now"


def test_a_ten_word_copy_with_contractions_is_not_a_13_gram():
    assert len(tokenize_flat(pa.array([TEN])).tokens) == 10
    bench = [text(words("a", 20), TEN, words("b", 20)), text(words("c", 40))]
    idx = build_index(pa.array(bench), ["b0", "b1"], ns=(13, 8), boilerplate_threshold=None)
    res = run(idx, [text(words("x", 5), TEN, words("y", 5))])
    got = flags_of(res)
    assert [g for g in got if g[1] == 13] == []  # 10 shared words are no 13-gram
    assert [(g[1], g[2], g[3], g[4]) for g in got] == [(8, 0, 5, 15)]  # ... and are 10 shared words at n = 8


def test_a_thirteen_word_copy_with_contractions_flags():
    copy = text(TEN, "one", "more", "word")  # 13 words
    bench = [text(words("a", 20), copy, words("b", 20)), text(words("c", 40))]
    idx = build_index(pa.array(bench), ["b0", "b1"], ns=(13, 8), boilerplate_threshold=None)
    res = run(idx, [text(words("x", 5), copy.replace("'", "\u2019"), words("y", 5))])  # typographic apostrophes
    assert (("t0", 13, 0, 5, 18, 20, 33)) in flags_of(res)


def test_a_long_row_cut_next_to_an_apostrophe_keeps_the_contraction_whole():
    idx = build_index(pa.array([text(words("a", 20), "don't it's")]), ["b0"], ns=(8,), boilerplate_threshold=None)
    body = " ".join(["don't", "it's", "x"] * 1500)  # ~15 kB: blocks of 4 kB and more, cut everywhere
    want = None
    for pad in range(12):
        data = np.frombuffer(("y" * pad + " " + body).encode(), np.uint8)
        got = np.concatenate(list(_block_ids(idx, data, 0)))
        plain = idx.lookup(tokenize_flat(pa.array(["y" * pad + " " + body])).tokens)
        assert got.tolist() == plain.tolist()
        want = plain if want is None else want
    assert len(want) == 4500


# ------------------------------------------------------------------------------------------ longest runs


def test_the_flag_reports_the_longest_shared_run_not_the_first():
    bench = [text(words("s", 9), words("m", 10), words("l", 25), words("e", 5)), text(words("q", 40))]
    idx = build_index(pa.array(bench), ["b0", "b1"], ns=(13, 8), boilerplate_threshold=None)
    # a 9-word span of b0 first, then (after other words) a 25-word span of b0
    train = text(words("x", 2), words("s", 9), words("y", 4), words("l", 25), words("z", 3))
    got = flags_of(run(idx, [train]))
    assert ("t0", 8, 0, 15, 40, 19, 44) in got  # n = 8: the 25 words at train 15, bench 19; not the 9 at 2
    assert ("t0", 13, 0, 15, 40, 19, 44) in got
    # the same through text_check: the words of the flag are the long span's
    res = text_check(pd.DataFrame({"item_id": ["t0"], "text": [train]}),
                     pd.DataFrame({"item_id": ["b0", "b1"], "text": bench}), "text", "text", workers=1,
                     boilerplate_threshold=None)
    f8 = res.flags[res.flags["n"] == 8].iloc[0]
    assert f8["words"] == " ".join(words("l", 25)) and f8["shared"] == 2 + 18


def test_equal_runs_the_earliest_wins():
    bench = [text(words("p", 10), words("m", 5), words("r", 10)), text(words("q", 40))]
    idx = build_index(pa.array(bench), ["b0", "b1"], ns=(8,), boilerplate_threshold=None)
    train = text(words("r", 10), "sep", words("p", 10))  # two 10-word runs: the earliest in train
    assert flags_of(run(idx, [train])) == [("t0", 8, 0, 0, 10, 15, 25)]


def test_longest_run_in_a_bench_item_that_repeats_a_phrase():
    """Only an n-gram's first occurrence in an item is posted: a copy of the second occurrence of a
    repeated phrase is still measured in full, word by word."""
    phrase = words("p", 10)
    bench = [text(words("a", 15), phrase, words("b", 12), phrase, words("c", 12)), text(words("q", 40))]
    idx = build_index(pa.array(bench), ["b0", "b1"], ns=(8,), boilerplate_threshold=None)
    assert idx.repeat_items.tolist() == [0]
    train = text(words("x", 3), words("b", 6, start=6), phrase, words("c", 6), words("y", 3))  # 22 words
    assert flags_of(run(idx, [train])) == [("t0", 8, 0, 3, 25, 31, 53)]


def test_longest_run_across_blocks_of_a_long_row():
    bench = [text(words("s", 9), words("m", 10), words("l", 25)), text(words("q", 40))]
    idx = build_index(pa.array(bench), ["b0", "b1"], ns=(13, 8), boilerplate_threshold=None)
    train = text(words("x", 300), words("s", 9), words("y", 300), words("l", 25), words("z", 300))
    whole = flags_of(run(idx, [train]))
    blocks = flags_of(run(idx, [train], long_row_bytes=1000))
    assert whole == blocks and ("t0", 8, 0, 609, 634, 19, 44) in whole


# ------------------------------------------------------------------------------------------ fast path


@pytest.mark.parametrize("tokenizer", ["words", "identifiers"])
def test_split_tokens_and_values_agree_with_the_plain_tokenizer(tokenizer):
    rng = random.Random(3)
    pool = list("abcXYZ019_ .,;:'\n") + ["\u2019", "é", "É", "ß", "İ", "日本", "fooBar", "ΣΑΣ", "\u0301"]
    texts = ["".join(rng.choice(pool) for _ in range(rng.randint(0, 60))) for _ in range(400)] + [None, ""]
    assert len(split_tokens(pa.array(["\x80 \u2014"]), tokenizer)) == 0  # non-ASCII bytes, no word
    arr = pa.array(texts, pa.string())
    plain = tokenize_flat(arr, tokenizer)
    spans = split_tokens(arr, tokenizer)
    assert spans.row_tokens.tolist() == plain.offsets.tolist()
    assert spans.strings(np.arange(len(spans))).to_pylist() == plain.tokens.to_pylist()
    # a token's value depends on its (lowercased) word only: the bench vocabulary has the same values
    vocab = pa.array(sorted(set(plain.tokens.to_pylist())), pa.string())
    idx = build_index(pa.array([" ".join(vocab.to_pylist())]), ["b0"], ns=(2,), tokenizer=tokenizer,
                      boilerplate_threshold=None)
    toks = ChunkTokens(idx, spans)
    ids = toks.ids_at(np.arange(len(spans)))
    assert (ids >= 0).all() and (idx.r64[ids + 1] == toks.values).all()
    assert idx.vocab.take(pa.array(ids)).to_pylist() == plain.tokens.to_pylist()


def test_words_longer_than_any_bench_word_and_value_collisions_never_match():
    idx = build_index(pa.array([text(words("a", 20))]), ["b0"], ns=(8,), boilerplate_threshold=None)
    spans = split_tokens(pa.array(["a1 " + "a" * 50 + " a2"]))
    toks = ChunkTokens(idx, spans)
    ids = toks.ids_at(np.arange(3))
    assert toks.values[1] == 0 and ids[1] == -1
    assert idx.vocab.take(pa.array(ids[[0, 2]])).to_pylist() == ["a1", "a2"]
    # a forged value: the word is confirmed by its letters, so no id
    idx2 = build_index(pa.array([text(["abcdefghijk", "x"])]), ["b0"], ns=(1,), boilerplate_threshold=None)
    spans2 = split_tokens(pa.array(["abcdefghijz"]))
    toks2 = ChunkTokens(idx2, spans2)
    toks2.values[:] = idx2.r64[1 + idx2.vocab.to_pylist().index("abcdefghijk")]
    assert toks2.ids_at(np.arange(1)).tolist() == [-1]


def test_token_values_pack_short_words_exactly():
    buf = np.frombuffer(b"ab abc ABC abcdefgh abcdefghi a_b A_B a\x7fb" + bytes(8), np.uint8)
    starts, lengths = np.array([0, 3, 7, 11, 20, 30, 34, 38]), np.array([2, 3, 3, 8, 9, 3, 3, 3])
    v = token_values(buf, starts, lengths, fold=True, max_bytes=9)
    assert v[1] == v[2] and v[5] == v[6] and len(set(v[:6].tolist())) == 5  # case-folded, else distinct
    assert token_values(buf, starts, lengths, fold=True, max_bytes=8)[4] == 0  # longer than any bench word


# ------------------------------------------------------------------------------------------ determinism


def _workload(seed: int = 9):
    rng = np.random.default_rng(seed)
    vocab = [f"w{i}" for i in range(300)] + ["don't", "it's", "Naïve", "ÉTÉ", "we'll"]
    bench = [" ".join(rng.choice(vocab, 60)) for _ in range(40)]
    train = []
    for i in range(300):
        row = list(rng.choice(vocab, 80))
        if i % 7 == 0:  # copies of bench spans, some of them twice
            b = bench[int(rng.integers(0, 40))].split()
            s = int(rng.integers(0, 30))
            row[10:10] = b[s : s + int(rng.integers(9, 30))]
            if i % 2 == 0:
                row[50:50] = b[s : s + 12]
        train.append(" ".join(row))
    return (pd.DataFrame({"item_id": [f"t{i:03d}" for i in range(len(train))], "text": train}),
            pd.DataFrame({"item_id": [f"b{i:02d}" for i in range(len(bench))], "text": bench}))


def test_same_inputs_give_a_byte_identical_flags_csv(tmp_path):
    train, bench = _workload()
    outs = []
    for k, kw in enumerate([{"workers": 1}, {"workers": 1}, {"workers": 2, "batch_rows": 16, "chunk_bytes": 2048},
                            {"workers": 1, "batch_rows": 7}]):
        res = text_check(train, bench, "text", "text", **kw)
        out = tmp_path / f"run{k}"
        write_ngram_report(ngram_summary("train", "bench", res), res, out)
        outs.append((out / "flags.csv").read_bytes())
    assert len(outs[0].splitlines()) > 20
    assert all(o == outs[0] for o in outs[1:])
