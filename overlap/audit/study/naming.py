"""A benchmark's image names, from its declaration's ``[audit]`` table (data, never code).

``image`` is a template: ``{instance}`` is the instance id after the naming rule (``lower``, then each
``replace`` pair in order), ``{id}`` the id as written, ``{tag}`` one of ``tags`` (or ``--tag``), and any
other ``{name}`` the record's column of that name (e.g. SWE-bench Pro's ``{dockerhub_tag}``). A dotted name
reaches into a record (``{extra_info.instance_json.docker_image}``: a struct's field, or a field of an object
written as a JSON string, as MiMo's code tasks name their images), and so may the role columns (``id``,
``test_patch``, …). The result is a registry reference (``docker://`` is added when missing), or with a
leading ``path:`` a local target (relative to the declaration's folder), which keeps a declared benchmark
testable offline.
"""

from __future__ import annotations

import json
import os
import string
from dataclasses import dataclass, field
from pathlib import Path

from ...errors import InputError
from .targets import image_reference

ROLES = ("id", "base_commit", "patch", "test_patch", "fix_commit")
# the task record's columns the network route reads (the repository's package, the release series, the date)
RECORD_ROLES = ("repo", "version", "created_at", "package")
# the same names as overlap.sources.spec.AUDIT_FIELDS (the audit layer reads no dataset module)
KNOWN = ("image", "lower", "replace", "tags", "repo_path", "instance", *ROLES, *RECORD_ROLES)
BUILTIN = ("instance", "id", "tag")


@dataclass(frozen=True)
class ImageNaming:
    image: str
    lower: bool = False
    replace: tuple[tuple[str, str], ...] = ()
    tags: tuple[str, ...] = ()
    repo_path: str | None = None
    columns: dict[str, str] = field(default_factory=dict)  # role -> record column
    # the record column the naming rule turns into {instance} (None: the id), e.g. a row's own image name
    instance_column: str | None = None

    @classmethod
    def from_table(cls, table: dict, origin: str) -> ImageNaming:
        where = f"{origin}: [audit]"
        if not isinstance(table, dict):
            raise InputError(f"{where} must be a table")
        unknown = sorted(set(table) - set(KNOWN))
        if unknown:
            raise InputError(f"{where}: unknown field {unknown[0]!r}; known: {', '.join(KNOWN)}")
        image = table.get("image")
        if not isinstance(image, str) or not image.strip():
            raise InputError(f"{where}: image = \"<template>\" is required "
                             "(e.g. \"registry/name.{instance}:{tag}\")")
        pairs = table.get("replace", ())
        if not isinstance(pairs, list | tuple) or not all(
                isinstance(p, list | tuple) and len(p) == 2 and all(isinstance(s, str) for s in p) and p[0]
                for p in pairs):
            raise InputError(f"{where}: replace must be a list of [\"from\", \"to\"] pairs")
        tags = table.get("tags", ())
        if not isinstance(tags, list | tuple) or not all(isinstance(t, str) and t for t in tags):
            raise InputError(f"{where}: tags must be a list of tag names")
        if not isinstance(table.get("lower", False), bool):
            raise InputError(f"{where}: lower must be true or false")
        columns = {}
        for role in (*ROLES, *RECORD_ROLES):
            value = table.get(role, "instance_id" if role == "id" else None)
            if value is not None and not (isinstance(value, str) and value):
                raise InputError(f"{where}: {role} must name a record column")
            if value:
                columns[role] = value
        repo_path = table.get("repo_path")
        if repo_path is not None and not isinstance(repo_path, str):
            raise InputError(f"{where}: repo_path must be a path in the image")
        instance = table.get("instance")
        if instance is not None and not (isinstance(instance, str) and instance.strip()):
            raise InputError(f"{where}: instance must name the record column the rule makes {{instance}} from")
        naming = cls(image.strip(), bool(table.get("lower", False)), tuple((a, b) for a, b in pairs), tuple(tags),
                     repo_path, columns, instance.strip() if instance else None)
        naming.fields()  # the template is checked now, not per record
        return naming

    def fields(self) -> list[str]:
        """The template's placeholders; a malformed template is an InputError."""
        out = []
        try:
            parsed = list(string.Formatter().parse(self.image))
        except ValueError as exc:
            raise InputError(f"[audit] image {self.image!r}: {exc}") from None
        for _, name, spec, conv in parsed:
            if name is None:
                continue
            if not name or spec or conv or not all(_plain(part) for part in name.split(".")):
                raise InputError(f"[audit] image {self.image!r}: placeholders are plain names such as {{instance}}, "
                                 "{tag} or a record column (dotted to reach into it)")
            out.append(name)
        return out

    @property
    def uses_tag(self) -> bool:
        return "tag" in self.fields()

    def record_columns(self) -> list[str]:
        """Columns a record must be read for: the roles and the template's own column placeholders."""
        own = [self.instance_column] if self.instance_column and "instance" in self.fields() else []
        return sorted({*self.columns.values(), *own, *(f for f in self.fields() if f not in BUILTIN)})

    def read_columns(self) -> list[str]:
        """The file columns to read: each named column, and the column a dotted name starts from."""
        return sorted({c for name in self.record_columns() for c in (name, name.split(".")[0])})

    def instance_name(self, instance_id: str) -> str:
        name = instance_id.lower() if self.lower else instance_id
        for old, new in self.replace:
            name = name.replace(old, new)
        return name

    def target(self, record: dict, instance_id: str, tag: str | None, base: Path) -> tuple[str, str]:
        """(kind, target) of one record: ``image`` and a ``docker://`` reference, or ``path`` and a local path.
        A record lacking a column the template names is an InputError (the target fails, not the run)."""
        source = instance_id
        if self.instance_column and "instance" in self.fields():
            given = record_value(record, self.instance_column)
            if given is None or not str(given).strip():
                raise InputError(f"the record has no {self.instance_column} (the image's instance name)")
            source = str(given).strip()
        values = {"instance": self.instance_name(source), "id": instance_id, "tag": tag or ""}
        for name in self.fields():
            if name in BUILTIN:
                continue
            value = record_value(record, name)
            if value is None or not str(value).strip():
                raise InputError(f"the record has no {name} (named by the image template)")
            values[name] = str(value).strip()
        if "tag" in values and self.uses_tag and not tag:
            raise InputError("the image template needs a tag: give --tag or declare tags")
        # filled piece by piece: str.format would read a dotted name as attribute access
        text = "".join(literal + ("" if name is None else values[name])
                       for literal, name, _, _ in string.Formatter().parse(self.image))
        if text.startswith("path:"):
            local = text[5:]
            return "path", os.path.abspath(local if os.path.isabs(local) else base / local)
        if "://" in text and not text.startswith("docker://"):
            raise InputError(f"image {text}: only docker:// references and path: targets are audited")
        return "image", image_reference(text)


