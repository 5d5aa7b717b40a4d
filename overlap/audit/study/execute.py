"""One target's audit, and the engines that run many: child processes (``local``) or Ray tasks (``ray``).

``audit_target`` is what a worker runs: it writes the target's reference as a one-record instance file in a
private scratch folder (the patches are text, never file names the audit would walk), calls ``audit()`` and
returns a plain result: ``{"status": "ok", "report": …}`` or ``{"status": "error", "error": one line}``.

The local engine starts one child process per target (at most ``workers`` at a time), each in its own
process group, so a crash or a hang ends only that target: past the timeout the group is killed and the
target is reported as failed. The Ray engine runs the same function as a Ray task.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import signal
import tempfile
import time
from collections import deque
from collections.abc import Callable, Iterable
from multiprocessing.connection import wait
from pathlib import Path

from ...errors import InputError
from ...reach import ray_session

Job = tuple[str, dict]  # (key, payload)
Done = Callable[[str, dict], None]


def _line(text: str) -> str:
    return " ".join(str(text).split())[:500] or "failed"


def audit_target(payload: dict) -> dict:
    """Audit one target (``payload``: ``target`` as a dict and ``options``); never raises."""
    target, options = payload["target"], payload["options"]
    if target.get("error"):
        return {"status": "error", "error": _line(target["error"])}
    scratch = tempfile.mkdtemp(prefix="overlap-batch-")
    try:
        from ..run import audit  # imported in the worker: the parent never loads the checks

        record = {k: target.get(k) for k in ("instance_id", "base_commit", "patch", "test_patch", "fix_commit")}
        record = {k: v for k, v in record.items() if v}
        kwargs = {}
        if record:
            instance = Path(scratch, "instance.json")
            instance.write_text(json.dumps(record), encoding="utf-8", errors="surrogateescape")
            kwargs["instance"] = str(instance)
        report = audit(target["target"], network=options.get("network", "any"),
                       repo_path=target.get("repo_path") or options.get("repo_path"),
                       limits=list(options.get("limits") or ()) or None, git=options.get("git"),
                       insecure_registries=options.get("insecure_registries") or (), **kwargs)
        return {"status": "ok", "report": report.to_dict()}
    except InputError as exc:
        return {"status": "error", "error": _line(exc)}
    except Exception as exc:  # one target's failure is reported on its row, never stops the batch
        return {"status": "error", "error": _line(f"internal error: {type(exc).__name__}: {exc}")}
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def run_target(payload: dict) -> dict:
    """``audit_target``, plus the network route's section when the run asked for it (``options["index"]``). The
    route needs no image, so a target whose audit failed still gets it."""
    result = audit_target(payload)
    if payload["options"].get("index") is not None:
        from .network import network_section

        result["network"] = network_section(payload["target"], payload["options"])
    return result


def _child(payload: dict, out: str) -> None:
    os.setsid()  # its own process group: a timeout kills the audit and the git it started, nothing else
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOPS)  # blocked by the parent while it was started
    # every temp file of this audit (its scratch, the fix's files) inside the run's folder, which the parent
    # removes whatever ends the run: a child killed mid-audit cannot clean up after itself
    tempfile.tempdir = os.path.dirname(out)
    os.environ["TMPDIR"] = tempfile.tempdir
    result = run_target(payload)
    tmp = out + ".part"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(result, fh)
    os.replace(tmp, out)


_STOPS = (signal.SIGINT, signal.SIGTERM)


def _kill(proc) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
    proc.join(5)


def run_local(jobs: Iterable[Job], workers: int, timeout: float, done: Done) -> None:
    """Run each job in a child process, ``workers`` at a time; ``done(key, result)`` as each ends."""
    ctx = multiprocessing.get_context("spawn")  # no fork of a parent that may hold threads (a spinner, Ray)
    pending: deque[Job] = deque(jobs)
    running: dict = {}  # sentinel -> (key, process, deadline, result file)
    folder = tempfile.mkdtemp(prefix="overlap-batch-")
    try:
        n = 0
        while pending or running:
            while pending and len(running) < max(1, workers):
                key, payload = pending.popleft()
                out = os.path.join(folder, f"{n}.json")
                n += 1
                proc = ctx.Process(target=_child, args=(payload, out), daemon=True)
                # Ctrl-C or SIGTERM between the start and the bookkeeping would leave a child half-started (it
                # reads its job from a pipe the parent no longer writes: a traceback) and never killed; held
                # back until the child is one the `finally` below kills
                signal.pthread_sigmask(signal.SIG_BLOCK, _STOPS)
                try:
                    proc.start()
                    running[proc.sentinel] = (key, proc, time.monotonic() + timeout, out)
                finally:
                    signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOPS)
            now = time.monotonic()
            left = max(0.0, min(d for _, _, d, _ in running.values()) - now)
            ready = wait(list(running), timeout=left)
            now = time.monotonic()
            for sentinel in list(running):
                key, proc, deadline, out = running[sentinel]
                if sentinel in ready:
                    proc.join()
                    del running[sentinel]
                    done(key, _read_result(out, proc.exitcode))
                elif now >= deadline:
                    _kill(proc)
                    del running[sentinel]
                    done(key, {"status": "error", "error": f"timed out after {timeout:g} s (--timeout)"})
    finally:
        for _key, proc, _, _ in running.values():
            _kill(proc)
        shutil.rmtree(folder, ignore_errors=True)


def _read_result(out: str, exitcode: int | None) -> dict:
    try:
        with open(out, encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, ValueError):
        how = f"signal {-exitcode}" if exitcode is not None and exitcode < 0 else f"exit code {exitcode}"
        return {"status": "error", "error": f"the audit process ended without a result ({how})"}


def run_ray(jobs: Iterable[Job], workers: int | None, timeout: float, done: Done, address: str | None = None) -> None:
    """Run each job as a Ray task (one CPU each); the same results as ``run_local``.

    Ray already initialised in this process is used; else ``address`` (or ``RAY_ADDRESS``) is attached to,
    else a local Ray is started (and stopped at the end) with usage statistics off unless the user set them.
    At most ``workers`` tasks (default: the cluster's CPUs) are in flight, so a task's timeout counts from
    its start, not from a queue.
    """
    with ray_session(address, workers) as ray:
        limit = workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
        task = ray.remote(num_cpus=1, max_retries=0)(run_target)
        pending: deque[Job] = deque(jobs)
        running: dict = {}  # object ref -> (key, deadline)
        while pending or running:
            while pending and len(running) < limit:
                key, payload = pending.popleft()
                running[task.remote(payload)] = (key, time.monotonic() + timeout)
            left = max(0.0, min(d for _, d in running.values()) - time.monotonic())
            ready, _ = ray.wait(list(running), num_returns=1, timeout=left)
            for ref in ready:
                key, _ = running.pop(ref)
                try:
                    result = ray.get(ref)
                except Exception as exc:  # a crashed worker or a lost node fails this target only
                    result = {"status": "error", "error": _line(f"ray task failed: {type(exc).__name__}: {exc}")}
                done(key, result)
            now = time.monotonic()
            for ref, (key, deadline) in list(running.items()):
                if now >= deadline:
                    ray.cancel(ref, force=True)
                    del running[ref]
                    done(key, {"status": "error", "error": f"timed out after {timeout:g} s (--timeout)"})
