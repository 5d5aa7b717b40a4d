"""The independent verifier of a filtered split: read the written split back with the plainest reader, derive
keys with the id parsers alone, intersect with the benchmark's keys as Python sets.

The filter decides what to drop through adapters, the vectorised recognisers, the join and the pair
classification. Re-running those on the kept rows would agree with their mistakes, so this package shares none
of them: it imports only `overlap.ids` scalar parsers, `overlap.errors`, pyarrow's file readers and the
standard library (an import-linter contract in pyproject.toml keeps the whole package so).

- `check`: the check itself (`verify_split`): what the drop reasons promise, and the `verification` block;
- `keys`: which cells hold a row's identity (`KeyColumns`) and the keys of one row (`row_keys`);
- `readers`: the plainest readers of a written shard (parquet, CSV, JSON lines) and of a split in memory;
- `seen`: the kept rows' ids and `dup` keys, in a dict and past it in an SQLite file (bounded memory).
"""
