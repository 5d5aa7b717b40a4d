"""Word tokenisation on Arrow string arrays, vectorised (no Python loop over strings).

Default tokens: the text lowercased, then the maximal runs of Unicode word characters (``\\w+``). A word
character is a letter, mark, number or connector punctuation (Unicode TR#18: categories ``L*``, ``M*``,
``N*``, ``Pc``, which includes ``_``). This is Python's ``re`` ``\\w`` plus combining marks, so words in
scripts that use marks (Devanagari, decomposed accents) stay whole. **Contractions stay one token**: an
apostrophe (``'`` or ``’``, the latter read as ``'``) between two letters (``L*``/``M*``) belongs to the
word, so ``don't``, ``it's``, ``we'll``, ``l’homme`` are one token each and a 10-word copy is 10 tokens.
Lowercasing is Arrow's ``utf8_lower`` (Unicode case mapping per code point). CJK text has no spaces, so a
CJK sentence is one token up to the next punctuation: the filter then compares sentences, which is still
exact.

The *identifier-aware* tokenizer also splits ``snake_case`` and ``camelCase``/``PascalCase`` names
(``parseHTTPHeader_v2`` -> ``parse http header v2``), which lets a prose mention ("the parse header
function") and a code name meet.

How: the UTF-8 bytes of a whole Arrow array are classified (:mod:`overlap.text.word_chars`: arithmetic for
ASCII, a code point table for the few non-ASCII characters, decoded with numpy), runs are found with
``np.diff`` and the word bytes are compacted into a new Arrow string array of tokens plus per-row token
offsets. Rows never share a token. The input must be valid UTF-8 (Arrow ``string``), which
:func:`~overlap.text.string_arrays.to_string_array` guarantees by counting and nulling invalid rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .string_arrays import _buffers, to_string_array
from .word_chars import _ascii_lower, _word_mask

__all__ = [
    "TOKENIZERS",
    "Tokenizer",
    "TokenSpans",
    "Tokens",
    "get_tokenizer",
    "split_tokens",
    "to_string_array",
    "tokenize",
    "tokenize_flat",
]

RIGHT_QUOTE = "\u2019"  # typographic apostrophe: read as "'"


@dataclass(frozen=True)
class Tokenizer:
    """How texts become tokens. ``identifiers`` splits snake_case and camelCase names."""

    lowercase: bool = True
    identifiers: bool = False

    @property
    def name(self) -> str:
        return "identifiers" if self.identifiers else "words"


TOKENIZERS = {"words": Tokenizer(), "identifiers": Tokenizer(identifiers=True)}


def get_tokenizer(tokenizer: str | Tokenizer | None) -> Tokenizer:
    if tokenizer is None:
        return TOKENIZERS["words"]
    if isinstance(tokenizer, Tokenizer):
        return tokenizer
    try:
        return TOKENIZERS[tokenizer]
    except KeyError:
        raise ValueError(f"unknown tokenizer {tokenizer!r}; choose one of {', '.join(TOKENIZERS)}") from None


@dataclass
class Tokens:
    """Tokens of a string array: flat ``tokens`` and ``offsets`` (rows+1) into it."""

    tokens: pa.Array  # string (or large_string) array of all tokens, row after row
    offsets: np.ndarray  # int64, len rows+1; row i's tokens are tokens[offsets[i]:offsets[i+1]]

    @property
    def counts(self) -> np.ndarray:
        return np.diff(self.offsets)

    def as_list_array(self) -> pa.ListArray:
        offs = self.offsets
        if len(self.tokens) < 2**31:
            return pa.ListArray.from_arrays(pa.array(offs.astype(np.int32)), self.tokens)
        return pa.LargeListArray.from_arrays(pa.array(offs), self.tokens)


# --------------------------------------------------------------------------------------------------
# Tokenisation


_CAMEL_1 = (r"(\p{Ll}|\p{Lo}|\p{Nd})(\p{Lu}|\p{Lt})", r"\1 \2")  # fooBar, foo2Bar
_CAMEL_2 = (r"(\p{Lu})(\p{Lu}\p{Ll})", r"\1 \2")  # HTTPHeader -> HTTP Header


def _prepare(values, tok: Tokenizer, quotes: bool = True) -> pa.Array:
    """Nulls as "", camelCase split for the identifier tokenizer, and (``quotes``) \u2019 read as '."""
    arr = values
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    if not isinstance(arr, pa.Array):
        arr, _ = to_string_array(arr)
    if pa.types.is_null(arr.type):
        arr = pa.array([""] * len(arr), pa.string())
    if arr.null_count:
        arr = pc.fill_null(arr, "")
    if tok.identifiers:
        for pattern, repl in (_CAMEL_1, _CAMEL_2, _CAMEL_1):
            arr = pc.replace_substring_regex(arr, pattern=pattern, replacement=repl)
    return _normalise_quotes(arr) if quotes else arr


