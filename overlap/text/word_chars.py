"""Which bytes of UTF-8 text belong to a word (a word character, or a contraction's apostrophe), in numpy.

A word character is a letter, mark, number or connector punctuation (Unicode categories ``L*``, ``M*``,
``N*``, ``Pc``); ASCII bytes are classified by arithmetic, the few non-ASCII characters by a code point table
built once per process (only when non-ASCII text appears). An apostrophe between two letters of one row
belongs to the word (``don't`` is one token).
"""

from __future__ import annotations

import unicodedata

import numpy as np

_CP_CLASS: np.ndarray | None = None  # uint8[0x110000], built on first non-ASCII use
_WORD, _LETTER = np.uint8(1), np.uint8(2)  # class bits: word character (L, M, N, Pc); letter (L, M)
APOSTROPHE = 0x27


def codepoint_classes_built() -> np.ndarray | None:
    """The code point class table when this process built it already, else None."""
    return _CP_CLASS


# Planes 4-13 hold no assigned character in any Unicode version to date and planes 15-16 are private use
# (category Co): no word character there. Reading only the other planes' categories builds the table in
# half the time (tests/text/test_text_tokenize_compiled.py checks it against every code point).
_CLASSED_PLANES = ((0x80, 0x40000), (0xE0000, 0xF0000))


def _codepoint_class_table() -> np.ndarray:
    global _CP_CLASS
    if _CP_CLASS is None:
        cat = unicodedata.category
        table = np.zeros(0x110000, dtype=np.uint8)
        # once per process, only when non-ASCII text appears (~0.2-0.3 s)
        classes = dict.fromkeys(("Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me"), 3)  # letters and marks
        classes.update(dict.fromkeys(("Nd", "Nl", "No", "Pc"), 1))  # other word characters
        for lo, hi in _CLASSED_PLANES:
            table[lo:hi] = [classes.get(cat(chr(cp)), 0) for cp in range(lo, hi)]
        _CP_CLASS = table
    return _CP_CLASS


def _ascii_word(data: np.ndarray, underscore: bool) -> np.ndarray:
    """[0-9A-Za-z] (and `_`) per byte, by arithmetic (a table gather is ~3x slower)."""
    mask = ((data | np.uint8(0x20)) - np.uint8(97)) < np.uint8(26)
    mask |= (data - np.uint8(48)) < np.uint8(10)
    if underscore:
        mask |= data == np.uint8(95)
    return mask


def _ascii_lower(data: np.ndarray) -> np.ndarray:
    upper = ((data - np.uint8(65)) < np.uint8(26)).view(np.uint8)
    return data + (upper << np.uint8(5))


def _word_mask(data: np.ndarray, underscore: bool, row_offsets: np.ndarray | None = None) -> np.ndarray:
    """bool per byte: True where the byte belongs to a word character (or a contraction's apostrophe)."""
    mask = _ascii_word(data, underscore)
    non_ascii = np.flatnonzero(data >= 0x80) if len(data) and data.max() >= 0x80 else np.zeros(0, np.int64)
    letter_na = np.zeros(0, bool)
    if len(non_ascii):
        b = data[non_ascii].astype(np.uint32)
        lead = b >= 0xC0
        lead_pos = non_ascii[lead]
        lb = b[lead]
        n = len(data)

        def nxt(k: int) -> np.ndarray:
            return data[np.minimum(lead_pos + k, n - 1)].astype(np.uint32) & 0x3F

        cp = np.where(
            lb < 0xE0,
            ((lb & 0x1F) << 6) | nxt(1),
            np.where(
                lb < 0xF0,
                ((lb & 0x0F) << 12) | (nxt(1) << 6) | nxt(2),
                ((lb & 0x07) << 18) | (nxt(1) << 12) | (nxt(2) << 6) | nxt(3),
            ),
        )
        cls = _codepoint_class_table()[np.minimum(cp, 0x10FFFF)]
        # every non-ASCII byte takes the class of the lead byte of its character
        group = np.cumsum(lead) - 1
        byte_cls = np.where(group >= 0, cls[np.maximum(group, 0)], np.uint8(0))
        mask[non_ascii] = (byte_cls & _WORD) > 0
        letter_na = (byte_cls & _LETTER) > 0
    _join_apostrophes(data, mask, non_ascii, letter_na, row_offsets)
    return mask


def _join_apostrophes(data: np.ndarray, mask: np.ndarray, non_ascii: np.ndarray, letter_na: np.ndarray,
                      row_offsets: np.ndarray | None) -> None:
    """Mark an apostrophe between two letters of one row as a word byte: "don't" is one token."""
    apos = np.flatnonzero(data == np.uint8(APOSTROPHE))
    if not len(apos):
        return
    apos = apos[(apos > 0) & (apos < len(data) - 1)]
    if row_offsets is not None and len(apos):  # never at a row's first or last byte
        k = np.searchsorted(row_offsets, apos, side="right")
        inner = (row_offsets[k - 1] < apos) & (apos + 1 < row_offsets[np.minimum(k, len(row_offsets) - 1)])
        apos = apos[inner]
    if not len(apos):
        return

    def letter(pos: np.ndarray) -> np.ndarray:
        b = data[pos]
        out = ((b | np.uint8(0x20)) - np.uint8(97)) < np.uint8(26)
        wide = np.flatnonzero(b >= 0x80)
        if len(wide):  # a byte of a non-ASCII character: that character's class
            out[wide] = letter_na[np.searchsorted(non_ascii, pos[wide])]
        return out

    mask[apos[letter(apos - 1) & letter(apos + 1)]] = True
