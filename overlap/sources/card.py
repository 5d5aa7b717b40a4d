"""The YAML header of a Hub dataset card, as far as it says which files make a config and split (`configs:`
with `data_files` and `data_dir`), read as the Hub reads it. A card that cannot say (a header that is no valid
YAML, names that are no text, a path outside the repo) is an error naming it: choosing the files by their names
instead could read another config's rows or leave some out."""

from __future__ import annotations

import re
from typing import Any

from ..errors import HubUnavailableError, InputError
from .files import first_line, net_errors

# libyaml recurses once per level of `[`/`{` nesting and crashes the process (a segmentation fault) at some
# tens of thousands of levels; no card nests more than a few
_MAX_DEPTH = 100
_MAX_HEADER = 128 << 20  # the largest cards (thousands of configs) are some MB; libyaml crashed on GBs


def read_card(read, where: str) -> dict | None:
    """The YAML header of a dataset card (`configs:` says which files make which config and split)."""
    try:
        data = read()
    except FileNotFoundError:
        return None
    except net_errors() as exc:  # the card is there but unread: choosing by the names could read other files
        raise HubUnavailableError(f"{where}: cannot read the dataset card ({first_line(exc)}), which says which "
                                  "files make each config and split; check the network (or set HF_HUB_OFFLINE=1 "
                                  "to read the Hub cache) or the file's permissions") from None
    if not data:
        return None
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    match = re.match(r"^---\s*\n(.*?)\n---\s*(?:\n|$)", text, re.DOTALL)
    # only `configs:` is used: a header without it is not parsed (a pure-Python parse of a hostile multi-MB
    # header took minutes)
    if not match or "configs" not in match.group(1):
        return None
    if len(match.group(1)) > _MAX_HEADER:
        raise InputError(f"{where}: the card's YAML header is over {_MAX_HEADER >> 20} MiB; is this a dataset card? "
                         "Shorten it (its configs: say which files make each split)")
    if _flow_depth(match.group(1)) > _MAX_DEPTH:
        raise InputError(f"{where}: the card's YAML header nests [ or {{ more than {_MAX_DEPTH} deep; is this a "
                         "dataset card? Fix the YAML")
    import yaml

    try:
        header = yaml.load(match.group(1), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except RecursionError:  # the pure-Python parser on deep block nesting
        raise InputError(f"{where}: the card's YAML header is nested too deeply to read; fix the YAML") from None
    except yaml.YAMLError as exc:
        # falling back to the files' names would read files the card's configs leave out (or miss some)
        mark = getattr(exc, "problem_mark", None)
        at = f" (line {mark.line + 2})" if mark is not None else ""
        raise InputError(f"{where}: the card's YAML header declares configs but cannot be parsed{at}: "
                         f"{getattr(exc, 'problem', None) or type(exc).__name__}; fix the YAML") from None
    return header if isinstance(header, dict) else None


def _flow_depth(text: str) -> int:
    """How deep `[` and `{` nest in YAML text, quoted strings left out."""
    depth = deepest = 0
    for match in re.finditer(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\n]|\'\')*\'|[\[\]{}]', text):
        token = match.group()
        if token in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif token in "]}":
            depth = max(depth - 1, 0)
    return deepest


def card_text(value: Any, where: str, what: str) -> str:
    """A name or pattern of the card's `configs:` as text (YAML reads `config_name: 1` as a number); a list or
    mapping where a name belongs is a malformed card, refused rather than guessed at."""
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        return str(value)
    raise InputError(f"{where}: README.md's configs give {what} that is not text ({type(value).__name__}: "
                     f"{str(value)[:60]}); fix the configs in the card's YAML header")


def card_data_dir(value: Any, where: str, config: str) -> str:
    """A config's `data_dir`, repo-relative without `./` or trailing `/` ("" when it has none)."""
    if value is None:
        return ""
    parts = [p for p in card_text(value, where, "a data_dir").replace("\\", "/").split("/") if p not in ("", ".")]
    if str(value).startswith("/") or ".." in parts:
        raise InputError(f"{where}: the card's config '{config}' has data_dir '{value}', which is not a folder "
                         f"inside the repo; fix the configs in README.md (a path such as 'data/{config}')")
    return "/".join(parts)


def card_patterns(data_files: Any, split: str | None, where: str, config: str) -> list[str] | None:
    """The file patterns of a config's `data_files` for `split` (every split: None); None when it has no
    data_files, so the files are split by their names."""
    if data_files is None:
        return None
    if isinstance(data_files, str):
        entries = [{"split": "train", "path": data_files}]
    elif isinstance(data_files, list):
        entries = [e if isinstance(e, dict) else {"split": "train", "path": e} for e in data_files]
    elif isinstance(data_files, dict):
        entries = [{"split": k, "path": v} for k, v in data_files.items()]
    else:
        return None
    if split is not None:
        entries = [e for e in entries if card_text(e.get("split", "train"), where, "a split") == split]
        if not entries:
            raise InputError(f"{where}: config '{config}' has no split '{split}'")
    patterns: list[str] = []
    for entry in entries:
        paths = entry.get("path", [])
        for path in [paths] if isinstance(paths, str) else paths if isinstance(paths, list) else [paths]:
            patterns.append(card_text(path, where, f"a data_files path of config '{config}'"))
    outside = [p for p in patterns if p.startswith("/") or ".." in p.split("/")]
    if outside:  # never a file of the repo: said as such, not as a file missing from it
        raise InputError(f"{where}: the card's config '{config}' reads {outside[0]}, which is not inside the repo; "
                         "fix the configs in README.md")
    return [p.replace("**/", "*") if p.startswith("**/") else p for p in patterns]
