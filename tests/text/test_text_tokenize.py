"""Tokenisation: lowercase + maximal runs of Unicode word characters, on Arrow arrays."""

import random
import re
import unicodedata

import pyarrow as pa
import pytest

from overlap.text.string_arrays import to_string_array
from overlap.text.tokenize import tokenize, tokenize_flat


def _is_word(ch: str) -> bool:
    cat = unicodedata.category(ch)
    return cat[0] in "LMN" or cat == "Pc"


def _is_letter(ch: str) -> bool:
    return unicodedata.category(ch)[0] in "LM"


def reference(text: str | None) -> list[str]:
    """The definition, one character at a time: lowercase, then maximal runs of L/M/N/Pc, where an
    apostrophe (' or \u2019, read as ') between two letters is part of the word (contractions)."""
    if text is None:
        return []
    text = text.replace("\u2019", "'")
    out, cur = [], []
    low = text.lower()
    for k, ch in enumerate(low):
        if ch == "'" and 0 < k < len(low) - 1 and _is_letter(low[k - 1]) and _is_letter(low[k + 1]):
            cur.append(ch)
        elif _is_word(ch):
            cur.append(ch)
        elif cur:
            out.append("".join(cur))
            cur = []
    if cur:
        out.append("".join(cur))
    return out


def test_ascii_words_lowercase_and_punctuation():
    got = tokenize(pa.array(["Hello, World! foo_bar 42x  --  Don't", "A.B.C"])).to_pylist()
    # "Don't" was two tokens ("don", "t") before contractions were kept whole
    assert got == [["hello", "world", "foo_bar", "42x", "don't"], ["a", "b", "c"]]


def test_contractions_stay_one_token():
    texts = ["Don't panic, it's fine; we'll see.", "l\u2019homme don\u2019t", "'quoted' rock'n'roll",
             "90's x'", "end'", "'start", "a''b"]
    got = tokenize(pa.array(texts)).to_pylist()
    assert got == [["don't", "panic", "it's", "fine", "we'll", "see"], ["l'homme", "don't"],
                   ["quoted", "rock'n'roll"], ["90", "s", "x"], ["end"], ["start"], ["a", "b"]]
    assert got == [reference(t) for t in texts]
    # an apostrophe at a row edge never joins two rows' words
    assert tokenize(pa.array(["it'", "s", "ab", "'c"])).to_pylist() == [["it"], ["s"], ["ab"], ["c"]]
    # both tokenizers; non-ASCII letters count as letters
    assert tokenize(pa.array(["Isn't fooBar's d\u00e9j\u00e0'\u00e9t\u00e9"]), "identifiers").to_pylist() == [
        ["isn't", "foo", "bar's", "d\u00e9j\u00e0'\u00e9t\u00e9"]]


def test_other_scripts_cjk_cyrillic_greek():
    texts = ["ПРИВЕТ, мир!", "日本語のテキスト。次の文", "Καλημέρα κόσμε", "naïve café — déjà vu", "١٢٣ arabic ٤"]
    got = tokenize(pa.array(texts)).to_pylist()
    assert got == [reference(t) for t in texts]
    assert got[0] == ["привет", "мир"]
    assert got[1] == ["日本語のテキスト", "次の文"]  # CJK has no spaces: a run up to the punctuation


def test_combining_marks_stay_in_the_word():
    decomposed = "cafe\u0301 nai\u0308ve"  # e + combining acute: Python's re would split here
    assert tokenize(pa.array([decomposed])).to_pylist() == [["cafe\u0301", "nai\u0308ve"]]
    assert tokenize(pa.array(["हिन्दी भाषा"])).to_pylist() == [["हिन्दी", "भाषा"]]


def test_matches_python_re_where_re_has_no_mark_quirk():
    rng = random.Random(7)
    pool = list("abcXYZ019_ .,;:!?-'\"\n\t()[]") + list("абвгдЖЗИ") + list("日本語中文")
    pool += ["€", "—", "“", "”", "é", "ß"]
    texts = ["".join(rng.choice(pool) for _ in range(rng.randint(0, 60))) for _ in range(300)]
    got = tokenize(pa.array(texts)).to_pylist()
    # Python's \w+ plus the contraction rule ("'" between two letters joins them; the pool has "'")
    assert got == [re.findall(r"\w+(?:'(?<=[^\W\d_]')(?=[^\W\d_])\w+)*", t.lower()) for t in texts]


