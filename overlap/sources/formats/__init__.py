"""Each format into record batches: parquet, JSON lines, JSON, CSV (plain, gzip or zstd) and in-memory data."""
