"""The `overlap` app: the click group and the error handling every command shares.

Errors are handled once, here, for every command:

- a user mistake, an input or network problem (`OverlapError`) and any OS error (permission, disk full,
  read-only file system, busy, stdout to a full device) is one line `overlap: error: …` naming the path,
  exit 2 (`handles_errors`);
- a usage error (unknown option, bad or out-of-range value, missing argument) is one line too, exit 2
  (`OverlapGroup.main`), never click's three-line box;
- a broken pipe on stdout (`overlap … | head`) ends quietly with exit 141, as a process killed by SIGPIPE;
- SIGTERM unwinds like Ctrl-C (temp folders are removed), then exits 143 with one line; Ctrl-C exits 130 with one
  line;
- an unexpected exception (a bug) is one line too, exit 2; `OVERLAP_DEBUG=1` shows its traceback.
"""

from __future__ import annotations

import errno
import functools
import os
import signal
import sys
import threading
from typing import Annotated

import typer
from typer.core import TyperGroup

try:  # typer vendors its own click since 0.2x; older versions use click itself
    from typer._click import exceptions as click_errors
except ImportError:  # pragma: no cover
    from click import exceptions as click_errors

from .. import __version__
from ..errors import OverlapError
from ..outputs.atomic import os_error_message, os_error_reason, printable

EXIT_BROKEN_PIPE = 128 + signal.SIGPIPE
EXIT_TERMINATED = 128 + signal.SIGTERM


class Terminated(SystemExit):
    """Raised in the main thread on SIGTERM, so `finally`/`except BaseException` cleanups run."""

    def __init__(self) -> None:
        super().__init__(EXIT_TERMINATED)


def _on_sigterm(signum, frame):
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second SIGTERM must not interrupt the cleanup
    raise Terminated()


_INTERRUPTED: list[bool] = []


def _on_sigint(signum, frame):
    # Ctrl-C stays a KeyboardInterrupt (cleanups see it as ever); typer turns it into a silent exit 130, so
    # the run is marked, and says what happened in one line
    _INTERRUPTED.append(True)
    signal.default_int_handler(signum, frame)


class _Stdout:
    """sys.stdout while a command runs: an OS error writing it names `stdout` (the error's filename), so it
    is reported as such, whatever wrote it (typer.echo, rich, csv, sys.stdout.write)."""

    def __init__(self, stream) -> None:
        self._stream = stream

    def _named(self, exc: OSError) -> OSError:
        return exc if exc.filename is not None else type(exc)(exc.errno, exc.strerror, "stdout")

    def write(self, text):
        try:
            return self._stream.write(text)
        except OSError as exc:
            raise self._named(exc) from None

    def flush(self):
        try:
            return self._stream.flush()
        except OSError as exc:
            raise self._named(exc) from None

    def __getattr__(self, name):
        return getattr(self._stream, name)


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


class OverlapGroup(TyperGroup):
    """The app's click group: usage errors are one line, SIGTERM cleans up (see the module docstring)."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        previous, previous_int, stdout = None, None, sys.stdout
        if threading.current_thread() is threading.main_thread():
            previous = signal.signal(signal.SIGTERM, _on_sigterm)
            if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
                previous_int = signal.signal(signal.SIGINT, _on_sigint)
        sys.stdout = _Stdout(stdout)
        try:
            code = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except getattr(click_errors, "NoArgsIsHelpError", ()) as exc:
            exc.show()
            sys.exit(2)
        except click_errors.UsageError as exc:
            where = exc.ctx.command_path if exc.ctx is not None else "overlap"
            _error_line(f"{_one_line(exc.format_message())} (see `{where} --help`)")
            sys.exit(2)
        except click_errors.ClickException as exc:
            _error_line(_one_line(exc.format_message()))
            sys.exit(2)
        except typer.Abort:
            _error_line("aborted")
            sys.exit(130)
        except Terminated:
            _error_line("terminated (SIGTERM); unfinished output was removed")
            sys.exit(EXIT_TERMINATED)
        except OverlapError as exc:  # raised outside a command body (e.g. while parsing)
            sys.exit(fail(str(exc), exc.exit_code).exit_code)
        except OSError as exc:
            sys.exit(_os_error(exc).exit_code)
        except Exception as exc:  # a bug: one line, never a traceback, never exit 1 ("overlap found")
            if os.environ.get("OVERLAP_DEBUG"):
                raise
            _error_line(f"internal error ({type(exc).__name__}: {_one_line(exc)[:300]}); please report it, "
                        f"with the traceback OVERLAP_DEBUG=1 shows")
            sys.exit(2)
        finally:
            sys.stdout = stdout
            if previous is not None:
                signal.signal(signal.SIGTERM, previous)
            if previous_int is not None:
                signal.signal(signal.SIGINT, previous_int)
        if _INTERRUPTED and code == 130:
            _error_line("interrupted (Ctrl-C); unfinished output was removed")
        sys.exit(code if isinstance(code, int) else 0)


app = typer.Typer(
    name="overlap",
    help="Find where AI training sets and benchmarks contain the same tasks, by source identity.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    cls=OverlapGroup,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _show_version(value: bool) -> None:
    if value:
        typer.echo(f"overlap {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[bool, typer.Option("--version", is_eager=True, callback=_show_version,
                                          help="Show the version and exit.")] = False,
) -> None:
    """Find where AI training sets and benchmarks contain the same tasks, by source identity."""


def _error_line(message: str) -> None:
    try:
        typer.echo(f"overlap: error: {printable(message)}", err=True)
    except OSError:  # stderr itself is gone: nothing left to tell
        pass


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print one line to stderr and return the Exit to raise."""
    _error_line(message)
    return typer.Exit(code)


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's last flush of unwritable output cannot fail again."""
    try:
        fd = sys.stdout.fileno()
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, fd)
        os.close(devnull)
    except (AttributeError, OSError, ValueError):
        pass

def _os_error(exc: OSError) -> typer.Exit:
    """An OS error as one line and exit 2 (a broken pipe on stdout: quietly, exit 141)."""

    if exc.filename == "stdout":
        _silence_stdout()
        if isinstance(exc, BrokenPipeError) or exc.errno == errno.EPIPE:
            return typer.Exit(EXIT_BROKEN_PIPE)  # the reader stopped (`| head`): nothing to say
        return fail(f"cannot write to stdout: {os_error_reason(exc).split(';')[0]}")
    return fail(os_error_message(exc))


def handles_errors(func):
    """User mistakes, input/network problems and OS errors become one stderr line and exit 2, never a
    traceback. Stdout is flushed before the command ends, so a full or closed stdout is reported too."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        try:
            try:
                return func(*args, **kwargs)
            finally:
                sys.stdout.flush()
        except OverlapError as exc:
            raise fail(str(exc), exc.exit_code) from None
        except OSError as exc:
            raise _os_error(exc) from None

    return wrapper

