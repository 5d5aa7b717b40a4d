"""The check step of the GitHub Action (action.yml at the repository root): run `overlap audit` or `overlap
compare` with `--format sarif`, write the SARIF log, and hand the exit code to the later steps.

Inputs come as the action passes them, in the environment: OVERLAP_COMMAND (audit or compare), OVERLAP_ARGS
(the command's arguments as shell words), OVERLAP_FAIL_ON (empty: none), OVERLAP_SARIF (the log's path).
Outputs go to the file GITHUB_OUTPUT names: `exit-code` and `sarif-file` (empty when the command printed no
log, e.g. a usage error). The step itself ends 0 when it could hand them on, so the upload step still runs
after a failed check and the action's last step fails the job with the command's code; without
GITHUB_OUTPUT (run by hand) it ends with the command's code.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

COMMANDS = ("audit", "compare")


def main() -> int:
    command = os.environ.get("OVERLAP_COMMAND", "audit").strip()
    if command not in COMMANDS:
        print(f"overlap action: command {command!r}: give audit or compare", file=sys.stderr)
        return 2
    try:
        args = shlex.split(os.environ.get("OVERLAP_ARGS", ""))
    except ValueError as exc:
        print(f"overlap action: args: {exc} (quote arguments as in a shell)", file=sys.stderr)
        return 2
    fail_on = os.environ.get("OVERLAP_FAIL_ON", "").strip()
    sarif = Path(os.environ.get("OVERLAP_SARIF", "").strip() or "overlap.sarif")
    argv = [sys.executable, "-m", "overlap", command, *args, "--format", "sarif",
            *(["--fail-on", fail_on] if fail_on else [])]
    print("overlap action: " + shlex.join(["overlap", *argv[3:]]), file=sys.stderr)
    sarif.parent.mkdir(parents=True, exist_ok=True)
    # written beside the target and renamed: a failed run never leaves half a log for the upload step
    with tempfile.NamedTemporaryFile("wb", dir=sarif.parent, prefix=".overlap-sarif-", delete=False) as out:
        code = subprocess.run(argv, stdout=out, check=False).returncode
    written = Path(out.name)
    logged = written.stat().st_size > 0
    if logged:
        os.replace(written, sarif)
    else:
        written.unlink()
    outputs = os.environ.get("GITHUB_OUTPUT")
    if not outputs:
        return code
    with open(outputs, "a", encoding="utf-8") as f:
        f.write(f"exit-code={code}\n")
        f.write(f"sarif-file={sarif if logged else ''}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
