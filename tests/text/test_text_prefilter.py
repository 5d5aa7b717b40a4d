"""The prefilter never drops a true hit: every train window whose words are a bench n-gram passes it, at
any table size (property test against a plain-Python set of n-grams)."""

import re

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from overlap.text.ngram import build_index
from overlap.text.ngram.chunk import ChunkTokens
from overlap.text.ngram.hashing import prefix_hashes, window_hashes
from overlap.text.tokenize import split_tokens

WORDS = ["a", "b", "Cc", "dd", "e_1", "fff", "gGgGgGgGgG", "h9", "don't", "x"]
texts = st.lists(st.sampled_from(WORDS), min_size=0, max_size=40).map(" ".join)


def oracle_windows(text: str, n: int) -> list[tuple[str, ...]]:
    """Every window of n words of one text, the words lowercased (plain Python: the brute-force oracle)."""
    words = re.findall(r"[a-z0-9_]+(?:'[a-z]+)?", text.lower())
    return [tuple(words[i : i + n]) for i in range(len(words) - n + 1)]


@settings(max_examples=60, deadline=None)
@given(bench=st.lists(texts, min_size=1, max_size=6), train=st.lists(texts, min_size=1, max_size=6),
       n=st.integers(1, 5), bits=st.integers(7, 23))
def test_the_prefilter_never_drops_a_true_hit(bench, train, n, bits):
    index = build_index(pa.array(bench), [f"b{i}" for i in range(len(bench))], ns=(n,), boilerplate_threshold=None)
    index.filter_bits = bits  # any size: a small table only lets more windows through
    index._filter = None
    truth = {w for t in bench for w in oracle_windows(t, n)}
    spans = split_tokens(pa.array(train))
    tokens = ChunkTokens(index, spans)
    if len(tokens) < n:
        return
    passed = set(index.passes_prefilter(window_hashes(prefix_hashes(tokens, index.r64), n)).tolist())
    for r, t in enumerate(train):
        base = int(spans.row_tokens[r])
        for i, w in enumerate(oracle_windows(t, n)):
            if w in truth:
                assert base + i in passed, (w, t)


def test_a_small_bench_passes_few_windows():
    rng = np.random.default_rng(1)
    vocab = [f"w{i}" for i in range(5000)]
    bench = [" ".join(rng.choice(vocab, 150)) for _ in range(200)]
    index = build_index(pa.array(bench), [f"b{i}" for i in range(200)], ns=(8,), boilerplate_threshold=None)
    train = [" ".join(rng.choice(vocab, 200)) for _ in range(500)]
    tokens = ChunkTokens(index, split_tokens(pa.array(train)))
    h = window_hashes(prefix_hashes(tokens, index.r64), 8)
    assert len(index.passes_prefilter(h)) < 0.01 * len(h)  # cross-row windows included: none is a bench one
