"""Blocks that plug overlap into other tools' pipelines (each behind an optional extra), above the library
entry points of `overlap.api`: `overlap.integrations.datatrove.OverlapFilter` (`pip install 'overlap[datatrove]'`).
"""