def _normalise_quotes(arr: pa.Array) -> pa.Array:
    """The typographic apostrophe read as "'" (so "don\u2019t" and "don't" are one word)."""
    if len(arr):
        data, _ = _buffers(arr)
        if len(data) and data.max() >= 0x80:  # only non-ASCII text can hold one
            arr = pc.replace_substring(arr, pattern=RIGHT_QUOTE, replacement="'")
    return arr


def token_spans(data: np.ndarray, row_offsets: np.ndarray, tok: Tokenizer):
    """Word mask and token [start, end) byte positions of a UTF-8 buffer split into rows."""
    mask = _word_mask(data, underscore=not tok.identifiers, row_offsets=row_offsets)
    n = len(mask)
    if n == 0:
        return mask, np.zeros(0, np.int64), np.zeros(0, np.int64)
    # the places where the mask changes, in order: start, end, start, end, ... (one pass, one nonzero;
    # the mask framed by non-word bytes, so that an edge's index is its byte position)
    framed = np.zeros(n + 2, dtype=bool)
    framed[1:-1] = mask
    edges = np.flatnonzero(framed[1:] != framed[:-1])
    del framed
    starts, ends = edges[0::2], edges[1::2]
    # a row boundary inside a run of word bytes splits it: rows never share a token
    inner = row_offsets[1:-1]
    inner = inner[(inner > 0) & (inner < n)]
    if len(inner):
        cut = np.unique(inner[mask[inner] & mask[inner - 1]])
        if len(cut):
            k = np.searchsorted(starts, cut, side="right")  # the token holding each cut is k - 1
            starts = np.insert(starts, k, cut)
            ends = np.insert(ends, k - 1, cut)
    return mask, starts, ends


def compact_tokens(data: np.ndarray, mask: np.ndarray, starts: np.ndarray, ends: np.ndarray, tok: Tokenizer,
                   ascii_only: bool) -> pa.Array:
    """The token strings (lowercased when the tokenizer says so) as one Arrow string array."""
    lengths = ends - starts
    total = int(lengths.sum())
    if tok.lowercase:
        data = _ascii_lower(data)
    words = np.compress(mask, data) if total else np.zeros(0, np.uint8)
    if total != len(words):  # tokens were dropped (e.g. a partial token at a block edge)
        keep = np.zeros(len(data) + 1, np.int32)
        np.add.at(keep, starts, 1)
        np.add.at(keep, ends, -1)
        words = data[np.cumsum(keep[:-1]) > 0]
    tok_offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=tok_offsets[1:])
    if total < 2**31 - 1:
        tokens = pa.StringArray.from_buffers(
            len(lengths), pa.py_buffer(tok_offsets.astype(np.int32)), pa.py_buffer(words)
        )
    else:  # pragma: no cover - only for > 2 GiB of words in one call
        tokens = pa.LargeStringArray.from_buffers(len(lengths), pa.py_buffer(tok_offsets), pa.py_buffer(words))
    if tok.lowercase and not ascii_only:
        tokens = pc.utf8_lower(tokens)
    return tokens


def tokenize_flat(values, tokenizer: str | Tokenizer | None = None) -> Tokens:
    """Tokenise a valid UTF-8 Arrow string array (nulls count as empty). Returns flat tokens + offsets."""
    tok = get_tokenizer(tokenizer)
    arr = _prepare(values, tok)
    data, row_offsets = _buffers(arr)
    ascii_only = not bool((data >= 0x80).any()) if len(data) else True
    mask, starts, ends = token_spans(data, row_offsets, tok)
    tokens = compact_tokens(data, mask, starts, ends, tok, ascii_only)
    row_tok = np.searchsorted(starts, row_offsets, side="left").astype(np.int64)
    return Tokens(tokens=tokens, offsets=row_tok)


def tokenize(values, tokenizer: str | Tokenizer | None = None) -> pa.ListArray:
    """Tokenise text values into an Arrow list array (one list of tokens per row; null rows -> [])."""
    arr, _ = to_string_array(values) if not isinstance(values, pa.Array) else (values, 0)
    if isinstance(arr, pa.Array) and (pa.types.is_binary(arr.type) or pa.types.is_large_binary(arr.type)):
        arr, _ = to_string_array(arr)
    return tokenize_flat(arr, tokenizer).as_list_array()


