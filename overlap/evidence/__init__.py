"""Evidence that a (train, bench) pair is the same task: same fix, same crash, related bugs.

Public entry points (import from these modules):

- `patches`: `parse_patch`, `relate_patches`, `PatchBook` and the records (`ParsedPatch`, `FilePatch`,
  `PatchRelation`); built on `diff_parse` / `diff_paths` / `patch_model`.
- `crash`: `parse_sanitizer_report`, `parse_crash_spec`, `parse_clusterfuzz`, `parse_crash`,
  `bare_function`, `grade_crash`, `best_grade`, `summarize_grades`, `control_rate`; built on
  `frames`, `crash_types`, `signature`, `reports`, `specs`.
- `fixjoin` (imports pandas): `join_fixes`, `relate_pairs`, and the related-bug helpers of `related`
  (`related_groups`, `related_pairs`, `bug_record`, `commit_key`).
"""