DOCKER_HUB = ("docker.io", "index.docker.io", "registry-1.docker.io")


def registry_host(reference: str) -> tuple[str, str]:
    """(host, the rest) of a ``docker://`` reference; a name without a host is Docker Hub's, as Docker reads it."""
    name = reference.removeprefix("docker://")
    first, sep, rest = name.partition("/")
    if sep and ("." in first or ":" in first or first == "localhost"):
        return ("docker.io" if first in DOCKER_HUB else first), rest
    return "docker.io", name


def parse_mirrors(values: list[str] | None) -> dict[str, str]:
    """``--mirror HOST=MIRROR[/PREFIX]`` pairs: the images a declaration names on HOST are read from MIRROR."""
    out: dict[str, str] = {}
    for value in values or ():
        host, sep, mirror = value.partition("=")
        host, mirror = host.strip().lower(), mirror.strip().removeprefix("docker://").rstrip("/")
        if not sep or not host or not mirror or "/" in host or "://" in mirror:
            raise InputError(f"--mirror {value}: give HOST=MIRROR, e.g. docker.io=127.0.0.1:5000 or "
                             "docker.io=mirror.example.com/hub")
        out["docker.io" if host in DOCKER_HUB else host] = mirror
    return out


def mirrored(reference: str, mirrors: dict[str, str]) -> str:
    """A ``docker://`` reference read from its host's mirror (unchanged when the host has none)."""
    if not mirrors or not reference.startswith("docker://"):
        return reference
    host, rest = registry_host(reference)
    return f"docker://{mirrors[host]}/{rest}" if host in mirrors else reference


def _plain(part: str) -> bool:
    return bool(part) and part.replace("_", "").replace("-", "").isalnum()


def record_value(record: dict, name: str):
    """What a column name gives in a record: the column itself, else (a dotted name) each step's field of a
    struct, or of an object written as a JSON string; None where a step finds nothing."""
    if name in record:
        return record[name]
    value = record
    for part in name.split("."):
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except (ValueError, RecursionError):
                return None
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value
