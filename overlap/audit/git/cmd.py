"""The hardened git runner: the only way the audit starts git.

Every call gets an environment built from scratch (only ``PATH`` is inherited), a private empty
``HOME``, ``--no-pager``, an explicit ``--git-dir`` (never discovery from the cwd) and the ``-c``
options that switch off everything a hostile repository could make git run: fsmonitor, hooks, lazy
fetches through promisor remotes, pagers, signature programs. Subcommands and their options are
checked against an allow-list before anything starts; a forbidden call raises
:class:`ForbiddenGitCommand` and never reaches ``subprocess``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

HARDEN_CONFIG: tuple[str, ...] = (
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "safe.directory=*",
    "core.untrackedCache=false",
    "core.splitIndex=false",
    "log.showSignature=false",
    "gc.auto=0",
    "protocol.allow=never",
    "protocol.ext.allow=never",
    "protocol.file.allow=never",
    "core.pager=cat",
)

# Variables every call carries (HOME and XDG_CONFIG_HOME are added per runner).
HARDEN_ENV: dict[str, str] = {
    "LC_ALL": "C",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_ATTR_NOSYSTEM": "1",
    "GIT_NO_REPLACE_OBJECTS": "1",
    # info/grafts rewrites parents like a replace ref does: without this a graft could splice a fix
    # commit into the base history and hide it from every non-base check. A path below /dev/null can never
    # exist (git then reads no graft file and says nothing; an existing empty file makes it print a hint)
    "GIT_GRAFT_FILE": "/dev/null/no-grafts",
    "GIT_OPTIONAL_LOCKS": "0",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_PAGER": "cat",
    "GIT_ALLOW_PROTOCOL": "none",
    "GIT_NO_LAZY_FETCH": "1",
}

FORBIDDEN = frozenset(
    {
        "for-each-ref", "show-ref", "status", "checkout", "switch", "restore", "reset", "stash", "gc",
        "prune", "repack", "fsck", "hash-object", "update-index", "update-ref", "fetch", "pull", "push",
        "clone", "submodule", "worktree", "log", "show", "diff", "commit", "merge", "rebase", "am",
        "cherry-pick", "revert", "tag", "branch", "remote", "reflog", "maintenance", "commit-graph",
        "multi-pack-index", "pack-refs", "bundle", "archive", "grep", "blame", "notes", "replace",
        "daemon", "upload-pack", "receive-pack", "fetch-pack", "send-pack", "filter-branch",
    }
)

_HEX_REV = re.compile(r"^\^?[0-9a-f]{4,64}$")
_HEX = re.compile(r"^[0-9a-f]{4,64}$")


class ForbiddenGitCommand(ValueError):
    """A git call outside the allow-list (a programming error, never user input)."""


class GitError(Exception):
    """git failed, timed out or wrote too much: the calling check becomes ``incomplete``."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class GitResult:
    returncode: int
    stdout: bytes
    stderr: str  # first non-empty stderr line, decoded
    errors: tuple[str, ...] = ()  # every `error:` line git wrote (a corrupt object it skipped says so only there)


def _options_and_args(args: Sequence[str]) -> tuple[list[str], list[str]]:
    opts, rest = [], []
    for a in args:
        (opts if a.startswith("-") else rest).append(a)
    return opts, rest