def test_random_unicode_against_reference():
    rng = random.Random(11)
    pool = [chr(c) for c in range(0x20, 0x250) if chr(c) not in "İ"] + list("日本語中文ひらがなカタカナ한국어") + [
        "\u0301", "\u0308", "\u200b", "\u00a0", "\u2019", "😀", "\u203f", "\u2014", "\u3002"
    ]
    texts = ["".join(rng.choice(pool) for _ in range(rng.randint(0, 80))) for _ in range(500)]
    assert tokenize(pa.array(texts)).to_pylist() == [reference(t) for t in texts]


def test_empty_null_and_punctuation_only_rows():
    got = tokenize(pa.array(["", None, "   ", "!!! ...", "x"])).to_pylist()
    assert got == [[], [], [], [], ["x"]]
    assert tokenize(pa.array([], pa.string())).to_pylist() == []
    assert tokenize(pa.nulls(3)).to_pylist() == [[], [], []]


def test_rows_never_share_a_token():
    # adjacent rows end and start with word characters: the buffer reads "abcdef", tokens must not merge
    got = tokenize(pa.array(["abc", "def", "", "g h", "i"])).to_pylist()
    assert got == [["abc"], ["def"], [], ["g", "h"], ["i"]]
    toks = tokenize_flat(pa.array(["abc", "def", "", "g h"]))
    assert toks.offsets.tolist() == [0, 1, 2, 2, 4]


def test_sliced_chunked_and_large_string_inputs():
    arr = pa.array(["zero one", "Two Three", "four", "five six"])
    assert tokenize(arr.slice(1, 2)).to_pylist() == [["two", "three"], ["four"]]
    assert tokenize(pa.chunked_array([arr.slice(0, 1), arr.slice(3)])).to_pylist() == [["zero", "one"], ["five", "six"]]
    assert tokenize(arr.cast(pa.large_string())).to_pylist() == tokenize(arr).to_pylist()


def test_non_utf8_bytes_are_counted_and_nulled_not_raised():
    values = [b"good text", b"bad \xff\xfe bytes", None, "a str", b"\xc3\xa9t\xc3\xa9"]
    arr, bad = to_string_array(values)
    assert bad == 1
    assert arr.to_pylist() == ["good text", None, None, "a str", "été"]
    binary = pa.array([b"ok", b"\x80abc", b"fine"], pa.binary())
    arr2, bad2 = to_string_array(binary)
    assert bad2 == 1 and arr2.to_pylist() == ["ok", None, "fine"]
    # a string array that carries invalid UTF-8 (built unchecked) is caught too
    raw = pa.Array.from_buffers(pa.string(), 2, [None, pa.py_buffer(bytes([0, 0, 0, 0, 2, 0, 0, 0, 4, 0, 0, 0])),
                                                 pa.py_buffer(b"ok\xff\xfe")])
    arr3, bad3 = to_string_array(raw)
    assert bad3 == 1 and arr3.to_pylist() == ["ok", None]
    assert tokenize(binary).to_pylist() == [["ok"], [], ["fine"]]


def test_identifier_aware_tokenizer():
    text = "parseHTTPHeader_v2 fooBar XMLHttpRequest png_read_row getX"
    got = tokenize(pa.array([text]), "identifiers").to_pylist()[0]
    assert got == ["parse", "http", "header", "v2", "foo", "bar", "xml", "http", "request", "png", "read", "row",
                   "get", "x"]
    assert tokenize(pa.array([text])).to_pylist()[0][0] == "parsehttpheader_v2"


def test_unknown_tokenizer_is_an_error():
    with pytest.raises(ValueError, match="unknown tokenizer"):
        tokenize(pa.array(["x"]), "nope")
