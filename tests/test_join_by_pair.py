"""`join`'s per-pair gathering (`_by_pair`) gives the table the pandas aggregation it replaced gave: per (train,
bench) item, the distinct kinds and raw values sorted and joined by ';', and whether some key's raw values agree."""

from __future__ import annotations

import random

import pandas as pd

from overlap.join import _by_pair


def _groupby(matches: pd.DataFrame) -> pd.DataFrame:
    """The aggregation `join` ran before, as it was written."""
    matches = matches.assign(exact=matches["train_raw"] == matches["bench_raw"])
    return (matches.sort_values(["train_id", "bench_id", "kind"]).groupby(["train_id", "bench_id"], sort=True)
            .agg(kinds=("kind", lambda s: ";".join(sorted(set(s)))), exact=("exact", "any"),
                 train_raw=("train_raw", lambda s: ";".join(sorted(set(s)))),
                 bench_raw=("bench_raw", lambda s: ";".join(sorted(set(s))))).reset_index())


def test_by_pair_is_the_groupby_it_replaced():
    rng = random.Random(5)
    raws = ["10055", "42471001", "CVE-2023-50246", "owner/repo#12", "owner/Repo#12", "a" * 40]
    rows = [{"train_id": f"t{rng.randrange(30)}", "bench_id": f"b{rng.randrange(20)}",
             "kind": rng.choice(["ossfuzz", "cve", "repo_pr", "base", "repo_pr_exact"]),
             "train_raw": rng.choice(raws), "bench_raw": rng.choice(raws)} for _ in range(400)]
    matches = pd.DataFrame(rows).astype("string")
    expected, found = _groupby(matches), _by_pair(matches)
    assert len(found) == len(expected) > 50
    for column in ("train_id", "bench_id", "kinds", "train_raw", "bench_raw"):
        assert found[column].tolist() == expected[column].astype(str).tolist(), column
    assert found["exact"].tolist() == expected["exact"].astype(bool).tolist()
    assert found["exact"].any() and not found["exact"].all()
