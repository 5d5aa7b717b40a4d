"""The reference answer and the readers of file content: ``reference`` (fix and test
patches, fixed blobs), ``base_blobs`` (B's content of the patched files, submodules followed), ``matchers``
(hunks, test IDs, hex IDs), ``archives`` (zip, gzip and tar members) and ``pyc`` (bytecode headers and code
objects).

Layer: below ``context`` and the checks; imports ``git`` (the hardened runner for ``git apply``, the stores of
submodules), ``targets`` (a submodule's git folder inside a root filesystem) and ``tree``.
"""
