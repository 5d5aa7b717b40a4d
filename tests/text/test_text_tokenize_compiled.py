"""The compiled tokeniser against the tokenising rule written out in plain Python, on chunks of many rows.

The compiled loop classes every byte of a chunk at once (a contraction's apostrophe, the non-ASCII
characters by code point) before it cuts the rows, so the places to hold it to the rule are the row edges:
an apostrophe at a row's first or last byte beside a letter of the next or previous row, non-ASCII letters
on either side of it, and rows of issue-like text (quotes, backticks, URLs, identifiers, emoji)."""

import unicodedata

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from overlap.text.ngram import build_index, jit


def _is_word(ch: str) -> bool:
    cat = unicodedata.category(ch)
    return cat[0] in "LMN" or cat == "Pc"


def _is_letter(ch: str) -> bool:
    return unicodedata.category(ch)[0] in "LM"


def rule(text: str | None, underscore: bool = True) -> list[str]:
    """Lowercased maximal runs of L/M/N/Pc characters (``_`` only when ``underscore``), an apostrophe
    (' or \u2019) between two letters of the text belonging to the word."""
    if text is None:
        return []
    text = text.replace("\u2019", "'")
    out, cur = [], []
    for k, ch in enumerate(text):
        joined = ch == "'" and 0 < k < len(text) - 1 and _is_letter(text[k - 1]) and _is_letter(text[k + 1])
        if joined or (_is_word(ch) and (underscore or ch != "_")):
            cur.append(ch)
        elif cur:
            out.append("".join(cur))
            cur = []
    if cur:
        out.append("".join(cur))
    return ["".join(c.lower() for c in w) for w in out]  # per code point: no final-sigma rule


def compiled_tokens(texts: list, tokenizer: str = "words") -> list[list[str]]:
    index = build_index(pa.array(["a b"]), ["b0"], ns=(2,), tokenizer=tokenizer, boilerplate_threshold=None)
    spans, _ = jit.split_values(index, pa.array(texts, pa.string()))
    words = spans.strings(list(range(len(spans)))).to_pylist()
    rows = spans.row_tokens.tolist()
    return [words[rows[r] : rows[r + 1]] for r in range(len(texts))]


# apostrophes (ASCII and typographic) at every place a row can hold one, letters ASCII and not, marks, digits,
# and the punctuation of issue text
PIECES = ["'", "\u2019", "a", "Z", "é", "É", "ß", "\u0301", "日本", "Ω", "7", "²", "_", " ", "\n", "`", '"', "“",
          "”", "—", "…", "→", "🙂", "(", ")", ".", ",", ":", "/", "-", "don't", "it\u2019s", "é'a", "a'é", "'é", "é'",
          "https://github.com/org/repo/issues/12", "foo_bar()", "parseHTTPHeader", "x" * 9]
cells = st.one_of(st.none(), st.lists(st.sampled_from(PIECES), max_size=12).map("".join))


@pytest.fixture(autouse=True)
def _compiled():
    if jit.kernels() is None:
        pytest.skip("numba is not installed: the numpy path is what runs (tests/text/test_text_tokenize.py)")


@settings(max_examples=150, deadline=None)
@given(texts=st.lists(cells, min_size=1, max_size=40))
def test_rows_of_issue_like_text_follow_the_rule(texts):
    assert compiled_tokens(texts) == [rule(t) for t in texts]


def test_an_apostrophe_at_a_row_edge_never_joins_the_next_row():
    texts = ["abc'", "def", "é'", "ab", "'é", "x", "é'", "é", "日'", "'a", "", "'", "a'", "'b"]
    assert compiled_tokens(texts) == [rule(t) for t in texts]
    assert compiled_tokens(texts)[:4] == [["abc"], ["def"], ["é"], ["ab"]]


def test_contractions_beside_non_ascii_letters_are_one_word():
    texts = ["l'été c'est l\u2019hiver", "naïve's don't", "Ω'Σ 2'a a'2 _'a a'_", "“quoted” `code` 'single'"]
    assert compiled_tokens(texts) == [rule(t) for t in texts]
    assert compiled_tokens(texts)[0] == ["l'été", "c'est", "l'hiver"]


@settings(max_examples=40, deadline=None)
@given(texts=st.lists(cells, min_size=1, max_size=20))
def test_the_identifier_tokenizer_keeps_the_underscore_out(texts):
    texts = [t.lower() if t is not None else None for t in texts]  # no capitals: no camelCase split
    assert compiled_tokens(texts, "identifiers") == [rule(t, underscore=False) for t in texts]


def test_the_code_point_table_classes_every_code_point_as_unicodedata_does():
    """The table reads only the planes that hold word characters: every other code point is checked here."""
    from overlap.text.word_chars import _codepoint_class_table

    table = _codepoint_class_table()
    want = [3 if c[0] in "LM" else 1 if c[0] == "N" or c == "Pc" else 0
            for c in map(unicodedata.category, map(chr, range(0x80, 0x110000)))]
    assert table[0x80:].tolist() == want
    assert not table[:0x80].any()
