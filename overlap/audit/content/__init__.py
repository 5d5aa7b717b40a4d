"""The reference answer and the readers of file content: ``reference`` (the reference as given: fix and
test patches, test IDs), ``patch`` (a unified diff read into per-file patches), ``fixed`` (the fixed content of
every reference path, by ``git apply`` in a scratch folder, and its blob ids), ``base_blobs`` (B's content of
the patched files, submodules followed), ``matchers`` (hunks, test IDs, hex IDs), ``archives`` (zip, gzip and
tar members) and ``pyc`` (bytecode headers and code objects).

Layer: below ``context`` and the checks; imports ``git`` (the hardened runner for ``git apply``, the stores of
submodules), ``targets`` (a submodule's git folder inside a root filesystem) and ``tree``.
"""
