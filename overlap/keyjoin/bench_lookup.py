"""The benchmarks' keys a training key is looked up among: by hash first, by string only where the hash is theirs."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..join import TASK_KINDS
from .hashing import hash64
from .spill import in_sorted


@dataclass
class BenchKeys:
    """What a training key must have to be in a pair with some benchmark: its canonical value among the
    benchmarks' values (the normalised join), or for a task kind its raw value among theirs (the plain join)."""

    values: pa.Array
    raws: pa.Array

    def __post_init__(self) -> None:
        # a table of the hashes of each: a batch's keys are looked up by hash, and only the few whose hash
        # may be there are compared as strings
        self.value_hashes, self.raw_hashes = HashTable(hash64(self.values)), HashTable(hash64(self.raws))

    @classmethod
    def of(cls, benches) -> BenchKeys:
        frames = [b.keys for b in benches]
        keys = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=["kind", "value", "raw"])
        task = keys[keys["kind"].isin(TASK_KINDS)]
        return cls(values=pa.array(sorted(set(keys["value"].dropna().astype(str))), pa.string()),
                   raws=pa.array(sorted(set(task["raw"].dropna().astype(str))), pa.string()))


class HashTable:
    """Whether a hash is one of a set's: a table of which low bits the set's hashes have (about 16 slots per
    hash) rules out most at one index per value, and the few left are looked up among the sorted hashes."""

    def __init__(self, hashes: np.ndarray) -> None:
        size = 1 << int(min(max(np.ceil(np.log2(max(len(hashes), 1) * 16)), 16), 26))
        self.mask = np.uint64(size - 1)
        self.slots = np.zeros(size, bool)
        self.slots[(hashes & self.mask).astype(np.int64)] = True
        self.sorted = np.unique(hashes)

    def holds(self, hashes: np.ndarray) -> np.ndarray:
        out = self.slots[(hashes & self.mask).astype(np.int64)]
        maybe = np.flatnonzero(out)
        if len(maybe):
            out[maybe] = in_sorted(hashes[maybe], self.sorted)
        return out


def _among(strings, hashes: np.ndarray, wanted: pa.Array, table: HashTable, at: np.ndarray | None = None) -> np.ndarray:
    """Whether each of `strings` (hashed: `hashes`; or, given `at`, each of `strings` at those positions) is
    one of `wanted` (its hashes' `table`): only the strings whose hash is one of theirs are compared."""
    out = table.holds(hashes)
    if out.any():
        candidates = np.flatnonzero(out)
        found = pc.is_in(strings.take(pa.array(candidates if at is None else at[candidates])), value_set=wanted)
        out[candidates] = pc.fill_null(found, False).to_numpy(zero_copy_only=False)
    return out
