"""Writers: result folders, tables for stdout, filtered splits, dataset cards.

Inside, imports go one way only (no cycles, none hidden in a function body):

- entry points, which compose the writers: `report` (a compare folder, report.md/html re-rendered from a
  saved one, the ngram folder), `console` (what compare and matrix print: rich tables, or the same rows as
  Markdown, CSV, JSON), `matrix` (the matrix folder and its stdout text), `splits` (the filtered split and
  its push), `cards` (the card section and its push);
- leaf writers, which import nothing of each other: `markdown` (report.md), `html` (report.html), `tables`
  (CSV with fixed columns, id lists); JSON is `overlap.jsonout`;
- what they share, below them: `result_view` (a result read back or viewed in memory), `assemble` (the
  report's sections in reading order), `sections` / `more_sections` (the report model and its registry),
  `table_rows` (the rows of the summary and matrix tables), `cells`, `published`, `atomic`, `folders`,
  `hub`, `filter_plan`, `split_files`.
"""
