"""Write the embedded demo datasets (data/demo/) in the real MiMo, CyberGym and ARVO layouts.

Everything here is hand-made: invented OSS-Fuzz ids, projects and texts that follow the real schemas
(the columns their declarations in overlap/sources/registry/declarations/ name). Run
`python scripts/make_demo_data.py` to regenerate; the output is deterministic.
`python scripts/make_demo_data.py FOLDER` writes to FOLDER instead (to compare with data/demo/ without touching it).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1] / "data" / "demo"

# old Monorail id -> new tracker id (invented, one-to-one)
MAPPING = [
    (10055, 42471001), (10102, 42471002), (10340, 42471005), (11873, 42471120),
    (12007, 42471233), (13555, 42471390), (14020, 42471544), (15999, 42471761),
]

# (instance id, project, crash spec) for the training side, MiMo-shaped
TRAIN = [
    ("arvo_10055", "libxml2", "AddressSanitizer: heap-buffer-overflow in function `xmlParseCharRef` in file "
     "`parser.c`"),
    ("arvo_42471002", "libxslt", "AddressSanitizer: SEGV in function `xsltFuzzXPath` in file "
     "`libxslt/tests/fuzz/fuzz.c`"),
    ("arvo_10102", "libxslt", "AddressSanitizer: SEGV in function `xsltFuzzXPath` in file "
     "`libxslt/tests/fuzz/fuzz.c`"),
    ("arvo_42471005", "harfbuzz", "AddressSanitizer: heap-use-after-free in function `hb_buffer_t::sort` in "
     "file `src/hb-buffer.cc`"),
    ("arvo_386128948", "php", "AddressSanitizer: stack-buffer-overflow in function `php_var_unserialize` in "
     "file `ext/standard/var_unserializer.c`"),
    ("arvo_42471761", "binutils", "MemorySanitizer: use-of-uninitialized-value in function "
     "`LLVMFuzzerTestOneInput` in file `fuzz/fuzz_objdump.c`"),
    ("arvo_99999", "openjpeg", "AddressSanitizer: heap-buffer-overflow in function `opj_t1_decode_cblk` in "
     "file `src/lib/openjp2/t1.c`"),
    ("arvo_20001", "freetype2", "AddressSanitizer: SEGV in function `tt_face_load_font_dir` in file "
     "`src/truetype/ttobjs.c`"),
    ("arvo_42471390", "mruby", "AddressSanitizer: heap-buffer-overflow in function `mrb_str_format` in file "
     "`src/sprintf.c`"),
    ("arvo_10190", "libxml2", "AddressSanitizer: heap-buffer-overflow in function `xmlParseAttValueInternal` "
     "in file `parser.c`"),
    ("arvo_401234567", "wireshark", "AddressSanitizer: global-buffer-overflow in function `dissect_pdu` in "
     "file `epan/dissectors/packet-foo.c`"),
]

# (task id, project, language, description) for the benchmark side, CyberGym-shaped
BENCH = [
    ("arvo:10055", "libxml2", "c", "A heap buffer overflow occurs when parsing a character reference with an "
     "out-of-range code point, because the length check happens after the copy."),
    ("arvo:10102", "libxslt", "c", "The XPath evaluation crashes on a NULL context node when a fuzzed "
     "stylesheet redefines a variable inside a loop."),
    ("arvo:10340", "harfbuzz", "c++", "Sorting glyph clusters can touch a buffer that was already released "
     "after a reallocation."),
    ("oss-fuzz:386128948", "php", "c", "Unserializing a crafted nested array overflows a stack buffer."),
    ("arvo:12007", "graphicsmagick", "c", "Reading a truncated image header leaks uninitialised memory."),
    ("arvo:13555", "mruby", "c", "Format strings with a huge width overflow the output buffer."),
    ("arvo:14020", "lcms", "c", "A malformed profile makes the interpolation read past a table."),
    ("oss-fuzz:42471120", "libpng", "c", "Fix bounds check."),
    ("arvo:10190", "libxml2", "c", "Attribute values with many entity references overrun the normalisation "
     "buffer."),
    ("arvo:15999", "binutils", "c", "Disassembling a crafted object reads an uninitialised section size."),
]


# Per-task files for a few benchmark tasks (CyberGym keeps them under data/<kind>/<n>/): a sanitizer
# report whose top frame agrees (or not) with the training side's crash spec, and the fix diff.
ERRORS = {
    "arvo:10055": ("heap-buffer-overflow", "xmlParseCharRef", "parser.c", 2345),
    "arvo:10102": ("SEGV on unknown address 0x000000000000", "xsltEvalXPathPredicate", "libxslt/templates.c", 188),
    "arvo:10340": ("heap-use-after-free", "hb_buffer_t::sort(unsigned int, unsigned int, int (*)(hb_glyph_info_t "
                   "const*, hb_glyph_info_t const*))", "src/hb-buffer.cc", 1712),
    "arvo:13555": ("heap-buffer-overflow", "mrb_str_format", "src/sprintf.c", 901),
    "arvo:10190": ("heap-buffer-overflow", "xmlParseAttValueInternal", "parser.c", 4101),
    "arvo:15999": ("use-of-uninitialized-value", "bfd_section_from_shdr", "bfd/elf.c", 2210),
}

PATCHES = {
    "arvo:10055": ("parser.c", "3f1a2b4", "9c8d7e6", "    if (val >= 0x110000)", "    if (val >= 0x110000 || val < 0)"),
    "arvo:10102": ("libxslt/templates.c", "1b2c3d4", "5e6f708", "    ctxt->node = node;",
                   "    if (node == NULL) return NULL;\n    ctxt->node = node;"),
}


def asan_report(kind: str, function: str, path: str, line: int) -> str:
    """A sanitizer report in the real layout: headline, first stack, SUMMARY line."""
    headline = kind.split(" on ")[0]
    if kind == "use-of-uninitialized-value":
        return "\n".join([
            "==12==WARNING: MemorySanitizer: use-of-uninitialized-value",
            f"    #0 0x55a2 in {function} /src/project/{path}:{line}:9",
            "    #1 0x55a3 in LLVMFuzzerTestOneInput /src/project/fuzz/fuzz_objdump.c:40:3",
            "",
            f"SUMMARY: MemorySanitizer: use-of-uninitialized-value /src/project/{path}:{line}:9 in {function}",
            "",
        ])
    return "\n".join([
        "==12==ERROR: AddressSanitizer: " + kind + (" on address 0x602000000031 at pc 0x5566 bp 0x7ffd sp 0x7ffc"
                                                     if " on " not in kind else ""),
        "READ of size 1 at 0x602000000031 thread T0",
        "    #0 0x55a1 in __asan_memcpy /src/llvm-project/compiler-rt/lib/asan/asan_interceptors_memintrinsics.cpp:63",
        f"    #1 0x55a2 in {function} /src/project/{path}:{line}:9",
        "    #2 0x55a3 in LLVMFuzzerTestOneInput /src/project/fuzz/fuzz.c:40:3",
        "    #3 0x55a4 in fuzzer::Fuzzer::ExecuteCallback(unsigned char const*, unsigned long) "
        "/src/llvm-project/compiler-rt/lib/fuzzer/FuzzerLoop.cpp:611:15",
        "",
        f"SUMMARY: AddressSanitizer: {headline} /src/project/{path}:{line}:9 in {function}",
        "",
    ])


def fix_diff(path: str, pre: str, post: str, old: str, new: str) -> str:
    new_lines = new.split("\n")
    body = [f"-{old}"] + [f"+{line}" for line in new_lines]
    return "\n".join([
        f"diff --git a/{path} b/{path}",
        f"index {pre}..{post} 100644",
        f"--- a/{path}",
        f"+++ b/{path}",
        f"@@ -10,3 +10,{2 + len(new_lines)} @@ int demo(void)",
        " {",
        *body,
        " }",
        "",
    ])


def write_task_files() -> None:
    for task_id, error in ERRORS.items():
        kind, number = task_id.split(":")
        folder = ROOT / "cybergym" / "data" / kind / number
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "error.txt").write_text(asan_report(*error))
        if task_id in PATCHES:
            (folder / "patch.diff").write_text(fix_diff(*PATCHES[task_id]))


# The ARVO first-release pool the demo's bugs are drawn from (ARVO-Meta layout: one <old id>.json per bug).
POOL_PROJECTS = ["libxml2", "libxslt", "harfbuzz", "graphicsmagick", "mruby", "lcms", "binutils", "openjpeg",
                 "freetype2", "libpng"]
CLUSTERFUZZ = (
    "Detailed report: https://oss-fuzz.example/testcase?key={key}\n\nProject: {project}\n"
    "Fuzzer: libFuzzer_{project}_fuzz\nJob Type: libfuzzer_asan_{project}\nPlatform Id: linux\n\n"
    "Crash Type: {crash_type}\nCrash Address: 0x602000000011\nCrash State:\n{frames}  \n"
    "Sanitizer: address (ASAN)\n\nIssue filed automatically."
)


def pool_bugs() -> list[tuple[int, str]]:
    """(old id, project): the demo's own bugs plus fillers spread over the projects."""
    own = {10190: "libxml2", 10055: "libxml2", 10102: "libxslt", 10340: "harfbuzz", 11873: "libpng",
           12007: "graphicsmagick", 13555: "mruby", 14020: "lcms", 15999: "binutils", 20001: "freetype2",
           99999: "openjpeg"}
    bugs = dict(own)
    for index in range(50):
        bugs[10000 + 37 * index + 1] = POOL_PROJECTS[(index * 7) % len(POOL_PROJECTS)]
    return sorted(bugs.items())


