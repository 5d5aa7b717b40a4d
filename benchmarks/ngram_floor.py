"""The floor of the n-gram text check: the simplest fast C implementation of the same work, run in-process.

What it does per train row, on the same UTF-8 bytes the scan reads (an Arrow string array's buffers):

1. tokenise: maximal runs of word characters (``[A-Za-z0-9_]``, and non-ASCII characters decoded and
   classed by the scan's code point table: letters, marks, numbers, connector punctuation), an apostrophe
   (``'``, or the typographic ``’`` read as ``'``) between two letters joining a word: the scan's tokenizer;
2. hash: each word's 64-bit value from its bytes (the scan's ``token_values``: case-folded 8-byte words,
   seeded, chained through a mix; a word with non-ASCII bytes or a ``’`` is first copied with ``’`` as ``'``
   and its ASCII capitals lowered, and hashed unfolded, as the scan hashes Arrow's lowercased word: the
   workload's non-ASCII letters are lowercase, so that is the scan's value there), then the rolling
   polynomial hash of every window of the smallest n (``sum v[i+t] * B**t mod 2**64``, the scan's window
   hash, updated in O(1) per word);
3. look up: a **prefilter that fits in L2** (a blocked Bloom filter of 2**22 bits = 512 KiB over the
   smallest n's bench window hashes: one 64-bit word per hash, two bits set in it; ~1.5 % of train
   windows pass) and, only for the windows that pass it, an exact open-addressing table per n of
   the bench index's hashes (real n-grams with their items, and boilerplate n-grams). A window of a larger
   n can only match where the smallest-n window at its start is a bench window, so its hash is computed
   from the row's word values only there;
4. flags: per row, the real hits that touch no boilerplate hit (span masking), counted per (n, bench
   item) as distinct shared n-grams: the scan's ``train_row, n, item, shared``.

It uses the bench index the scan uses (its tables hold the benchmark's n-gram set, boilerplate already
decided), so both answer the same question with the same hashes and must give the same flags; the
benchmark checks that. It does not verify hits word by word (a 64-bit hash; hits are a few per thousand
rows, so verification would cost nothing measurable) and lowercases only ASCII letters (the scan runs
Arrow's Unicode lowercasing on its non-ASCII words: more work, which the floor leaves out).
"""

from __future__ import annotations

import ctypes
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pyarrow as pa

PREFILTER_BITS = 22  # 512 KiB: fits the L2 cache of one core

