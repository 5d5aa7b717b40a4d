"""The compiled path of the chunk scan (numba kernels) gives what the numpy path gives: the same tokens and
values, the same window matches, flags and pair runs, on text made to hit every tokeniser rule."""

import random

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from overlap.text.ngram import build_index, jit, scan_chunk
from overlap.text.ngram.chunk import ChunkTokens
from overlap.text.tokenize import split_tokens

# letters, digits, "_", apostrophes (ASCII and typographic) next to letters, digits and edges, non-ASCII
# letters and marks, a non-letter word character, punctuation, and camelCase for the identifier tokenizer
POOL = list("abcXYZ019_ .,;:'\n") + ["\u2019", "é", "É", "ß", "İ", "日本", "fooBar", "ΣΑΣ", "\u0301", "²", "a'b",
                                     "'", "Ω'a", "a'Ω", "x" * 20, "ÿ" * 7]
cells = st.one_of(st.none(), st.lists(st.sampled_from(POOL), max_size=30).map("".join))


def test_the_kernels_load_where_numba_is_installed():
    pytest.importorskip("numba")
    assert jit.kernels() is not None


def _index(tokenizer="words", words=("a", "b", "xyz", "don't", "é", "日本", "foo")):
    bench = [" ".join(words), " ".join(reversed(words)) + " " + "x" * 20]
    return build_index(pa.array(bench), ["b0", "b1"], ns=(3, 2), tokenizer=tokenizer, boilerplate_threshold=None)


@settings(max_examples=80, deadline=None)
@given(texts=st.lists(cells, min_size=1, max_size=12), tokenizer=st.sampled_from(["words", "identifiers"]))
def test_tokens_and_values_match_the_numpy_path(texts, tokenizer):
    index = _index(tokenizer)
    arr = pa.array(texts, pa.string())
    spans, values = jit.split_values(index, arr)
    ref = split_tokens(arr, index.tokenizer)
    assert spans.row_tokens.tolist() == ref.row_tokens.tolist()
    assert spans.starts.tolist() == ref.starts.tolist() and spans.ends.tolist() == ref.ends.tolist()
    assert spans.wide.tolist() == ref.wide.tolist()
    assert values.tolist() == ChunkTokens(index, ref).values.tolist()


def _workload(seed: int):
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(60)] + ["don't", "é", "Éa", "naïve", "it's", "ß"]
    bench = [" ".join(rng.choice(vocab) for _ in range(rng.randint(5, 40))) for _ in range(8)]
    train = []
    for _ in range(40):
        words = [rng.choice(vocab) for _ in range(rng.randint(0, 60))]
        if words and rng.random() < 0.5:  # a copied span of a bench item
            b = rng.choice(bench).split()
            s = rng.randint(0, len(b) - 1)
            at = rng.randint(0, len(words))
            words[at:at] = b[s : s + rng.randint(1, 20)]
        train.append(rng.choice(["", " ", ". "]).join(words) if rng.random() > 0.05 else None)
    return bench, train


@pytest.mark.parametrize("seed", range(6))
def test_scan_chunk_matches_the_numpy_path(seed, monkeypatch):
    bench, train = _workload(seed)
    index = build_index(pa.array(bench), [f"b{i}" for i in range(len(bench))], ns=(5, 3), boilerplate_threshold=3)
    pairs = {r: [r % len(bench), (r * 7) % len(bench)] for r in range(0, len(train), 3)}
    got = scan_chunk(index, pa.array(train, pa.string()), pairs)
    monkeypatch.setitem(jit._STATE, "kernels", None)
    ref = scan_chunk(index, pa.array(train, pa.string()), pairs)
    assert sorted(got) == sorted(ref)
    for key in ref:
        if isinstance(ref[key], np.ndarray):
            assert got[key].tolist() == ref[key].tolist(), key
        else:
            assert got[key] == ref[key], key
    assert "row" in ref and len(ref["row"]) > 0


def test_a_repetitive_pair_over_the_budget_takes_the_hash_method():
    index = build_index(pa.array(["a " * 3000 + "b"]), ["b0"], ns=(2,), boilerplate_threshold=None)
    out = scan_chunk(index, pa.array(["a " * 2000]), {0: [0]})
    assert out["runs"][(0, 0)] == (2000, 0, 0)
