"""The compiled path of the chunk scan: when it is used, and what it is given.

:mod:`.kernels` (numba, a dependency) does the per-byte and per-window work of a chunk in two passes:
tokens and their values, then candidate windows; then it checks the candidates word by word and measures
the pair view's runs. When numba cannot be imported or cannot compile here, or ``OVERLAP_NGRAM_JIT=0`` is
set, the scan runs the numpy path instead (:mod:`.match` alone): same candidates, same flags
(``tests/text/test_text_jit.py`` holds them to it), slower.

numba compiles the kernels on their first use in a process and caches the machine code next to the
module (``__pycache__``), or, in a read-only install, in the user's cache folder (``NUMBA_CACHE_DIR`` to
choose it); a process then loads it in a fraction of a second. Nothing here is imported before the scan
needs it, so ``overlap --help`` and a worker's start never load numba.
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass

import numpy as np

from ..tokenize import TokenSpans, prepared_bytes
from ..word_chars import _codepoint_class_table, codepoint_classes_built
from . import match
from .hashing import _BINV, _SEED64, POWERS, U64, string_values, unaligned_u64
from .index import BenchIndex
from .jit_tables import _bench_words, _directory, _Tables, _tables

_STATE: dict = {}


def kernels():
    """The compiled kernels, or None (numba missing, failing, or turned off with OVERLAP_NGRAM_JIT=0).

    The first call in a process compiles them (or loads them from numba's cache): ``load_seconds()``."""
    if "kernels" not in _STATE:
        mod = None
        t = time.perf_counter()
        if os.environ.get("OVERLAP_NGRAM_JIT", "1") != "0":
            try:
                from . import kernels as mod

                _smoke(mod)
            except Exception:  # noqa: BLE001 - numba missing, or its compiler failing here: the numpy path
                mod = None
        _STATE["kernels"], _STATE["seconds"] = mod, time.perf_counter() - t
    return _STATE["kernels"]


def load_seconds() -> float:
    """Seconds the first ``kernels()`` call took in this process (compiling, or loading the cache)."""
    kernels()
    return _STATE["seconds"]


def _byte_class(underscore: bool) -> np.ndarray:
    """Per byte: bit 1 an ASCII word character ([0-9A-Za-z], and ``_`` when it is one), bit 2 an ASCII
    letter, bit 4 a byte of a non-ASCII character, bit 8 the apostrophe."""
    b = np.arange(256)
    letter = (b < 128) & ((b | 0x20) >= 97) & ((b | 0x20) <= 122)
    word = letter | ((b >= 48) & (b <= 57)) | ((b == 95) & underscore)
    return (word.astype(np.uint8) | (letter.astype(np.uint8) << 1) | ((b >= 128).astype(np.uint8) << 2)
            | ((b == 0x27).astype(np.uint8) << 3))


_BYTES = {u: _byte_class(u) for u in (False, True)}
_NO_CLASSES = np.zeros(0, np.uint8)


def _smoke(mod) -> None:
    """Compile (or load) every kernel on tiny inputs, so that a failure shows here, not mid-scan."""
    data = np.frombuffer(b"ab c\xc3\xa9d e'f" + bytes(8), np.uint8)
    offs = np.array([0, 4, 11], np.int64)
    classes = np.zeros(256, np.uint8)
    classes[0xE9] = 3  # é: a letter (the real table is built only for text that needs it)
    out = mod.tokenise(data, unaligned_u64(data), offs, _BYTES[True], classes, True, U64(8), _SEED64,
                       *_buffers(len(data), 2))
    assert out == (4, 1, True)
    quoted = np.frombuffer("a\u2019b".encode() + bytes(8), np.uint8)
    pos = np.empty(2, np.int64)
    assert mod.right_quotes(unaligned_u64(quoted), 5, pos) == 1 and pos[0] == 1
    shorter, offsets = np.zeros(13, np.uint8), np.empty(2, np.int64)
    assert mod.drop_right_quotes(quoted, 5, np.array([0, 5], np.int64), pos[:1], shorter, offsets) == 3
    assert bytes(shorter[:3]) == b"a'b" and offsets.tolist() == [0, 3]
    ids = np.array([1, 2, 3], np.int32)
    runs = mod.longest_runs(ids, np.array([0, 3]), ids, np.array([0, 3]), np.zeros(1, np.int64),
                            np.zeros(1, np.int64), 100, 4)
    assert runs[0, 0] == 3
    tables = _Tables.build([np.zeros(0, U64), np.array([5], U64), np.array([5], U64)])
    hits = [np.empty(4, d) for d in (np.int64, np.int32, np.int8, np.int64, np.int64, U64)]
    mod.window_hits(np.zeros(4, U64), offs[:2], 0, np.array([2], np.int64), 0, np.zeros(2, U64), U64(63),
                    POWERS.get(2)[0], U64(_BINV), *tables.args(), *hits)
    one = np.ones(1, np.int64)
    vals = np.array([7, 5], U64)  # token "ab" of the data above: bench word 0, "ab"
    edges = np.array([0, 2, 0, 2], np.int64)  # token spans as split_values gives them: strided views
    got = mod.verify_hits(np.zeros(1, np.int64), np.zeros(1, np.int64), np.ones(1, np.bool_), np.zeros(1, np.int64),
                          one, np.zeros(1, U64), offs[:2], vals, edges[0::2], edges[1::2], data,
                          True, one, np.zeros(3, np.int64), np.zeros(1, np.int64), np.zeros(1, np.int32),
                          np.zeros(1, np.int32), np.array([0, 1], np.int64), np.array([0, 7], U64),
                          np.frombuffer(b"ab", np.uint8), np.array([0, 2], np.int64),
                          *(np.empty(1, d) for d in (np.int64, np.int64, np.int64, np.int32, np.int64, U64, np.bool_)),
                          np.empty(1, np.int64), np.empty(1, np.int64))
    assert got == (1, 0)
    vocab = np.array([7], U64)
    d, shift = _directory(vocab)
    out = np.empty(2, np.int32)
    assert mod.token_ids(np.array([0, 1], np.int64), vals, edges[0::2], edges[1::2], data, True,
                         vocab, np.zeros(1, np.int64), d, U64(shift), np.frombuffer(b"ab", np.uint8),
                         np.array([0, 2], np.int64), out) == 0
    assert out.tolist() == [0, -1]
    zero, word = np.zeros(1, np.int64), np.frombuffer(b"ab", np.uint8)
    runs = mod.value_runs(vals[:1], np.array([0, 1], np.int64), edges[0::2], edges[1::2], data, True, zero, zero,
                          vals[:1], np.zeros(1, np.int32), np.array([0, 1], np.int64), word, np.array([0, 2], np.int64),
                          100)
    assert runs.tolist() == [[1, 0, 0]]
    where, found = np.empty(2, np.int64), np.empty(2, np.bool_)
    keys = np.array([5, 9], U64)
    d, shift = _directory(keys)
    mod.find_sorted(keys, d, U64(shift), np.array([5, 6], U64), where, found)
    assert found.tolist() == [True, False]


def split_values(index: BenchIndex, texts) -> tuple[TokenSpans, np.ndarray]:
    """The token spans of a chunk and the value of every token (as ``split_tokens`` and ``ChunkTokens``)."""
    k = kernels()
    tok = index.tokenizer
    data, nbytes, row_offsets, input_bytes = prepared_bytes(texts, tok, quotes=False)
    if nbytes:  # the typographic apostrophe read as ': the bytes without it
        data, nbytes, row_offsets = _without_right_quotes(k, data, nbytes, row_offsets)
    words = unaligned_u64(data)
    nrows = len(row_offsets) - 1
    out = _buffers(nbytes, nrows)
    args = (data, words, row_offsets, _BYTES[not tok.identifiers])
    rest = (tok.lowercase, U64(min(int(index.max_token_bytes), 1 << 62)), _SEED64, *out)
    built = codepoint_classes_built()  # (an empty table: built only once a text needs it)
    nt, nw, done = k.tokenise(*args, _NO_CLASSES if built is None else built, *rest)
    if not done:  # non-ASCII text: with the code point classes
        nt, nw, done = k.tokenise(*args, _codepoint_class_table(), *rest)
    edges, values, wide, row_tokens = out[0][: 2 * nt], out[1][:nt], out[2][:nw], out[3]
    starts, ends = edges[0::2], edges[1::2]  # (strided views: the kernel writes a token's two edges together)
    spans = TokenSpans(data=data, nbytes=nbytes, starts=starts, ends=ends, row_tokens=row_tokens, wide=wide,
                       lowercase=tok.lowercase, input_bytes=input_bytes)
    if nw:  # tokens with non-ASCII bytes: Unicode lowercasing (Arrow's), then the same values
        values[wide] = string_values(spans.strings(wide), index.max_token_bytes, fold=tok.lowercase)
    return spans, values


def _without_right_quotes(k, data: np.ndarray, nbytes: int, row_offsets: np.ndarray):
    """(bytes, their length, row offsets) with every typographic apostrophe (U+2019) written as ' (the
    bytes padded by 8); the bytes as they are when they hold none."""
    pos = np.empty(max(1024, nbytes // 256), np.int64)
    found = int(k.right_quotes(unaligned_u64(data), nbytes, pos))
    if not found:
        return data, nbytes, row_offsets
    if found > len(pos):
        pos = np.empty(found, np.int64)
        k.right_quotes(unaligned_u64(data), nbytes, pos)
    out = np.zeros(nbytes + 8, np.uint8)
    offsets = np.empty_like(row_offsets)
    n = int(k.drop_right_quotes(data, nbytes, row_offsets, pos[:found], out, offsets))
    return out[: n + 8], n, offsets  # (tokenise reads the length of the bytes from the array)


def _buffers(nbytes: int, nrows: int) -> tuple[np.ndarray, ...]:
    """Arrays for ``tokenise``: (edges, values, wide, row_tokens, cls, cls_words).

    A chunk's arrays are taken again for a later chunk once nothing holds them any more (a scan drops a
    chunk's tokens before it reads the next): fresh memory costs a page fault per page on first touch,
    which for these arrays took as long as the tokenising itself. Two sets at most are kept."""
    cap = (nbytes + nrows) // 2 + 1
    pool = _STATE.setdefault("buffers", [])
    # the references to a free array: the set's tuple, getrefcount's argument and the generator's variable
    free = [b for b in pool if len(b[1]) >= cap and all(sys.getrefcount(a) <= 3 for a in b)]
    if free:
        held = free[0]
    else:
        cap = max(cap, 1 << 16)
        held = (np.empty(2 * cap, np.int64), np.empty(cap, U64), np.empty(cap, np.int64),
                np.empty(2 * cap + 72, np.uint8))
        pool[:] = [b for b in pool if len(b[1]) >= cap][-1:] + [held]
    edges, values, wide, cls = held
    return edges, values, wide, np.empty(nrows + 1, np.int64), cls, unaligned_u64(cls)


@dataclass
class Hits:
    """Candidate windows of a chunk: flat start, n, real table (else boilerplate), table entries
    ``first .. first + count``, and the window hash."""

    pos: np.ndarray
    n: np.ndarray
    real: np.ndarray
    first: np.ndarray
    count: np.ndarray
    hash: np.ndarray


def window_hits(index: BenchIndex, values: np.ndarray, row_tokens: np.ndarray) -> Hits:
    """The windows inside rows that pass the prefilter and whose hash is in a table of their n."""
    tables = _tables(index)
    ns = np.asarray(index.ns, np.int64)
    nmin_k = int(np.argmin(ns))
    fixed = (ns, nmin_k, index.prefilter, U64(64 - index._word_bits), POWERS.get(int(ns.max()))[0], U64(_BINV),
             *tables.args())
    parts, row, cap = [], 0, 4096
    while row < len(row_tokens) - 1:
        out = (np.empty(cap, np.int64), np.empty(cap, np.int32), np.empty(cap, np.int8), np.empty(cap, np.int64),
               np.empty(cap, np.int64), np.empty(cap, U64))
        got, row = kernels().window_hits(values, row_tokens, row, *fixed, *out)
        parts.append(tuple(a[:got] for a in out))
        cap *= 4  # a chunk with many candidates: the next call with room for more
    cols = [np.concatenate(c) for c in zip(*parts, strict=True)] if len(parts) != 1 else list(parts[0])
    if not parts:
        cols = [np.zeros(0, d) for d in (np.int64, np.int32, np.int8, np.int64, np.int64, U64)]
    pos, k, real, first, count, hsh = cols
    return Hits(pos=pos, n=ns[k].astype(np.int32), real=real.astype(bool), first=first, count=count, hash=hsh)


def token_ids(index: BenchIndex, tokens, positions: np.ndarray) -> np.ndarray | None:
    """Bench vocabulary ids of the chunk tokens at ``positions`` (``ChunkTokens.ids_at``), or None when the
    compiled look-up does not apply (two bench words with one value)."""
    words = _bench_words(index)
    if words is None:
        return None
    sv, order, dirs, shift, data, offsets = words.lookup
    spans = tokens.spans
    out = np.empty(len(positions), np.int32)
    undecided = kernels().token_ids(positions, tokens.values, spans.starts, spans.ends, spans.data,
                                    bool(spans.lowercase), sv, order, dirs, U64(shift), data, offsets, out)
    if undecided:  # non-ASCII words: Arrow's Unicode lowercasing, then the words compared
        k = np.flatnonzero(out == -2)
        p = positions[k]
        lengths = spans.ends[p] - spans.starts[p]
        out[k] = index.lookup_values(tokens.values[p], np.zeros(len(k), bool), lengths,
                                     lambda sel: spans.strings(p[sel]))
    return out


def record_hits(index: BenchIndex, tokens, row_tokens: np.ndarray, acc, hits: Hits) -> None:
    """Verify the candidate windows word by word in the compiled loop and keep the exact matches in ``acc``:
    ``match.record_hits``'s result, without its per-candidate array passes in Python."""
    if not len(hits.pos):
        return
    words = _bench_words(index)
    if words is None:
        match.record_hits(index, tokens, row_tokens, acc, hits)
        return
    ns = np.asarray(index.ns, np.int64)
    k = np.zeros(len(hits.n), np.int64)
    for j, n in enumerate(index.ns):
        k[hits.n == n] = j
    total = int(hits.count.sum())
    out = tuple(np.empty(total, d) for d in (np.int64, np.int64, np.int64, np.int32, np.int64, U64, np.bool_))
    und = (np.empty(total, np.int64), np.empty(total, np.int64))
    spans = tokens.spans
    got, nund = kernels().verify_hits(
        np.asarray(hits.pos, np.int64), k, np.asarray(hits.real, np.bool_), np.asarray(hits.first, np.int64),
        np.asarray(hits.count, np.int64), np.asarray(hits.hash, U64), row_tokens, tokens.values, spans.starts,
        spans.ends, spans.data, bool(spans.lowercase), ns, _tables(index).key_bounds, *words.verify, *out, *und)
    row, pos, kk, item, bpos, hsh, real = (a[:got] for a in out)
    n = ns[kk].astype(np.int32)
    if real.any():
        acc.row.append(row[real])
        acc.pos.append(pos[real])
        acc.n.append(n[real])
        acc.item.append(item[real])
        acc.bpos.append(bpos[real])
        acc.hash.append(hsh[real])
    if not real.all():
        bp = ~real
        acc.bp_row.append(row[bp])
        acc.bp_pos.append(pos[bp])
        acc.bp_n.append(n[bp])
    if nund:  # a non-ASCII word to compare: Arrow lowercases it (the numpy path's verification)
        q, entry = und[0][:nund], und[1][:nund]
        c = hits.pos[q]
        r = np.searchsorted(row_tokens, c, side="right") - 1
        for j, n in enumerate(index.ns):
            for is_real in (True, False):
                sel = np.flatnonzero((k[q] == j) & (hits.real[q] == is_real))
                if len(sel):
                    match.keep_verified(index, index.tables[n], is_real, tokens, c[sel], r[sel], entry[sel],
                                        np.ones(len(sel), np.int64), hits.hash[q][sel], row_tokens, acc)


def find_sorted(keys: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(position in the sorted ``keys``, found) of each value: ``BenchIndex.lookup_values``'s ``find``.
    The directory of the keys' top bits is built once per keys array (the bench vocabulary's values)."""
    held = _STATE.get("find_sorted")
    if held is None or held[0] is not keys:
        held = (keys, *_directory(keys))
        _STATE["find_sorted"] = held
    where, found = np.empty(len(values), np.int64), np.empty(len(values), np.bool_)
    kernels().find_sorted(keys, held[1], U64(held[2]), np.ascontiguousarray(values, U64), where, found)
    return where, found


def value_runs(index: BenchIndex, tokens, rows: np.ndarray, items: np.ndarray, budget: int) -> np.ndarray | None:
    """(length, train position, bench position) per pair (chunk row, bench item), on the word values; length
    -1: over the budget of equal positions, -2: not confirmed word by word (``kernels.value_runs``). None
    when two bench words share a value (then the pairs are measured by ids)."""
    words = _bench_words(index)
    if words is None:
        return None
    spans = tokens.spans
    _, _, ids, offsets, _, data, vocab_offsets = words.verify
    return kernels().value_runs(tokens.values, spans.row_tokens, spans.starts, spans.ends, spans.data,
                                bool(spans.lowercase), np.asarray(rows, np.int64), np.asarray(items, np.int64),
                                words.bench_values, ids, offsets, data, vocab_offsets, int(budget))


def pair_runs_many(index: BenchIndex, train: np.ndarray, train_offsets: np.ndarray, rows: np.ndarray,
                   items: np.ndarray, budget: int) -> np.ndarray:
    """(length, train position, bench position) per pair (train row, bench item); length -1: over the
    budget of equal positions (the caller uses the method for repetitive texts)."""
    return kernels().longest_runs(np.ascontiguousarray(train, np.int32), np.asarray(train_offsets, np.int64),
                                  np.ascontiguousarray(index.ids, np.int32), np.asarray(index.offsets, np.int64),
                                  np.asarray(rows, np.int64), np.asarray(items, np.int64), int(budget),
                                  max(1, len(index.vocab)))
