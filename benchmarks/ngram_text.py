"""How the n-gram benchmark's words are written: plain prose, or issue-like text (the default).

The benchmark draws word ids (Zipfian, seeded) and writes each as one of its *surface forms*; a copied span
copies ids, so train and bench write a shared word the same way. Every form is exactly one token of the
``words`` tokenizer, so a span of k ids is k tokens and the planted lengths stay exact.

* ``plain``: the word, with a comma, with a full stop, or capitalised (85 / 5 / 5 / 5 %): ASCII prose
  without apostrophes, the workload the scan was first measured on;
* ``issue``: what bug reports and pull-request text are full of, beside those four: contractions (``w's``,
  ``wn't``, and with the typographic apostrophe ``w’s``, read as ``w's``), words in single quotes,
  backticks, double and typographic quotes, parentheses, calls ``w()``, snake_case ``w_id``, a colon,
  non-ASCII letters (``wé``, ``üw``), an em dash, an ellipsis, an arrow or an emoji after a word (~23 % of
  the words are written so, ~8 % with an apostrophe, ~7 % with non-ASCII bytes); and after ~25 % of the
  texts a link (``See https://github.com/a/b/issues/123.``), after ~15 % a file and error line
  (``Fails in `a_b.py:42` with CError: can't d.``).

The non-ASCII letters are lowercase: the C floor (:mod:`ngram_floor`) lowercases only ASCII letters.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

TEXTS = ("issue", "plain")

PLAIN_FORMS = (("{w}", 0.85), ("{w},", 0.05), ("{w}.", 0.05), ("{W}", 0.05))
ISSUE_FORMS = (
    ("{w}", 0.62), ("{w},", 0.05), ("{w}.", 0.05), ("{W}", 0.05),  # first four as plain's (the template's)
    ("{w}'s", 0.03), ("{w}n't", 0.02), ("'{w}'", 0.02), ("`{w}`", 0.02), ('"{w}"', 0.015), ("({w})", 0.015),
    ("{w}:", 0.01), ("{w}_id", 0.015), ("{w}()", 0.015), ("{w}\u00e9", 0.015), ("\u201c{w}\u201d", 0.015),
    ("{w}\u2014", 0.01), ("{w}\u2019s", 0.015), ("{w}\u2026", 0.005), ("{w}\u2192", 0.005),
    ("{w}\U0001f642", 0.005), ("\u00fc{w}", 0.005),
)
LINK_SHARE, ERROR_SHARE = 0.25, 0.15


def forms(text: str) -> tuple[tuple[str, float], ...]:
    return ISSUE_FORMS if text == "issue" else PLAIN_FORMS


def surfaces(words: list[str], text: str) -> list[str]:
    """Every word in every form, form after form (a token id is word + form * len(words))."""
    return [f.format(w=w, W=w.capitalize()) for f, _ in forms(text) for w in words]


def form_cdf(text: str) -> np.ndarray:
    p = np.array([share for _, share in forms(text)])
    return np.cumsum(p / p.sum())


def with_tails(texts: pa.Array, words: pa.Array, rng: np.random.Generator, text: str) -> pa.Array:
    """``texts`` with a link or an error line after some of them (issue text only); ``words``: the plain
    vocabulary, the tails' words drawn from its 2,000 most common."""
    if text != "issue" or not len(texts):
        return texts
    n = len(texts)
    pick = rng.random(n)
    w = words.slice(0, 2000).to_pylist()
    ids = rng.integers(0, len(w), (n, 4))
    nums = rng.integers(1, 5000, n)
    tails = []
    for i in range(n):
        a, b, c, d = (w[k] for k in ids[i])
        if pick[i] < LINK_SHARE:
            tails.append(f" See https://github.com/{a}/{b}/issues/{nums[i]}.")
        elif pick[i] < LINK_SHARE + ERROR_SHARE:
            tails.append(f" Fails in `{a}_{b}.py:{nums[i]}` with {c.capitalize()}Error: can't {d}.")
        else:
            tails.append("")
    return pc.binary_join_element_wise(texts, pa.array(tails, pa.string()), "")
