"""Chance baselines: how much overlap two independent draws from the same pool share by chance.

`baselines` holds the statistics (uniform hypergeometric and within-stratum exact convolution in `exact`,
the seeded permutation engine in `permutation`, the SWE inclusion test in `inclusion`, the stratum counts
in `strata`); `wiring` places a compare result's items in a pool and returns JSON-ready blocks for
summary.json and the printed table.
"""