FLOOR_C = r"""
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
typedef uint64_t u64;
#define MAXN 64
static const u64 M1 = 0xFF51AFD7ED558CCDULL, M2 = 0xC4CEB9FE1A85EC53ULL, FOLD = 0x2020202020202020ULL;
static inline u64 mix(u64 h) { h *= M1; h ^= h >> 32; h *= M2; return h; }
static const unsigned char *lim;  /* end of the readable bytes: a word near it is read byte by byte */
static inline u64 load8(const unsigned char *p) {
  u64 w = 0;
  if (p + 8 <= lim) memcpy(&w, p, 8); else if (p < lim) memcpy(&w, p, (size_t)(lim - p));
  return w;
}
static unsigned char cls[256];  /* 1: ASCII word byte; 2: ASCII letter */
static const unsigned char *cp_cls;  /* per code point: 1 word character, 2 letter */
static unsigned char tbuf[4096 + 16];  /* a non-ASCII word, ’ read as ', ASCII capitals lowered */
static const unsigned char *tlim;
/* class of the non-ASCII character at p (valid UTF-8), its length in *n */
static inline int uclass(const unsigned char *p, const unsigned char *end, int *n) {
  unsigned b = *p, cp;
  if (b < 0xC0) { *n = 1; return 0; }
  if (b < 0xE0) { *n = 2; cp = b & 0x1F; } else if (b < 0xF0) { *n = 3; cp = b & 0x0F; } else { *n = 4; cp = b & 0x07; }
  for (int k = 1; k < *n; k++) cp = (cp << 6) | ((p + k < end ? p[k] : 0) & 0x3F);
  return cp_cls[cp > 0x10FFFF ? 0x10FFFF : cp];
}
static inline int letter_at(const unsigned char *p, const unsigned char *end) {
  int n;
  return *p < 0x80 ? (cls[*p] & 2) : (uclass(p, end, &n) & 2);
}
/* whether the character that ends at p (and starts at or after s) is a letter */
static inline int letter_before(const unsigned char *p, const unsigned char *s) {
  if (p <= s) return 0;
  if (p[-1] < 0x80) return cls[p[-1]] & 2;
  const unsigned char *q = p - 1;
  while (q > s && *q < 0xC0) q--;
  int n;
  return uclass(q, p, &n) & 2;
}

typedef struct { u64 *key; int32_t *val; u64 mask; int has_zero; int32_t zero_val; } table_t;
/* val >= 0: first posting (postings hold item ids, -1 ends a run); val == -1: boilerplate */
static inline int32_t probe(const table_t *t, u64 h) {
  if (h == 0) return t->has_zero ? t->zero_val : -2;
  u64 i = (h ^ (h >> 29)) & t->mask;
  for (;;) { u64 k = t->key[i]; if (k == h) return t->val[i]; if (!k) return -2; i = (i + 1) & t->mask; }
}

typedef struct { int32_t n, pos, item; u64 h; } hit_t;
static int cmp_hit(const void *a, const void *b) {
  const hit_t *x = a, *y = b;
  if (x->n != y->n) return x->n < y->n ? -1 : 1;
  if (x->item != y->item) return x->item < y->item ? -1 : 1;
  if (x->h != y->h) return x->h < y->h ? -1 : 1;
  return 0;
}

void floor_init(const unsigned char *cp_table) {
  cp_cls = cp_table;
  for (int c = 0; c < 256; c++) {
    int letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    cls[c] = (letter || (c >= '0' && c <= '9') || c == '_') | (letter << 1);
  }
}

/* Scan rows [0, nrows) of data (offsets int64 from 0). Writes flags (row, n, item, shared) to out (cap
   rows); returns the number written, -1 when out is too small, -2 when vbuf is. */
long floor_scan(const unsigned char *data, const int64_t *off, long nrows,
                const u64 *pre, int pre_bits, int nn, const int32_t *ns,
                u64 **tkey, int32_t **tval, const u64 *tmask, const int32_t *tzero, const int32_t *post,
                u64 fold, long max_bytes, int mask_spans, u64 seed, const u64 *bpow,
                u64 *vbuf, long vcap, int64_t *out, long cap) {
  static const u64 LOW[9] = {0, 0xFFULL, 0xFFFFULL, 0xFFFFFFULL, 0xFFFFFFFFULL, 0xFFFFFFFFFFULL,
                             0xFFFFFFFFFFFFULL, 0xFFFFFFFFFFFFFFULL, ~0ULL};
  table_t tab[8];
  for (int k = 0; k < nn; k++) {
    tab[k].key = tkey[k]; tab[k].val = tval[k]; tab[k].mask = tmask[k];
    tab[k].has_zero = tzero[k] != -2; tab[k].zero_val = tzero[k];
  }
  lim = data + off[nrows];
  int nmin = ns[nn - 1];  /* ns sorted largest first: the prefilter's n is the last */
  u64 topn = bpow[nmin - 1], binv = bpow[MAXN];
  int shift = 64 - (pre_bits - 6);
  long nout = 0, hcap = 1024, nh = 0, nb = 0;
  hit_t *hits = malloc(hcap * sizeof(hit_t)), *bps = malloc(hcap * sizeof(hit_t));
  for (long r = 0; r < nrows; r++) {
    const unsigned char *p = data + off[r], *end = data + off[r + 1];
    long nt = 0;
    /* tokenise + word values */
    while (p < end) {
      if (*p < 0x80) { if (!(cls[*p] & 1)) { p++; continue; } }
      else { int n, k = uclass(p, end, &n); if (!(k & 1)) { p += n; continue; } }
      const unsigned char *s = p;
      int wide = 0;
      while (p < end) {
        unsigned char b = *p;
        if (b < 0x80) {
          if (cls[b] & 1) { p++; continue; }
          if (b == '\'' && p + 1 < end && letter_before(p, s) && letter_at(p + 1, end)) { p++; continue; }
          break;
        }
        int n, k = uclass(p, end, &n);
        if (k & 1) { p += n; wide = 1; continue; }
        /* the typographic apostrophe between two letters: the word's, read as ' */
        if (n == 3 && b == 0xE2 && p[1] == 0x80 && p[2] == 0x99 && p + 3 < end && letter_before(p, s)
            && letter_at(p + 3, end)) { p += 3; wide = 1; continue; }
        break;
      }
      long len = p - s;
      u64 w;
      const unsigned char *t = s;
      u64 f = fold;
      if (wide) {  /* ’ as ', ASCII capitals lowered; ASCII after that: folded as any ASCII word */
        long m = 0, ascii = 1;
        for (const unsigned char *q = s; q < p && m <= max_bytes && m < 4096; ) {
          if (q[0] == 0xE2 && q + 2 < p && q[1] == 0x80 && q[2] == 0x99) { tbuf[m++] = '\''; q += 3; continue; }
          unsigned char c = *q++;
          if (c >= 0x80) ascii = 0;
          tbuf[m++] = (c >= 'A' && c <= 'Z') ? c | 0x20 : c;
        }
        memset(tbuf + m, 0, 8);
        t = tbuf; len = m; f = ascii ? fold : 0;
        tlim = tbuf + m;
      }
      if (len > max_bytes) w = 0;
      else {
        const unsigned char *keep = lim;
        if (wide) lim = tlim;
        w = ((load8(t) | f) & LOW[len < 8 ? len : 8]) ^ seed;
        for (long k = 8; k < len; k += 8) {
          long rest = len - k;
          w = mix(w) ^ ((load8(t + k) | f) & LOW[rest < 8 ? rest : 8]);
        }
        w = mix(w);
        lim = keep;
      }
      if (nt == vcap) { free(hits); free(bps); return -2; }
      vbuf[nt++] = w;
    }
    if (nt < nmin) continue;
    /* rolling hash of the smallest n; the larger n only where the prefilter and the table say so */
    u64 h = 0;
    for (int t = 0; t < nmin; t++) h += vbuf[t] * bpow[t];
    nh = nb = 0;
    for (long i = 0;; i++) {
      u64 m = (1ULL << ((h >> 20) & 63)) | (1ULL << ((h >> 26) & 63));
      if ((pre[h >> shift] & m) == m) {
        for (int k = 0; k < nn; k++) {
          int n = ns[k];
          if (i + n > nt) continue;
          u64 hn = h;
          if (n != nmin) { hn = 0; for (int t = 0; t < n; t++) hn += vbuf[i + t] * bpow[t]; }
          int32_t v = probe(&tab[k], hn);
          if (v == -2) continue;
          if (nh + 64 > hcap || nb + 64 > hcap) {
            hcap *= 2; hits = realloc(hits, hcap * sizeof(hit_t)); bps = realloc(bps, hcap * sizeof(hit_t));
          }
          if (v == -1) { bps[nb].n = n; bps[nb].pos = (int32_t)i; nb++; continue; }
          for (int32_t q = v; post[q] >= 0; q++) {
            if (nh + 1 > hcap) { hcap *= 2; hits = realloc(hits, hcap * sizeof(hit_t));
                                 bps = realloc(bps, hcap * sizeof(hit_t)); }
            hits[nh].n = n; hits[nh].pos = (int32_t)i; hits[nh].item = post[q]; hits[nh].h = hn; nh++;
          }
        }
      }
      if (i + nmin >= nt) break;
      h = (h - vbuf[i]) * binv + vbuf[i + nmin] * topn;
    }
    if (!nh) continue;
    /* span masking: a real hit [pos, pos+n) touching any boilerplate hit of the row is no flag */
    long keep = 0;
    for (long a = 0; a < nh; a++) {
      int touch = 0;
      if (mask_spans)
        for (long c = 0; c < nb && !touch; c++)
          touch = hits[a].pos < bps[c].pos + bps[c].n && bps[c].pos < hits[a].pos + hits[a].n;
      if (!touch) hits[keep++] = hits[a];
    }
    if (!keep) continue;
    qsort(hits, keep, sizeof(hit_t), cmp_hit);
    for (long a = 0; a < keep;) {
      long e = a, shared = 0;
      while (e < keep && hits[e].n == hits[a].n && hits[e].item == hits[a].item) {
        if (e == a || hits[e].h != hits[e - 1].h) shared++;
        e++;
      }
      if (nout + 1 > cap) { free(hits); free(bps); return -1; }
      out[4 * nout] = r; out[4 * nout + 1] = hits[a].n; out[4 * nout + 2] = hits[a].item;
      out[4 * nout + 3] = shared; nout++;
      a = e;
    }
  }
  free(hits); free(bps);
  return nout;
}
"""

