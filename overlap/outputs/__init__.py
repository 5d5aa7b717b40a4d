"""Writers: the report of a result, and the artefacts users ship.

- `report/`: a result as people read it: the compare, ngram and matrix result folders (`result_folders`,
  `matrix_folder`), report.md and report.html (`markdown`, `html`, their Jinja `templates/`), what compare
  and matrix print on stdout (`console`), and the report model they share (`result_view`, `assemble`,
  `sections`, `evidence_sections`, `table_rows`, `cell_text`).
- `ship/`: what users take away and publish: the filtered split (`splits`, deciding with `filter_plan`,
  writing with `split_files`, proved by `verify/`), the dataset-card section (`cards`), the atlas as a
  Hub dataset repository (`atlas_repo`), and the Hub client they push with (`hub`).
- here, shared by both: `atomic` (atomic writes, `--out` ownership), `folders` (what kind of result a folder
  holds), `published` (what may leave the machine), `tables` (CSV with fixed columns, the id lists).

Imports go one way only: `ship` may use `report` (the card section reads a result the way the report does),
`report` never uses `ship`, and both use the shared modules here, which use neither (an import-linter
contract in pyproject.toml checks it).
"""
