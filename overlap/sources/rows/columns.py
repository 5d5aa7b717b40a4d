"""Which column of a dataset gives what (`GenericColumns`: the id, repo, PR, base commit, texts, ...), as the
library options, the CLI flags and a declaration name them."""

from __future__ import annotations

import re
from dataclasses import dataclass, fields
from typing import Any

from ...errors import InputError
from ...ids import LABEL
from ...ids.recognisers import RECOGNISERS


@dataclass(frozen=True)
class GenericColumns:
    """Which column gives what. Dotted names reach into structs (`extra_info.instance_id`)."""

    id: str
    repo: str | None = None
    pr: str | None = None
    base: str | None = None
    patch: str | None = None
    text: str | None = None
    project: str | None = None
    fix: str | None = None  # a fix commit (sha or github.com/…/commit/<sha>)
    cve: str | None = None  # the row's CVE (GHSA ids join through it)
    scheme: str | None = None  # force one recogniser (`overlap.ids.recognisers.RECOGNISERS`)
    # A blank repo or PR cell takes what the row's id says (`owner__repo-N`); false: it stays blank (no repo or
    # PR key), for sets whose columns are the identity their harness reads.
    id_fills_blanks: bool = True
    # More item columns, copied from the row as text (blank: null): ((item column, source column), ...), e.g.
    # (("crash_report", "sanitizer_report"),); a declaration's `[extra.item_fields]`.
    item_fields: tuple[tuple[str, str], ...] = ()

    @classmethod
    def of(cls, columns: GenericColumns | dict[str, Any] | None = None, **options: Any) -> GenericColumns:
        """From a GenericColumns, a dict or keyword options (`id_column=`, `repo_column=`, …, `id_scheme=`)."""
        if isinstance(columns, GenericColumns):
            return columns
        values = dict(columns or {})
        for key, value in options.items():
            if value is None:
                continue
            name = "scheme" if key == "id_scheme" else key.removesuffix("_column")
            values[name] = value
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise InputError(f"unknown column option {unknown[0]!r}; known: {', '.join(sorted(known))}")
        for name, value in values.items():  # a number or list here would fail deep in the reader, unnamed
            if name not in ("id_fills_blanks", "item_fields") and value is not None and not isinstance(value, str):
                option = "id_scheme" if name == "scheme" else f"{name}_column"
                raise InputError(f"{option}: expected a column name (text), got {type(value).__name__} {value!r}")
        if not values.get("id"):
            raise InputError("name the id column (CLI: --id-column NAME; dotted for nested fields: "
                             "extra_info.instance_id)")
        if values.get("scheme") is not None and values["scheme"] not in (*RECOGNISERS, LABEL):
            raise InputError(f"id scheme {values['scheme']!r}: use one of {', '.join(RECOGNISERS)} (or {LABEL}: the "
                             "id only names the row)")
        return cls(**values)

    def context(self) -> dict[str, str]:
        """{recogniser context name: column}."""
        return {k: v for k, v in (("repo", self.repo), ("pr", self.pr), ("base", self.base), ("cve", self.cve),
                                  ("fix", self.fix)) if v}

    def wanted(self) -> list[str]:
        return list(dict.fromkeys(c for c in (self.id, self.repo, self.pr, self.base, self.patch, self.text,
                                              self.project, self.fix, self.cve,
                                              *(source for _, source in self.item_fields)) if c))


def text_field(column: str) -> str:
    """The item column of a text column: `problem_statement` → `text_problem_statement`."""
    return "text_" + re.sub(r"[^0-9A-Za-z]+", "_", column).strip("_").lower()
