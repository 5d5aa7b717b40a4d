"""Evidence wired into compare: fix relations and crash grades on pairs, pairs found by fix alone, related
bugs, per-item CyberGym files fetched only when needed. Fixtures are hand-made in the real layouts."""

import json

from fixtures import write_cybergym, write_mapping, write_secbench

from overlap.api import compare
from overlap.api.demo import demo_data


def diff(path, pre, post, old, new):
    return (f"diff --git a/{path} b/{path}\nindex {pre}..{post} 100644\n--- a/{path}\n+++ b/{path}\n"
            f"@@ -1,3 +1,3 @@\n ctx\n-{old}\n+{new}\n ctx\n")


LIBXML_FIX = diff("parser.c", "1111111", "2222222", "if (len > max)", "if (len >= max)")
PHP_FIX = diff("ext/standard/var.c", "3333333", "4444444", "p += 2;", "if (p + 2 > end) return;")
ASAN = ("==1==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x6020 at pc 0x1 bp 0x2 sp 0x3\n"
        "READ of size 4 at 0x6020 thread T0\n"
        "    #0 0x1 in {fn} /src/{project}/{file}:10:3\n"
        "    #1 0x2 in LLVMFuzzerTestOneInput /src/{project}/fuzz.c:5:1\n\n"
        "SUMMARY: AddressSanitizer: heap-buffer-overflow /src/{project}/{file}:10:3 in {fn}\n")


def secbench_with_patches(root):
    write_secbench(root, oss=["php.ossfuzz-42491394"], cve=["libxml2.cve-2022-40303", "jq.cve-2023-50246"])
    for name in ("eval-oss.jsonl", "eval-cve.jsonl"):
        path = root / "data" / name
        rows = [json.loads(line) for line in path.read_text().splitlines()]
        for row in rows:
            project = row["instance_id"].split(".")[0]
            row["patch"] = {"php": PHP_FIX, "libxml2": LIBXML_FIX}.get(project, "")
            row["sanitizer_report"] = ASAN.format(fn=f"{project}_parse", project=project, file="a.c")
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root


def cybergym_with_files(root):
    write_cybergym(root, tasks=[("arvo:12001", "php"), ("arvo:10288", "libxml2"), ("arvo:17777", "libxml2"),
                                ("arvo:19000", "lcms")])
    files = {"12001": (PHP_FIX, "php_parse"), "10288": (LIBXML_FIX, "libxml2_parse"),
             "17777": (diff("parser.c", "5555555", "6666666", "a", "b"), "other_fn")}
    for number, (patch, fn) in files.items():
        folder = root / "data" / "arvo" / number
        folder.mkdir(parents=True)
        (folder / "patch.diff").write_text(patch)
        (folder / "error.txt").write_text(ASAN.format(fn=fn, project="x", file="a.c"))
    return root


def data(tmp_path):
    return {"sec-bench": secbench_with_patches(tmp_path / "sb"), "cybergym": cybergym_with_files(tmp_path / "cg"),
            "arvo": write_mapping(tmp_path / "arvo")}


def test_cve_instance_sharing_a_fix_becomes_a_fix_pair(tmp_path):
    result = compare("sec-bench", ["cybergym"], data=data(tmp_path), permutations=0)
    pairs = result.benches[0].pairs.set_index(["train_id", "bench_id"])
    # The id pair (new id 42491394 = old 12001) also shares the fix, judged on blobs.
    id_pair = pairs.loc[("php.ossfuzz-42491394", "arvo:12001")]
    assert (id_pair["kinds"], id_pair["fix_relation"], id_pair["fix_method"]) == ("ossfuzz", "identical", "blobs")
    assert id_pair["crash_grade"] == "type_and_frame"
    # The CVE instance shares no id with any task, but the same fix as arvo:10288 (same project).
    fix_pair = pairs.loc[("libxml2.cve-2022-40303", "arvo:10288")]
    assert (fix_pair["kinds"], fix_pair["match_type"], fix_pair["fix_relation"]) == ("fix", "fix", "identical")
    assert ("libxml2.cve-2022-40303", "arvo:17777") not in pairs.index  # same project, different fix
    evidence = result.summary()["benches"][0]["evidence"]
    assert evidence["fix_join"]["pairs_added"] == 1 and evidence["fix_join"]["status"] == "ran"
    assert evidence["fix"]["by_relation"] == {"identical": 2}
    assert evidence["crash"]["by_grade"]["type_and_frame"] == 2  # both pairs name the same frame
    assert result.summary()["benches"][0]["bench_items_matched"] == 2


