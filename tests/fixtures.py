"""Hand-made fixtures in the real schemas (the columns their declarations name), written into temp folders laid out like
the Hub / GitHub repos. Values are invented; field names, nesting and id formats follow the real data."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

# old Monorail id -> new tracker id
MAPPING = [(10288, 40643631), (10400, 42470443), (11500, 42470500), (12001, 42491394), (13000, 42537168)]

# MiMo cyber: old ids, new ids, one bug under both ids (10400 / 42470443), an old id absent from the
# mapping (19999), a post-migration id (386128948), and a malformed id.
MIMO_IDS = ["arvo_10288", "arvo_10400", "arvo_42470443", "arvo_19999", "arvo_386128948", "arvo_42470500",
            "arvo_badid"]

CYBERGYM_TASKS = [
    ("arvo:10288", "libxml2"),  # exact match with arvo_10288
    ("arvo:10400", "libxslt"),  # exact with arvo_10400, translated with arvo_42470443
    ("arvo:11500", "harfbuzz"),  # translated with arvo_42470500
    ("oss-fuzz:42537168", "php"),  # no train item; SEC-bench has it
    ("oss-fuzz:386128948", "mruby"),  # exact (post-migration id)
    ("arvo:12001", "php"),  # SEC-bench has its new id 42491394
    ("arvo:17777", "lcms"),  # nobody has it
]

SECBENCH_OSS = ["php.ossfuzz-42491394", "php.ossfuzz-42537168", "mruby.ossfuzz-42499999"]
SECBENCH_CVE = ["jq.cve-2023-50246", "libxml2.cve-2022-40303"]


def crash_spec(kind: str, function: str, path: str) -> str:
    return f"AddressSanitizer: {kind} in function `{function}` in file `{path}`"


def write_mapping(root: Path, rows=MAPPING, header: bool = False) -> Path:
    path = root / "arvo" / "oss_fuzz_mappings.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "old,new\n" if header else ""
    text += "".join(f"{old},{new}\n" for old, new in rows)
    path.write_text(text)
    return root


def mimo_rows(ids=MIMO_IDS) -> list[dict]:
    rows = []
    for index, instance_id in enumerate(ids):
        spec = crash_spec("heap-buffer-overflow", f"parse_{index}", f"src/file{index}.c")
        # The two copies of one bug (old and new id) carry the same text, as in the real set.
        if instance_id == "arvo_42470443":
            spec = crash_spec("heap-buffer-overflow", "parse_1", "src/file1.c")
        rows.append({
            "data_source": "cyber",
            "prompt": [{"role": "user", "content": spec}],
            "extra_info": {"index": index, "instance_id": instance_id,
                           "instance_json": json.dumps({"problem_statement": f"Fix the crash: {spec}"})},
        })
    return rows


def write_mimo(root: Path, ids=MIMO_IDS) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(mimo_rows(ids)), root / "cyber.parquet")
    return root


def cybergym_tasks(tasks=CYBERGYM_TASKS) -> list[dict]:
    out = []
    for task_id, project in tasks:
        kind, number = task_id.split(":")
        base = f"data/{kind}/{number}"
        out.append({
            "task_id": task_id,
            "project_name": project,
            "project_homepage": f"https://{project}.example",
            "project_main_repo": f"https://git.example/{project}",
            "project_language": "c",
            "vulnerability_description": f"A memory error in {project} when parsing crafted input.",
            "task_difficulty": {"level0": [f"{base}/repo-vul.tar.gz"],
                                "level1": [f"{base}/repo-vul.tar.gz", f"{base}/description.txt"],
                                "level2": [f"{base}/repo-vul.tar.gz", f"{base}/description.txt",
                                           f"{base}/error.txt"],
                                "level3": [f"{base}/repo-vul.tar.gz", f"{base}/repo-fix.tar.gz",
                                           f"{base}/error.txt", f"{base}/description.txt", f"{base}/patch.diff"]},
        })
    return out


def write_cybergym(root: Path, tasks=CYBERGYM_TASKS) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "tasks.json").write_text(json.dumps(cybergym_tasks(tasks), indent=1))
    return root


def secbench_row(instance_id: str) -> dict:
    project = instance_id.split(".")[0]
    return {
        "instance_id": instance_id,
        "repo": f"{project}/{project}-src",
        "base_commit": "ABCDEF0123456789ABCDEF0123456789ABCDEF01",
        "patch": "diff --git a/x.c b/x.c\n--- a/x.c\n+++ b/x.c\n@@ -1 +1 @@\n-old\n+new\n",
        "sanitizer_report": "==1==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x602000000011",
        "bug_description": f"Overflow in {project}",
        "bug_report": "",
        "work_dir": "/src",
    }


def write_secbench(root: Path, oss=SECBENCH_OSS, cve=SECBENCH_CVE) -> Path:
    (root / "data").mkdir(parents=True, exist_ok=True)
    for name, ids in (("eval-oss.jsonl", oss), ("eval-cve.jsonl", cve)):
        (root / "data" / name).write_text("".join(json.dumps(secbench_row(i)) + "\n" for i in ids))
    return root


def write_all(root: Path) -> dict[str, Path]:
    return {
        "mimo-cyber": write_mimo(root / "mimo"),
        "cybergym": write_cybergym(root / "cybergym"),
        "sec-bench": write_secbench(root / "secbench"),
        "arvo": write_mapping(root / "arvo"),
    }


def data_args(paths: dict[str, Path]) -> list[str]:
    out = []
    for name, path in paths.items():
        out += ["--data", f"{name}={path}"]
    return out
