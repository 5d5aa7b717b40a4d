"""The key join streamed: a training side read by columns, batch by batch, against the benchmarks' keys,
keeping only what can be in a pair and what the whole-side counts need (`scan.stream_train`)."""

from .scan import stream_train

__all__ = ["stream_train"]
