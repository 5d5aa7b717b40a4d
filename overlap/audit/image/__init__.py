"""Reading container images without Docker: ``archive`` opens a ``docker save`` archive, an OCI layout or a
rootfs tar into an ``Image`` (``model``: its layers, each streamed decompressed and hashed), read through
``sources`` (a tar, a folder) and for the ``platform`` asked; ``layers`` merges the layers and ``materialise``
writes a private view of the result. A registry pull (``pull``) fills the blob cache (``blobcache``) from a
``registry`` (``reference``, ``authfile``, ``body``) and is read as an OCI layout; ``strict_tar`` reads tars as
strictly as the runtime does.

Layer: below ``context`` and the checks; imports only ``tree`` and ``targets`` of the audit package.
"""