def check_call(args: Sequence[str], *, git_dir: Path | None, cwd: Path | None, scratch: Path | None) -> None:
    """Raise ForbiddenGitCommand unless ``args`` is one of the allowed read-only forms."""
    if not args:
        raise ForbiddenGitCommand("empty git command")
    sub, rest = args[0], list(args[1:])
    if sub in FORBIDDEN:
        raise ForbiddenGitCommand(f"git {sub} is forbidden in the audit")
    needs_git_dir = sub not in ("version", "config", "apply")
    if needs_git_dir and git_dir is None:
        raise ForbiddenGitCommand(f"git {sub} needs an explicit --git-dir")
    if git_dir is not None and not Path(git_dir).is_absolute():  # git runs in a private folder: a relative
        raise ForbiddenGitCommand(f"--git-dir {git_dir} is relative")  # path would name another folder there
    if not needs_git_dir and git_dir is not None:
        raise ForbiddenGitCommand(f"git {sub} runs without --git-dir")
    if sub == "version":
        if rest:
            raise ForbiddenGitCommand("git version takes no arguments")
        return
    if sub == "rev-parse":
        if rest[:2] != ["--verify", "--end-of-options"] and rest[:3] != ["--verify", "-q", "--end-of-options"]:
            raise ForbiddenGitCommand("rev-parse must start with --verify [-q] --end-of-options")
        if len(rest) != (3 if rest[1] == "--end-of-options" else 4):
            raise ForbiddenGitCommand("rev-parse takes exactly one revision")
        return
    opts, pos = _options_and_args(rest)
    if sub == "cat-file":
        allowed = {"--batch-all-objects", "--unordered", "--buffer", "-t", "-e", "-s"}
        for o in opts:
            if not (o in allowed or o.startswith("--batch-check") or o.startswith("--batch=") or o == "--batch"):
                raise ForbiddenGitCommand(f"cat-file option {o} is not allowed")
        if any(not _HEX.match(p) for p in pos):
            raise ForbiddenGitCommand("cat-file takes object IDs only")
        return
    if sub == "rev-list":
        allowed = {"--objects", "--stdin", "--missing=print", "--ancestry-path", "--no-object-names",
                   "--parents", "--topo-order"}
        for o in opts:
            if o not in allowed and not _HEX_REV.match(o):
                raise ForbiddenGitCommand(f"rev-list option {o} is not allowed")
        if any(not _HEX_REV.match(p) for p in pos):
            raise ForbiddenGitCommand("rev-list takes object IDs only (never --all or ref names)")
        return
    if sub == "merge-base":
        if opts != ["--is-ancestor"] or len(pos) != 2 or any(not _HEX.match(p) for p in pos):
            raise ForbiddenGitCommand("merge-base is allowed only as --is-ancestor A B with object IDs")
        return
    if sub in ("ls-files", "ls-tree"):
        head = rest[: rest.index("--")] if "--" in rest else rest
        allowed = ("-s", "-z", "--stage", "--debug") if sub == "ls-files" else ("-r", "-z", "-t", "-l", "--full-tree")
        hex_args = [a for a in head if not a.startswith("-")]
        if any(a not in allowed for a in head if a.startswith("-")):
            raise ForbiddenGitCommand(f"{sub} allows {' '.join(allowed)} only")
        if sub == "ls-files" and hex_args:
            raise ForbiddenGitCommand("ls-files paths must follow --")
        if sub == "ls-tree" and (len(hex_args) != 1 or not _HEX.match(hex_args[0])):
            raise ForbiddenGitCommand("ls-tree takes one object ID")
        return
    if sub == "diff-tree":
        if "--no-ext-diff" not in opts or "--no-textconv" not in opts:
            raise ForbiddenGitCommand("diff-tree must carry --no-ext-diff --no-textconv")
        allowed = {"--no-ext-diff", "--no-textconv", "--no-renames", "-r", "--name-only", "--name-status",
                   "-z", "--no-commit-id", "--root", "--stdin", "--always", "--raw"}
        for o in opts:
            if o not in allowed:
                raise ForbiddenGitCommand(f"diff-tree option {o} is not allowed")
        if any(not _HEX.match(p) for p in pos):
            raise ForbiddenGitCommand("diff-tree takes object IDs only")
        return
    if sub == "config":
        if len(rest) != 5 or rest[:2] != ["--no-includes", "--file"] or rest[3:] != ["--list", "-z"]:
            raise ForbiddenGitCommand("config is allowed only as --no-includes --file F --list -z")
        if not Path(rest[2]).is_absolute():
            raise ForbiddenGitCommand(f"config --file {rest[2]} is relative (git runs in a private folder)")
        return
    if sub == "apply":
        if scratch is None or cwd is None or Path(cwd).resolve() != Path(scratch).resolve():
            raise ForbiddenGitCommand("git apply runs only in the scratch folder")
        for o in opts:
            if o in ("--index", "--cached", "--3way", "-3", "--unsafe-paths", "--intent-to-add", "-N") \
                    or o.startswith("--directory") or o.startswith("--build-fake-ancestor"):
                raise ForbiddenGitCommand(f"git apply {o} is forbidden")
            if o not in ("-R", "--check", "--recount", "--whitespace=nowarn", "--allow-empty", "-p1", "-p0"):
                raise ForbiddenGitCommand(f"git apply option {o} is not allowed")
        return
    raise ForbiddenGitCommand(f"git {sub} is not on the audit's allow-list")


