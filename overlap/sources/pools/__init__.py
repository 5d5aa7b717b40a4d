"""Identity data and pools: ARVO's OSS-Fuzz old→new issue-id mapping, and the pools chance baselines draw from."""
