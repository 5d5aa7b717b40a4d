"""One line per check saying what it looks at: the rule descriptions of the CI formats (SARIF rules, JUnit
test names). The full rules are the tables of docs/audit.md; a test keeps the two lists of ids equal."""

from __future__ import annotations

CHECK_DESCRIPTIONS: dict[str, str] = {
    "G1": "Refs of every namespace pointing outside base history",
    "G2": "Reflog lines naming non-base commits",
    "G3": "Stash entries, including those kept only in the stash reflog",
    "G4": "Pseudo-refs and operation state (ORIG_HEAD, FETCH_HEAD, rebase folders, rr-cache, ...)",
    "G5": "Unreachable objects, per storage",
    "G6": "Non-base commits: subject, dates, paths touched, fixed blobs held",
    "G7": "The index: staged blobs that differ from HEAD, conflict stages, resolve-undo data",
    "G8": "Linked worktrees",
    "G9": "Alternates: object stores borrowed from elsewhere",
    "G10": "Remotes, promisors, partial-clone settings and URL rewrites",
    "G11": "History rewriting: replace refs, grafts, shallow boundaries",
    "G12": "Ids kept in commit-graph, multi-pack-index and orphan pack indexes",
    "G13": "Nested stores (submodules, other git folders), each audited against its own base",
    "G14": "HEAD versus base: setup commits, a HEAD that does not descend from the base",
    "G15": "Formats the audit does not understand; objects git cannot read",
    "F1": "The fixed content anywhere: stores, index, worktree, any file of the same size; the fix commit",
    "F2": "The hidden tests' content anywhere",
    "F3": "Near copies of the fix's distinctive added lines",
    "T1": "Worktree modification times that set the touched files apart",
    "T2": "Index stat data and files rewritten after the last index refresh",
    "T3": "The last image layer that wrote each tracked file",
    "L1": "Patch text anywhere; known answer names such as fix.patch",
    "L2": "Hidden tests and test runners in known places, symlinks out of the repo, untracked test files",
    "L3": "Python bytecode that does not match its current source",
    "L4": "Test and build caches",
    "L5": "Build outputs, copied binaries, archives and git bundles",
    "L6": "Logs and test reports",
    "L7": "Shell and editor history, swap files",
    "L8": "Image config and history (RUN lines, environment, labels)",
    "L9": "Hex strings in tags, labels, environment, hostnames and folder names that name future commits",
    "L10": "Task metadata files (patch, test_patch, FAIL_TO_PASS keys)",
    "L11": "Content a later image layer hid",
}