class GitRunner:
    """Runs git with the hardening. ``home`` is a private empty folder (the fake HOME)."""

    def __init__(self, home: Path, *, binary: str | None = None, timeout: float = 300.0,
                 max_output: int = 1 << 30, scratch: Path | None = None):
        self.home = Path(home)
        binary = binary or shutil.which("git") or "git"
        # a path with a folder in it is resolved now: git starts with the private folder as its cwd
        self.binary = os.path.abspath(binary) if os.sep in binary else binary
        self.timeout = timeout
        self.max_output = max_output
        self.scratch = scratch
        self.calls: list[tuple[list[str], dict[str, str]]] = []  # every argv and env, for tests

    def env(self, *, ceiling: Path | None = None) -> dict[str, str]:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
        env.update(HARDEN_ENV)
        env["HOME"] = str(self.home)
        env["XDG_CONFIG_HOME"] = str(self.home)
        if ceiling is not None:
            env["GIT_CEILING_DIRECTORIES"] = str(ceiling)
        return env

    def argv(self, args: Sequence[str], git_dir: Path | None) -> list[str]:
        argv = [self.binary, "--no-pager"]
        if git_dir is not None:
            argv.append(f"--git-dir={git_dir}")
        for c in HARDEN_CONFIG:
            argv += ["-c", c]
        return argv + list(args)

    def run(self, args: Sequence[str], *, git_dir: Path | None = None, input: bytes | None = None,
            cwd: Path | None = None, ok_codes: Sequence[int] = (0,), max_output: int | None = None) -> GitResult:
        """Run one allowed git command; raise GitError on a timeout, too much output or a bad exit."""
        if any("\0" in str(a) for a in args):  # a task record's base or ref name: no git name holds one
            raise GitError(f"git {args[0]}: an argument holds a NUL byte")
        check_call(args, git_dir=git_dir, cwd=cwd, scratch=self.scratch)
        argv = self.argv(args, git_dir)
        ceiling = Path(cwd).parent if (cwd is not None and args[0] == "apply") else None
        env = self.env(ceiling=ceiling)
        if git_dir is not None:
            # diff-tree reads the index and dies on a damaged one, though no check needs git to read it (the
            # tool parses it itself): an index file that never exists is an empty index, so history is read
            env["GIT_INDEX_FILE"] = str(self.home / "no-index")
        self.calls.append((argv, env))
        cap = self.max_output if max_output is None else max_output
        try:
            proc = subprocess.Popen(
                argv, env=env, cwd=str(cwd or self.home),
                stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, close_fds=True, start_new_session=True,
            )
        except OSError as exc:
            raise GitError(f"cannot run git ({self.binary}): {exc.strerror or exc}") from None
        err_chunks: list[bytes] = []

        def read_err() -> None:
            size = 0
            for chunk in iter(lambda: proc.stderr.read(65536), b""):
                if size < 65536:
                    err_chunks.append(chunk)
                    size += len(chunk)

        def write_in() -> None:
            try:
                proc.stdin.write(input)
            except (BrokenPipeError, OSError):
                pass
            finally:
                try:
                    proc.stdin.close()
                except OSError:
                    pass

        threads = [threading.Thread(target=read_err, daemon=True)]
        if input is not None:
            threads.append(threading.Thread(target=write_in, daemon=True))
        for t in threads:
            t.start()
        timed_out = threading.Event()

        def kill() -> None:
            timed_out.set()
            proc.kill()

        timer = threading.Timer(self.timeout, kill)
        timer.start()
        out = bytearray()
        too_big = False
        try:
            while True:
                chunk = proc.stdout.read(1 << 20)
                if not chunk:
                    break
                out += chunk
                if len(out) > cap:
                    too_big = True
                    proc.kill()
                    break
            proc.wait()
        except BaseException:  # Ctrl-C or an error while reading: git must not outlive the audit
            proc.kill()
            proc.wait()
            raise
        finally:
            timer.cancel()
            for t in threads:
                t.join(5)
            proc.stdout.close()
            proc.stderr.close()
        stderr = b"".join(err_chunks).decode("utf-8", "backslashreplace")
        first = next((ln.strip() for ln in stderr.splitlines() if ln.strip()), "")
        what = f"git {args[0]}"
        if timed_out.is_set():
            raise GitError(f"{what} timed out after {self.timeout:g} s")
        if too_big:
            raise GitError(f"{what} wrote more than {cap} bytes")
        if proc.returncode not in ok_codes:
            raise GitError(f"{what} failed (exit {proc.returncode}): {first or 'no message'}")
        errors = tuple(ln.strip() for ln in stderr.splitlines() if ln.startswith("error:"))[:1000]
        return GitResult(proc.returncode, bytes(out), first, errors)

    def version(self) -> str:
        """The installed git's version string (e.g. ``2.39.5``); GitError when git cannot run."""
        res = self.run(["version"])
        m = re.search(rb"git version (\S+)", res.stdout)
        if not m:
            raise GitError("git version printed nothing usable")
        return m.group(1).decode("ascii", "replace")


def version_tuple(version: str) -> tuple[int, ...]:
    parts = []
    for p in version.split(".")[:3]:
        m = re.match(r"\d+", p)
        parts.append(int(m.group()) if m else 0)
    return tuple(parts)
