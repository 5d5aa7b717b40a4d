"""Chance baselines: how much overlap two independent draws from the same pool share by chance.

`baselines` holds the statistics (uniform hypergeometric, within-stratum exact convolution, the seeded
permutation engine, the SWE inclusion test); `wiring` places a compare result's items in a pool and
returns JSON-ready blocks for summary.json and the printed table.
"""