def write_pool() -> None:
    folder = ROOT / "arvo-meta" / "archive_data" / "meta"
    folder.mkdir(parents=True, exist_ok=True)
    for old_id, project in pool_bugs():
        frames = "".join(f"  {project}_frame_{old_id % 5}_{depth}\n" for depth in range(3))
        content = CLUSTERFUZZ.format(key=old_id, project=project, crash_type="Heap-buffer-overflow READ 1",
                                     frames=frames)
        record = {
            "localId": old_id, "project": project, "fuzzer": "libfuzzer", "sanitizer": "asan",
            "crash_type": "Heap-buffer-overflow READ 1", "severity": "High",
            "fix_commit": f"{old_id:08x}" * 5, "repo_addr": f"https://git.example/{project}",
            "report": {"comments": [{"localId": old_id, "content": content, "timestamp": 1535220395}]},
        }
        (folder / f"{old_id}.json").write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")


def write_mapping() -> None:
    path = ROOT / "arvo" / "arvo" / "oss_fuzz_mappings.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{old},{new}\n" for old, new in MAPPING))


def write_train() -> None:
    rows = []
    for instance_id, project, spec in TRAIN:
        statement = f"Find and fix the vulnerability in {project}. The fuzzer reports: {spec}"
        rows.append({
            "data_source": "cyber",
            "prompt": [{"role": "user", "content": spec}],
            "extra_info": {"instance_id": instance_id,
                           "instance_json": json.dumps({"problem_statement": statement}, sort_keys=True)},
        })
    table = pa.Table.from_pylist(rows)
    path = ROOT / "mimo-cyber" / "cyber.parquet"
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path, compression="zstd")


def write_bench() -> None:
    tasks = []
    for task_id, project, language, description in BENCH:
        kind, number = task_id.split(":")
        base = f"data/{kind}/{number}"
        tasks.append({
            "task_id": task_id,
            "project_name": project,
            "project_homepage": f"https://example.org/{project}",
            "project_main_repo": f"https://example.org/{project}.git",
            "project_language": language,
            "vulnerability_description": description,
            "task_difficulty": {
                "level0": [f"{base}/repo-vul.tar.gz"],
                "level1": [f"{base}/repo-vul.tar.gz", f"{base}/description.txt"],
                "level2": [f"{base}/repo-vul.tar.gz", f"{base}/description.txt", f"{base}/error.txt"],
                "level3": [f"{base}/repo-vul.tar.gz", f"{base}/repo-fix.tar.gz", f"{base}/error.txt",
                           f"{base}/description.txt", f"{base}/patch.diff"],
            },
        })
    path = ROOT / "cybergym" / "tasks.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(tasks, indent=2) + "\n")


if __name__ == "__main__":
    if len(sys.argv) > 1:
        ROOT = Path(sys.argv[1])
    write_mapping()
    write_train()
    write_bench()
    write_task_files()
    write_pool()
    print(f"demo data written to {ROOT}")
