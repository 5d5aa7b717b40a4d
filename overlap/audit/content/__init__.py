"""The reference answer and the readers of file content: ``reference`` (fix and test
patches, fixed blobs), ``matchers`` (hunks, test IDs, hex IDs), ``archives`` (zip, gzip and tar members) and
``pyc`` (bytecode headers and code objects).

Layer: below ``context`` and the checks; imports ``git`` (the hardened runner for ``git apply``) and ``tree``.
"""
