"""A training set read by its columns names its text by a column of its own file: `--text body:description`
with `--id-column id` reads the column `body` as the train text, without a separate `--text-column`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..sources.rows.columns import text_field


def with_text_column(columns: Mapping[str, str] | None, text: Any) -> tuple[dict[str, str] | None, Any]:
    """(columns, text) with the train side of `text` read as the text column, when the training set is read
    by its columns, names no text column, and `text` names one train field. Anything else is returned as
    given (compare then says which field is missing)."""
    if not columns or columns.get("text") or not isinstance(text, (list, tuple)):
        return (dict(columns) if columns else None), text
    pairs = [t.partition(":")[::2] if isinstance(t, str) else tuple(t) for t in text]
    train_fields = {str(p[0]).strip() for p in pairs if len(p) == 2 and p[0]}
    if len(train_fields) != 1:
        return dict(columns), text
    (column,) = train_fields
    item_field = text_field(column)  # the column as the item's text field (`Body.Text` → `text_body_text`)
    return {**columns, "text": column}, [(item_field, str(p[1]).strip()) for p in pairs]
