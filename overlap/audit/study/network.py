"""The network route of a batch target (``--check-index``): the ``network`` section of its entry.

The route needs no image: it reads the task record (the target's repo, version, created_at, package and fix)
and the package index, so a target whose image could not be pulled still gets its section. ``--network none``
records the route as closed by the environment instead of checking it.
"""

from __future__ import annotations

from ...errors import InputError


def route_options(index: dict):
    from ..network import NetworkOptions

    return NetworkOptions(package=index.get("package"), index_url=index.get("index_url"),
                          all_releases=bool(index.get("all_releases")))


def record_of(target: dict) -> dict:
    """The task record the route reads, from a target's fields (absent ones left out)."""
    keys = ("instance_id", "repo", "base_commit", "patch", "version", "created_at", "package")
    return {k: target[k] for k in keys if target.get(k)}


def network_section(target: dict, options: dict) -> dict:
    """The section of one target (``target``: a BatchTarget as a dict; ``options["index"]``: the route's options);
    never raises: a task the route cannot read is one line in ``reason``."""
    from ..network import check_task, closed

    if options.get("network") == "none":
        return closed("none")
    record = record_of(target)
    if not record.get("patch"):
        return {"route": "not_applicable", "reason": "the task has no patch (the reference fix)",
                "first_release": None, "pin": None}
    try:
        return check_task(record, route_options(options["index"]), checkout=_checkout(target))
    except InputError as exc:
        return {"route": "unavailable", "reason": str(exc), "first_release": None, "pin": None}
    except Exception as exc:  # one task's failure is its own line, never stops the batch
        return {"route": "unavailable", "reason": f"internal error: {type(exc).__name__}: {exc}",
                "first_release": None, "pin": None}


def _checkout(target: dict) -> str | None:
    """A local target's folder: the project's own packaging metadata is read there at the base commit."""
    return target.get("target") if target.get("kind") == "path" and target.get("target") else None
