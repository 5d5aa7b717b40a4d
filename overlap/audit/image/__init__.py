"""Reading container images without Docker: ``archive`` opens a ``docker save`` archive, an
OCI layout or a rootfs tar and checks its digests; ``layers`` merges the layers and materialises a private view.

Layer: below ``context`` and the checks; imports only ``tree`` and ``targets`` of the audit package.
"""
