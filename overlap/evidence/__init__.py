"""Evidence that a (train, bench) pair is the same task: same fix, same crash, related bugs.

- `patches`: parse fix diffs once (`parse_patch`, `PatchBook`) and relate two (`relate_patches`).
- `crash`: crash signatures from sanitizer reports, one-line specs and ClusterFuzz text; grades.
- `fixjoin`: the same-project same-fix join, fix relations for matched pairs, related-bug groups
  (imports pandas; import it directly: `from overlap.evidence.fixjoin import join_fixes`).
"""
