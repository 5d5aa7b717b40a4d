"""User-facing errors. The CLI turns these into one line on stderr and exit code 2."""


class OverlapError(Exception):
    """A user mistake or an input/network problem: exit 2 with this message, never a traceback."""

    exit_code = 2


class InputError(OverlapError):
    """A file, column, row or id that cannot be used as given."""


class UnknownDatasetError(OverlapError):
    """A dataset name that is not registered (the message lists the known names)."""


class HubUnavailableError(OverlapError):
    """The Hub cannot be reached and the files are not cached locally."""
