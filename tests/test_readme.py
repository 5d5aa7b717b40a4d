"""README.md's code blocks are tests.

Every fenced block is either `bash` or `python`. Bash blocks run line by line, in README order, in one
scratch folder that holds the repository's `data/` (demo data) and `README.md`, offline
(HF_HUB_OFFLINE=1). A line that cannot run offline is listed in NOT_RUN with the reason; an `overlap`
command on such a line is still checked: the command exists and every option it uses is in
`overlap <command> --help`. Python blocks run after the bash blocks, in the same folder (they use the demo
data and the walkthrough's `try/testbed`). EXPECT pins what the README says a line prints.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"

HUB = "names Hub datasets without --data: downloads them (network)"
USER_FILES = "names files the reader brings (their own task repository, patch, image or dataset copy)"
NOT_RUN: dict[str, str] = {
    # Quickstart: setting up the machine, not something a test can redo.
    "git clone <repository URL> overlap && cd overlap": "clones the repository (network; the test runs inside it)",
    "python -m venv .venv && . .venv/bin/activate": "creates the environment the tests already run in",
    "python -m pip install -e . && overlap demo": "installs the package (network); `overlap demo` runs below",
    "python -m pip install -e '.[test]' && python -m pytest -q": "installs (network) and runs this very test suite",
    # compare
    "overlap compare mimo-cyber cybergym": HUB,
    "overlap compare sec-bench cybergym --data sec-bench=./SEC-bench --data cybergym=./cybergym "
    "--data arvo=./ARVO": USER_FILES + " (local clones of SEC-bench, CyberGym and ARVO)",
    "overlap compare sec-bench:oss cybergym@main --format json --no-report": HUB,
    "overlap compare mimo-cyber cybergym --fail-on 5%": HUB,
    "overlap compare sec-bench cybergym --data arvo-meta=./ARVO-Meta": HUB + "; ./ARVO-Meta is the reader's clone",
    "overlap compare swe-rebench-v2 multi-swe-bench swe-polybench swe-bench-multilingual "
    "--reference multi-swe-rl-discarded": HUB,
    "overlap compare mimo-cyber cybergym --text prompt:description --ngram 13 --no-evidence": HUB,
    # your own dataset
    "overlap filter me/my-rl-mix@main cybergym --id-column extra_info.instance_id --split train "
    "--out try/my-rl-mix-clean": "names the reader's own Hub dataset (network)",
    # matrix, ngram
    "overlap matrix multi-swe-bench swe-polybench swe-bench-multilingual swe-bench swe-bench-pro "
    "--out reports/matrix": HUB,
    "overlap ngram swe-rebench-v2 swe-bench-multilingual --text problem_statement:problem_statement "
    "--out reports/ngram": HUB,
    "overlap ngram train.jsonl bench.jsonl --text text:text --id-column id --format json": USER_FILES,
    # filter
    "overlap filter mimo-cyber cybergym --out mimo-minus-cybergym": HUB,
    "overlap filter mimo-cyber cybergym --drop id --drop dup --drop spec:harness --drop ngram:13 "
    "--out mimo-clean": HUB,
    "overlap filter mimo-cyber cybergym --drop id --drop dup --push-to-hub me/mimo-rl --config minus-cybergym":
        HUB + "; opens a pull request on the Hub",
    # atlas
    "overlap atlas --out atlas --push me/overlap-atlas --create-pr": HUB + "; uploads to the Hub",
    # card
    "overlap card reports/mimo-cyber__cybergym --push": "opens a pull request on the Hub (network, credentials)",
    # audit
    "overlap audit ./testbed --base af6e6dd --fix fix.patch --tests test.patch": USER_FILES,
    "overlap audit ./tasks/": USER_FILES,
    "overlap audit image.tar --fix fix.patch --repo-path /testbed": USER_FILES,
    "overlap audit rootfs.tar --fix fix.patch": USER_FILES,
    "overlap audit ./unpacked-root --rootfs --repo-path /testbed --format json --output audit.json": USER_FILES,
    "overlap audit ./testbed --instance task.json --network none --fail-on leak": USER_FILES,
    # ids
    "overlap ids arvo:10288 oss-fuzz:40643631 php.ossfuzz-42491394 jq.cve-2023-50246":
        "downloads the OSS-Fuzz id mapping from GitHub (network) when it is not cached",
    # benchmarks: speed and memory scripts that take minutes at full scale; not tests by design
    "python benchmarks/compare_bench.py": "a speed benchmark (minutes)",
    "python benchmarks/ngram_bench.py": "a speed benchmark (minutes)",
    "python benchmarks/swe_scan_bench.py": "a speed benchmark (writes a 2 GB parquet)",
    "python benchmarks/evidence_bench.py": "a speed benchmark (minutes)",
    "python benchmarks/audit_bench.py": "a speed benchmark (builds a 200k-object repository and a 2 GiB image)",
}

# What the README says a line prints (a substring of its stdout).
EXPECT: dict[str, str] = {
    "overlap filter mimo-cyber cybergym -d mimo-cyber=data/demo/mimo-cyber "
    "-d cybergym=data/demo/cybergym -d arvo=data/demo/arvo --out try/filtered":
        "verified: 0 of 3 rows match cybergym",
    "overlap audit try/testbed --fix try/fix.patch": "VERDICT: LEAK",
    "overlap datasets --registry data/demo/my-cyber.toml --show my-cyber": 'id = "extra_info.instance_id"',
    "overlap datasets --show swe-bench": 'name = "swe-bench"',
    "overlap audit try/testbed --fix try/fix.patch --format json --output try/audit.json --fail-on leak "
    "|| echo \"exit code $?\"": "exit code 1",
    "overlap audit --instance data/network_demo/task.json --index-url data/network_demo/simple":
        "fix one install away: pypi:demopkg 1.1.2",
}


def blocks() -> list[tuple[str, str, int]]:
    """(language, code, line number) of every fenced block."""
    text = README.read_text(encoding="utf-8")
    out = []
    for match in re.finditer(r"^```(\w*)\n(.*?)^```", text, flags=re.M | re.S):
        out.append((match.group(1), match.group(2), text[: match.start()].count("\n") + 1))
    return out


def command_of(line: str) -> str:
    """A README line without its trailing comment (comments start after two spaces)."""
    return re.split(r"\s{2,}#", line.rstrip())[0].strip()


def bash_lines() -> list[tuple[str, int]]:
    lines = []
    for lang, code, start in blocks():
        if lang != "bash":
            continue
        for offset, line in enumerate(code.splitlines(), start=1):
            command = command_of(line)
            if command and not command.startswith("#"):
                lines.append((command, start + offset))
    return lines


def run_env(tmp: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(HF_HUB_OFFLINE="1", OVERLAP_OFFLINE="1", OVERLAP_CACHE=str(tmp / "cache" / "overlap"),
               HF_HUB_CACHE=str(tmp / "cache" / "hub"), COLUMNS="120", NO_COLOR="1")
    env.pop("HF_HOME", None)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    return env


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    """A scratch folder laid out like the repository for the README's relative paths, with every offline
    bash line run in order (the python blocks use what they made)."""
    work = tmp_path_factory.mktemp("readme")
    (work / "data").symlink_to(ROOT / "data", target_is_directory=True)
    (work / "README.md").symlink_to(README)
    return work


@pytest.fixture(scope="module")
def bash_results(workdir) -> list[tuple[str, int, subprocess.CompletedProcess]]:
    env = run_env(workdir)
    results = []
    for command, line_no in bash_lines():
        if command in NOT_RUN:
            continue
        done = subprocess.run(["bash", "-c", command], cwd=workdir, env=env, capture_output=True, text=True,
                              timeout=600)
        results.append((command, line_no, done))
    return results


def test_every_block_is_bash_or_python():
    kinds = {lang for lang, _, _ in blocks()}
    assert kinds <= {"bash", "python"}, f"README blocks of another language: {kinds - {'bash', 'python'}}"
    assert any(lang == "python" for lang, _, _ in blocks())


def test_offline_bash_lines_run(bash_results):
    failed = [f"README.md:{line_no}: {command}\n  exit {done.returncode}: {(done.stderr or done.stdout)[-600:]}"
              for command, line_no, done in bash_results if done.returncode != 0]
    assert not failed, "README lines that fail as written:\n" + "\n".join(failed)
    ran = {command for command, _, _ in bash_results}
    for section_command in ("compare", "filter", "ngram", "matrix", "card", "report", "ids", "datasets", "audit",
                            "demo"):
        assert any(c.startswith(f"overlap {section_command} ") or c == f"overlap {section_command}" for c in ran), \
            f"no offline README line runs `overlap {section_command}`"


def test_readme_lines_print_what_the_readme_says(bash_results):
    outputs = {command: done.stdout for command, _, done in bash_results}
    for command, expected in EXPECT.items():
        assert command in outputs, f"EXPECT names a line the README no longer has: {command}"
        assert expected in outputs[command], f"{command}\n  expected {expected!r} in:\n{outputs[command][-800:]}"


def test_walkthrough_outputs_exist(workdir, bash_results):
    for path in ("try/compare/report.html", "try/compare/summary.json", "try/filtered/removed.csv",
                 "try/filtered/data/cyber.parquet", "try/filtered/filter.json", "try/ngram/flags.csv",
                 "try/matrix/summary.json", "try/card/README.md", "try/card/.overlap/cybergym.json",
                 "try/audit.json", "reports/demo/summary.json"):
        assert (workdir / path).is_file(), path
    html = (workdir / "try/compare/report.html").read_text(encoding="utf-8")
    assert "Plot skipped" not in html and "Plots skipped" not in html  # matplotlib is a core dependency


def test_python_blocks_run(workdir, bash_results):
    env = run_env(workdir)
    for lang, code, start in blocks():
        if lang != "python":
            continue
        done = subprocess.run([sys.executable, "-c", code], cwd=workdir, env=env, capture_output=True, text=True,
                              timeout=600)
        assert done.returncode == 0, f"README.md:{start}: python block fails:\n{done.stderr[-1500:]}"
        for line in code.splitlines():  # `print(x)   # <shown value>` comments are promises too
            match = re.match(r"print\(result\)\s+# (.+)$", line.strip())
            if match:
                assert match.group(1).strip() in done.stdout


def test_not_run_lines_are_in_the_readme_and_have_reasons():
    commands = {command for command, _ in bash_lines()}
    stale = [c for c in NOT_RUN if c not in commands]
    assert not stale, f"NOT_RUN lists lines the README no longer has: {stale}"
    assert all(reason.strip() for reason in NOT_RUN.values())


@cache
def help_options(command: str) -> set[str]:
    done = subprocess.run([sys.executable, "-m", "overlap.cli", command, "--help"], capture_output=True,
                          text=True, env={**os.environ, "COLUMNS": "200"}, timeout=120)
    if done.returncode != 0:
        done = subprocess.run(["overlap", command, "--help"], capture_output=True, text=True,
                              env={**os.environ, "COLUMNS": "200"}, timeout=120)
    assert done.returncode == 0, f"`overlap {command} --help` fails: {done.stderr[-400:]}"
    return set(re.findall(r"(?<![\w-])(--?[a-zA-Z][\w-]*)", done.stdout))


def overlap_segments(command: str) -> list[list[str]]:
    """The `overlap ...` commands of a shell line (split at &&, ||, ;), as argument lists."""
    out = []
    for part in re.split(r"&&|\|\||;", command):
        words = shlex.split(part)
        if words and words[0] == "overlap":
            out.append(words[1:])
    return out


@pytest.mark.parametrize("command", sorted(NOT_RUN))
def test_network_only_lines_use_existing_commands_and_options(command):
    """Lines that cannot run offline are still checked against the command line they document."""
    for words in overlap_segments(command):
        assert words, command
        sub = words[0]
        options = help_options(sub)
        for word in words[1:]:
            if word.startswith("-") and word != "-":
                flag = word.split("=", 1)[0]
                assert flag in options, f"`overlap {sub}` has no option {flag} (README: {command})"
    if command.startswith("python benchmarks/"):
        assert (ROOT / command.split()[1]).is_file(), command