def test_only_needed_task_files_are_fetched(tmp_path, monkeypatch):
    from overlap.sources.places import taskfiles

    asked = []
    real = taskfiles.fetch_item_files

    def spy(dataset, item_ids, name, path_of):
        asked.append((name, sorted(item_ids)))
        return real(dataset, item_ids, name, path_of)

    monkeypatch.setattr("overlap.evidence.itemtexts.fetch_item_files", spy)
    compare("sec-bench", ["cybergym"], data=data(tmp_path), permutations=0)
    fetched = {i for _, ids in asked for i in ids}
    assert "arvo:19000" not in fetched  # lcms: no SEC-bench item of that project, never a candidate
    assert ("patch.diff", ["arvo:10288", "arvo:12001", "arvo:17777"]) in asked


def test_fix_join_off_and_missing_files_are_not_run(tmp_path):
    paths = data(tmp_path)
    result = compare("sec-bench", ["cybergym"], data=paths, permutations=0, fix_join="off")
    assert set(result.benches[0].pairs["kinds"]) == {"ossfuzz"}
    assert result.summary()["benches"][0]["evidence"]["fix_join"]["status"] == "not_run"
    (paths["cybergym"] / "data/arvo/12001/patch.diff").unlink()
    result = compare("sec-bench", ["cybergym"], data=paths, permutations=0, fix_join="off")
    pair = result.benches[0].pairs.iloc[0]
    assert pair["fix_relation"] == "not_comparable" and "patch.diff not found" in pair["fix_reason"]


def test_demo_grades_crashes_with_a_control_and_finds_related_bugs():
    result = compare("mimo-cyber", ["cybergym"], data=demo_data(), permutations=0)
    evidence = result.summary()["benches"][0]["evidence"]
    assert evidence["fix"]["status"] == "not_run" and evidence["fix"]["reason"] == "mimo-cyber has no patch"
    crash = evidence["crash"]
    assert crash["by_grade"]["type_and_frame"] == 4 and crash["by_grade"]["harness_entry_point"] == 1
    assert crash["control"]["pairs"] == 2 and crash["control"]["rates"]["type_and_frame"] == 0.0
    assert evidence["related"]["status"] == "ran" and len(result.related) == evidence["related"]["pairs"]
    assert set(result.related["relation"]) <= {"related:fix_commit", "related:crash_state"}


def test_specs_naming_the_harness_are_marked_for_the_filter():
    from overlap.outputs.ship.splits import filter_split

    result = compare("mimo-cyber", ["cybergym"], data=demo_data(), permutations=0)
    assert result.summary()["train_specs_naming_the_harness"] == 1
    flagged = result.train.items.loc[result.train.items["spec_harness"].astype(bool), "item_id"].tolist()
    assert flagged == ["arvo_42471761"]  # "MemorySanitizer: … in function `LLVMFuzzerTestOneInput` …"
    removed = filter_split(result, ["spec:harness"]).removed
    assert removed[["item_id", "reasons"]].values.tolist() == [["arvo_42471761", "spec:harness"]]


def test_signatures_shared_by_too_many_records_are_counted_not_expanded(monkeypatch):
    monkeypatch.setattr("overlap.evidence.attach.MAX_RELATED_GROUP", 1)
    result = compare("mimo-cyber", ["cybergym"], data=demo_data(), permutations=0)
    related = result.summary()["benches"][0]["evidence"]["related"]
    assert related["pairs"] == 0 and related["signatures_too_common"] >= 1
