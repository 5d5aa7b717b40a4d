"""Crash reports read into comparable signatures: sanitizer reports, ClusterFuzz headers, crash specs.

Pure parsers of text, below `sources` (the ARVO-Meta pool reader takes a report's crash state from here)
and `evidence` (which grades two signatures against each other). Nothing here imports other layers.
"""