_U64 = np.uint64


def _table(keys: np.ndarray, vals: np.ndarray) -> tuple[np.ndarray, np.ndarray, int, int]:
    """Open addressing (linear probing, load <= 1/2) of distinct uint64 keys; key 0 kept apart."""
    size = 1 << max(4, int(np.ceil(np.log2(max(len(keys), 1) * 2))))
    tk, tv = np.zeros(size, _U64), np.full(size, -2, np.int32)
    mask = size - 1
    zero = -2
    for k, v in zip(keys.tolist(), vals.tolist(), strict=True):  # built once, off the clock
        if k == 0:
            zero = v
            continue
        i = (k ^ (k >> 29)) & mask
        while tk[i]:
            i = (i + 1) & mask
        tk[i], tv[i] = k, v
    return tk, tv, mask, zero


class Floor:
    """The C floor with the tables of one bench index (built once, off the clock)."""

    def __init__(self, index, workdir: Path):
        from overlap.text.ngram.hashing import _B, _BINV, _FOLD, _SEED64
        from overlap.text.word_chars import _codepoint_class_table

        cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
        if cc is None:
            raise RuntimeError("no C compiler")
        src, lib = workdir / "ngram_floor.c", workdir / "ngram_floor.so"
        src.write_text(FLOOR_C)
        # for this machine's CPU, as numba compiles the scan's kernels (without it the floor ran on SSE2 only)
        base = [cc, "-O3", "-shared", "-fPIC", "-o", str(lib), str(src)]
        if subprocess.run([*base, "-march=native"], capture_output=True).returncode:
            subprocess.run(base, check=True, capture_output=True)
        self.lib = ctypes.CDLL(str(lib))
        self.cp_table = _codepoint_class_table()  # the scan's: per code point, 1 word character, 2 letter
        self.lib.floor_init(self.cp_table.ctypes.data_as(ctypes.c_void_p))
        self.lib.floor_scan.restype = ctypes.c_long
        self.index = index
        assert index.max_token_bytes < 4096  # the C loop's buffer for a non-ASCII word
        self.ns = np.array(index.ns, np.int32)  # largest first, as the index holds them
        assert list(self.ns) == sorted(self.ns, reverse=True)
        bits = np.zeros(1 << (PREFILTER_BITS - 6), _U64)
        h = index.min_hashes
        word = h >> _U64(64 - (PREFILTER_BITS - 6))
        m = np.left_shift(_U64(1), (h >> _U64(20)) & _U64(63)) | np.left_shift(_U64(1), (h >> _U64(26)) & _U64(63))
        np.bitwise_or.at(bits, word, m)
        self.pre = bits
        posts: list[int] = []
        self.tables = []
        for n in self.ns.tolist():
            t = index.tables[n]
            uniq, first = np.unique(t.real_hash, return_index=True)
            bounds = np.append(first, len(t.real_hash))
            keys, vals = list(uniq.tolist()), []
            real = set(keys)
            items = t.real_item.tolist()
            for k in range(len(uniq)):
                vals.append(len(posts))
                posts.extend(items[bounds[k] : bounds[k + 1]])
                posts.append(-1)
            bp = [h for h in t.bp_hash.tolist() if h not in real] if len(t.bp_hash) else []
            keys += bp
            vals += [-1] * len(bp)
            self.tables.append(_table(np.array(keys, _U64), np.array(vals, np.int32)))
        self.post = np.array(posts + [-1], np.int32)
        pw = np.ones(65, _U64)
        with np.errstate(over="ignore"):
            for k in range(1, 64):
                pw[k] = pw[k - 1] * _U64(_B)
        pw[64] = _U64(_BINV)
        self.bpow = pw
        self.fold = int(_FOLD) if index.tokenizer.lowercase else 0
        self.seed = int(_SEED64)
        self.vbuf = np.zeros(1 << 16, _U64)
        self._keep = None

    def scan(self, texts: pa.Array, row_base: int = 0) -> np.ndarray:
        """Flags (train_row, n, item, shared) of one string array, rows numbered from ``row_base``."""
        from overlap.text.string_arrays import _buffers

        buf, offs = _buffers(texts)
        buf = buf if len(buf) else np.zeros(8, np.uint8)
        offs = np.ascontiguousarray(offs, np.int64)
        most = int(np.diff(offs).max()) // 2 + 2 if len(offs) > 1 else 2
        if len(self.vbuf) < most:
            self.vbuf = np.zeros(most, _U64)
        out = np.zeros((max(64, len(offs) // 8), 4), np.int64)
        P = ctypes.c_void_p
        arr = lambda a: a.ctypes.data_as(P)  # noqa: E731
        nn = len(self.ns)
        tkey = (P * nn)(*[t[0].ctypes.data for t in self.tables])
        tval = (P * nn)(*[t[1].ctypes.data for t in self.tables])
        tmask = np.array([t[2] for t in self.tables], _U64)
        tzero = np.array([t[3] for t in self.tables], np.int32)
        while True:
            got = self.lib.floor_scan(
                arr(buf), arr(offs), ctypes.c_long(len(offs) - 1), arr(self.pre), ctypes.c_int(PREFILTER_BITS),
                ctypes.c_int(nn), arr(self.ns), tkey, tval, arr(tmask), arr(tzero), arr(self.post),
                ctypes.c_uint64(self.fold), ctypes.c_long(int(self.index.max_token_bytes)),
                ctypes.c_int(int(self.index.mask_spans)), ctypes.c_uint64(self.seed), arr(self.bpow),
                arr(self.vbuf), ctypes.c_long(len(self.vbuf)), arr(out), ctypes.c_long(len(out)))
            if got >= 0:
                break
            if got == -2:
                raise RuntimeError("word buffer too small")
            out = np.zeros((2 * len(out), 4), np.int64)
        out = out[:got].copy()
        out[:, 0] += row_base
        return out


def build_floor(index) -> Floor:
    """The floor for ``index`` (compiled in a temp folder that lives as long as the process)."""
    workdir = Path(tempfile.mkdtemp(prefix="ngram-floor-"))
    return Floor(index, workdir)
