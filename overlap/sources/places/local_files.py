"""Which files a local file, folder or glob holds, chosen by split (a folder laid out like a Hub repo by its
card's `configs:`), as `DataFile`s named the way the provenance records them."""

from __future__ import annotations

import glob as globlib
from pathlib import Path

from ...errors import InputError
from .card import choose_files, read_card
from .folder_contents import folder_entries, is_metadata, refuse_unread, unread_problem
from .local_glob import expand_glob
from .naming import DataFile, _by_split, is_data_file, split_matches


def _local_files(text: str, split: str | None) -> tuple[list[DataFile], str, str] | None:
    """(files, origin, label) of a local file, folder or glob; None when `text` names nothing local."""
    path = Path(text).expanduser()
    if path.is_file():
        if not is_data_file(path.name):
            raise InputError(f"{path}: unsupported file type; use .parquet, .jsonl, .json or .csv "
                             "(optionally .gz or .zst compressed)")
        if split is not None:  # one file has no splits: ignoring the option would read rows the user excluded
            raise InputError(f"{path}: one file has no split '{split}'; --split picks files of a Hub dataset or "
                             "a folder (leave it out, or name the split's file)")
        return [DataFile(str(path), path.name)], "local-file", path.name
    if path.exists() and not path.is_dir():
        raise InputError(f"{path}: not a regular file (a FIFO or device); give a data file or a folder")
    if path.is_dir():
        found, unread = [], []
        for entry in folder_entries(path):
            name = entry.relative_to(path).as_posix()
            if any(part.startswith(".") for part in entry.relative_to(path).parts):
                continue
            if entry.name == "_delta_log" and entry.is_dir():
                # its parquet files are every version's, removed rows included: reading them all is wrong
                raise InputError(f"{entry.parent}: a Delta table, whose folder keeps older versions' parquet files "
                                 "beside the current ones; export its current version to parquet (deltalake: "
                                 "DeltaTable(PATH).to_pyarrow_table(), then pyarrow.parquet.write_table) and give "
                                 "that")
            data = is_data_file(entry.name) and not is_metadata(entry.name)
            why = unread_problem(entry, data)
            if why is not None:
                unread.append(((entry, name), why))
            elif data and entry.is_file():
                found.append((entry, name))
        by_card = _card_split(path, split, [name for _, name in found])
        names = _by_split(found, split, str(path)) if by_card is None else [f for f in found if f[1] in by_card]
        refuse_unread([(entry, why) for (entry, name), why in unread if split is None or split_matches(name, split)])
        if not names:
            raise InputError(f"{path}: no data files (.parquet, .jsonl, .json, .csv, optionally .gz/.zst) in "
                             "this folder")
        return [DataFile(str(p), n) for p, n in names], "local-folder", path.name or str(path)
    if globlib.has_magic(text):
        matched = expand_glob(text)
        found = [p for p in matched if p.is_file() and is_data_file(p.name) and not is_metadata(p.name)]
        names = _by_split([(p, str(p)) for p in found], split, text)
        refuse_unread([(p, why) for p in matched
                       if (why := unread_problem(p, is_data_file(p.name) and not is_metadata(p.name))) is not None
                       and (split is None or split_matches(str(p), split))])
        if not names:
            raise InputError(f"{text}: the pattern matches no data file (.parquet, .jsonl, .json, .csv, "
                             "optionally .gz/.zst)")
        return [DataFile(str(p), p.name if len(names) == 1 else n) for p, n in names], "local-glob", text
    return None


def glob_source(pattern: str, split: str | None = None):
    """The files of a local glob as a FileSource, by the names `open_batches` records them under."""
    from .files import NamedFiles

    files, _, _ = _local_files(pattern, split) or ([], "", "")
    return NamedFiles(origin="local-glob", location=pattern, paths={f.name: Path(f.path) for f in files})


def _card_split(folder: Path, split: str | None, names: list[str]) -> set[str] | None:
    """The files of `split` in a folder laid out like a Hub dataset repo whose README.md has `configs:`, as the
    Hub picks them (by the card, not by their names: a clone read by names gave another split's rows), or None
    when no card decides (no split asked, no card or configs, several configs with none the default)."""
    if split is None:
        return None
    readme = folder / "README.md"
    card = read_card(lambda: readme.read_bytes() if readme.is_file() else None, str(readme))
    configs = (card or {}).get("configs")
    configs = [c for c in configs if isinstance(c, dict)] if isinstance(configs, list) else []
    if not configs or (len(configs) > 1 and not any(c.get("default") or c.get("config_name", "default") == "default"
                                                    for c in configs)):
        return None
    return set(choose_files(names, card, None, split, str(folder), local=True))
