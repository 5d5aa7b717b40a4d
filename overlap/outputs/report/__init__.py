"""The report: result folders, report.md / report.html, and the stdout tables of compare and matrix.

Inside, imports go one way only (no cycles, none hidden in a function body):

- entry points, which compose the writers: `result_folders` (a compare folder, report.md/html re-rendered
  from a saved one, the ngram folder), `console` (what compare and matrix print: rich tables, or the same
  rows as Markdown, CSV, JSON), `matrix_folder` (the matrix folder and its stdout text);
- leaf writers, which import nothing of each other: `markdown` (report.md), `html` (report.html), and
  `overlap.outputs.tables` (CSV with fixed columns, id lists); JSON is `overlap.jsonout`;
- what they share, below them: `result_view` (a result read back or viewed in memory), `assemble` (the
  report's sections in reading order), `sections` (the report model and its registry), `evidence_sections`
  (the sections of the evidence, text and SWE blocks), `table_rows` (the rows of the summary and matrix
  tables), `cell_text` (how a number reads in a table cell).
"""
