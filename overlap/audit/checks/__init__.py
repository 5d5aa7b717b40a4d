"""The audit's checks (docs/audit.md, Checks), one module per group, each ``check_<id>(ctx) -> list[Finding]``:
``git`` (G1–G8; G4 in ``gitstate``), ``gitmeta`` (G9–G15), ``fixed`` (F1, F2), ``near`` (F3), ``times`` (T1,
T2), ``leftovers`` (L1–L7, L9, L10 and the file part of F3, in one pass with its mixins ``patches`` (L1),
``caches`` (L4), ``compiled``, ``logs`` (L6, L7), ``commit_ids`` (L9), ``large`` and ``background``) and
``image`` (T3, L8, L11). ``rank`` orders a finding's items worst first. ``registry`` lists them all with
their needs and runs them on one target.

Layer: above ``context`` and the readers (``git``, ``image``, ``content``), below ``run``; a check never
imports ``registry`` (nested stores are reached through ``ctx.nested``).
"""