@dataclass
class TokenSpans:
    """Where the tokens of a string array are, without copying them out: byte spans into ``data``.

    ``data`` holds the prepared bytes (original case) and can be read 8 bytes past its end (for
    :func:`~overlap.text.ngram.hashing.token_values`); ``wide`` lists the tokens that hold non-ASCII bytes.
    """

    data: np.ndarray  # uint8, len nbytes + 8 (a view of the Arrow buffer when it has the room)
    nbytes: int
    starts: np.ndarray  # int64 byte start of each token
    ends: np.ndarray  # int64 byte end of each token
    row_tokens: np.ndarray  # int64 len rows+1: row i's tokens are [row_tokens[i], row_tokens[i+1])
    wide: np.ndarray  # int64 indexes of the tokens with non-ASCII bytes
    lowercase: bool = True
    input_bytes: int = 0  # bytes of the text before \u2019 became '

    def __len__(self) -> int:
        return len(self.starts)

    def strings(self, positions: np.ndarray) -> pa.Array:
        """The tokens at ``positions`` as a string array, lowercased as the tokenizer says."""
        positions = np.asarray(positions, dtype=np.int64)
        s, e = self.starts[positions], self.ends[positions]
        lengths = e - s
        offsets = np.zeros(len(positions) + 1, np.int64)
        np.cumsum(lengths, out=offsets[1:])
        total = int(offsets[-1])
        words = self.data[np.repeat(s - offsets[:-1], lengths) + np.arange(total, dtype=np.int64)]
        if self.lowercase:
            words = _ascii_lower(words)
        if total < 2**31 - 1:
            out = pa.StringArray.from_buffers(len(positions), pa.py_buffer(offsets.astype(np.int32)),
                                              pa.py_buffer(words))
        else:  # pragma: no cover - only for > 2 GiB of words in one call
            out = pa.LargeStringArray.from_buffers(len(positions), pa.py_buffer(offsets), pa.py_buffer(words))
        if self.lowercase and total and words.max() >= 0x80:
            out = pc.utf8_lower(out)
        return out


def split_tokens(values, tokenizer: str | Tokenizer | None = None) -> TokenSpans:
    """The token spans of a valid UTF-8 Arrow string array (nulls count as empty); the scan's fast path.

    Same tokens as :func:`tokenize_flat`, but nothing is copied out: the scan hashes the tokens' bytes
    where they are (:func:`~overlap.text.ngram.hashing.token_values`) and builds token strings only for
    the few windows it must verify."""
    tok = get_tokenizer(tokenizer)
    data, nbytes, row_offsets, input_bytes = prepared_bytes(values, tok)
    _, starts, ends = token_spans(data[:nbytes], row_offsets, tok)
    wide = np.zeros(0, np.int64)
    if len(starts) and data[:nbytes].max() >= 0x80:  # the tokens a non-ASCII byte falls inside
        hi = np.flatnonzero(data[:nbytes] >= 0x80)
        k = np.searchsorted(starts, hi, side="right") - 1
        ok = (k >= 0) & (hi < ends[np.maximum(k, 0)])
        wide = np.unique(k[ok])
    row_tok = np.searchsorted(starts, row_offsets, side="left").astype(np.int64)
    return TokenSpans(data=data, nbytes=nbytes, starts=starts, ends=ends, row_tokens=row_tok, wide=wide,
                      lowercase=tok.lowercase, input_bytes=input_bytes)


def prepared_bytes(values, tok: Tokenizer, quotes: bool = True) -> tuple[np.ndarray, int, np.ndarray, int]:
    """(bytes of the prepared texts, readable 8 bytes past their end; their length; row byte offsets;
    bytes of the text before \u2019 became '). ``quotes=False``: \u2019 left as it is (the caller reads it
    as ')."""
    arr = _prepare(values, tok, quotes=False)
    input_bytes = len(_buffers(arr)[0])
    if quotes:
        arr = _normalise_quotes(arr)
    data, row_offsets = _buffers(arr)
    nbytes = len(data)
    if nbytes:
        lo = int(np.frombuffer(arr.buffers()[1], np.int64 if pa.types.is_large_string(arr.type) else np.int32)[
            arr.offset])
        buf = arr.buffers()[2]
        if buf.size >= lo + nbytes + 8:  # room to read past the end: no copy
            data = np.frombuffer(buf, np.uint8)[lo : lo + nbytes + 8]
        else:
            padded = np.zeros(nbytes + 8, np.uint8)
            padded[:nbytes] = data
            data = padded
    else:
        data = np.zeros(8, np.uint8)
    return data, nbytes, row_offsets, input_bytes
