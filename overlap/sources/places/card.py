"""The YAML header of a Hub dataset card, as far as it says which files make a config and split (`configs:`
with `data_files` and `data_dir`), read as the Hub reads it. A card that cannot say (a header that is no valid
YAML, names that are no text, a path outside the repo) is an error naming it: choosing the files by their names
instead could read another config's rows or leave some out.

`choose_files` picks a repo's files of a config and split by the card, else by the Hub's naming conventions."""

from __future__ import annotations

import fnmatch
import re
from typing import Any

from ...errors import HubUnavailableError, InputError
from .files import first_line, net_errors
from .folder_contents import is_metadata
from .naming import _by_split, is_data_file, split_matches

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


def choose_files(names: list[str], card: dict | None, config: str | None, split: str | None,
                 where: str, cached: bool = False, local: bool = False) -> list[str]:
    """The data files of a Hub repo that make `config` (and `split`): by the card's `configs:` when it has
    them, else by the Hub's conventions (a folder or file named like the config, files named like the split).
    `cached` / `local`: `names` are what a Hub cache snapshot / a local copy of the repo holds, so a card pattern
    none of them matches is a part of the dataset that is not there (an error), not an empty split."""
    data = sorted(n for n in names if is_data_file(n) and not is_metadata(n)
                  and not any(p.startswith(".") for p in n.split("/")))
    configs = (card or {}).get("configs")
    configs = [c for c in configs if isinstance(c, dict)] if isinstance(configs, list) else []
    if configs:
        by_name = {card_text(c.get("config_name", "default"), where, "a config_name"): c for c in configs}
        if config is None:
            defaults = [n for n, c in by_name.items() if c.get("default")]
            config = defaults[0] if defaults else ("default" if "default" in by_name else
                                                   next(iter(by_name)) if len(by_name) == 1 else None)
            if config is None:
                raise InputError(f"{where}: the dataset has configs {', '.join(by_name)}; name one "
                                 "(owner/name:CONFIG)")
        if config not in by_name:
            raise InputError(f"{where}: no config '{config}'; its configs: {', '.join(by_name)}")
        # `data_dir` roots the config's files (and its data_files patterns): without it, another config's
        # files were read as this one's
        data_dir = card_data_dir(by_name[config].get("data_dir"), where, config)
        if data_dir:
            data = [n for n in data if n.startswith(data_dir + "/")]
        patterns = card_patterns(by_name[config].get("data_files"), split, where, config)
        if patterns is None:  # no data_files: the config's files, split by their names as the Hub does
            chosen = data if split is None else [n for n, _ in _by_split(
                [(n, n[len(data_dir) + 1:] if data_dir else n) for n in data], split, where)]
            patterns = []
        else:
            patterns = [f"{data_dir}/{p}" if data_dir else p for p in patterns]
            chosen = [n for n in data if any(fnmatch.fnmatch(n, p) for p in patterns)]
        absent = [p for p in patterns if (cached or local) and not any(fnmatch.fnmatch(n, p) for n in data)]
        if absent and local:
            raise InputError(
                f"{where}: the card's config '{config}' reads {absent[0]}, and no file in the folder matches it "
                "(a partial copy of the repo?), so its rows would be left out; add the files the card names, pick "
                "another split (--split), or fix the configs in README.md")
        if absent:
            raise HubUnavailableError(
                f"{where}: the card's config '{config}' reads {absent[0]}, and no file of it is in the Hub cache "
                "(a partial download), so its rows would be left out; run once with internet (without "
                "HF_HUB_OFFLINE) to download the dataset, pick a split that is cached (--split), or pass --data "
                "NAME=DIR with a folder holding every file")
    else:
        chosen = data
        if config is not None:
            chosen = [n for n in data if n.split("/")[0] == config or split_matches(n.rsplit("/", 1)[-1], config)]
            if not chosen:
                raise InputError(f"{where}: no files of config '{config}' (a folder '{config}/' or files named "
                                 f"'{config}…'); data files: {', '.join(data[:8]) or 'none'}")
        if split is not None:
            chosen = _by_split([(n, n) for n in chosen], split, where)
            chosen = [n for n, _ in chosen]
    if not chosen and cached and not data:  # a snapshot of the card alone: its data was never downloaded
        raise HubUnavailableError(
            f"{where}: the Hub cache holds no data file of this dataset (.parquet, .jsonl, .json, .csv; only "
            f"{', '.join(names[:3]) or 'nothing'}{' …' if len(names) > 3 else ''}), so a part of the repo was "
            "downloaded; run once with internet (without HF_HUB_OFFLINE) to download it, or give a local file or "
            "folder")
    if not chosen:
        raise InputError(f"{where}: no data files (.parquet, .jsonl, .json, .csv) for "
                         f"{'config ' + config if config else 'this dataset'}{' split ' + split if split else ''}")
    return chosen
