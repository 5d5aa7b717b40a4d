"""Reading a git store: the hardened git runner (``cmd``), pure parsers of the
files of a git folder (``files``, ``binary``), the refusal of hostile entries (``guard``), and ``repo.GitRepo``,
the scan every G check reads (with its mixins ``refs``, ``entries``, ``storage`` and ``objects``).

Layer: below ``context`` and the checks; imports only ``tree`` of the audit package (and ``overlap.errors``).
"""
