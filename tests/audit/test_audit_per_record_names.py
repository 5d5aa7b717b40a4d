"""Images named per record: MiMo's rows name their image inside the JSON string ``extra_info.instance_json``
(``docker_image``, MiMo's own alias), which the declarations turn into the published name; a mirror reads a
declared registry's images from another; one run mixes tags per benchmark. The expected names are written here
from the published mapping's rule (the alias ``arvo-rl:v1-arvo-N`` is the tag ``arvo-v1-N``, the alias
``format-code-task-N:latest`` the tag ``format-code-task-N``, of ``docker.io/xiaomimimo/mimo-v2.6-rl-oss``)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from overlap.api.audit_benchmark import benchmark_sets, split_tags
from overlap.audit.study.naming import mirrored, parse_mirrors
from overlap.errors import InputError

REPO = "docker.io/xiaomimimo/mimo-v2.6-rl-oss"
CYBER_SCHEMA = pa.schema([
    ("data_source", pa.string()),
    ("prompt", pa.list_(pa.struct([("role", pa.string()), ("content", pa.string())]))),
    ("extra_info", pa.struct([("instance_id", pa.string()), ("instance_json", pa.string())])),
])


def cyber_rows(arvo_ids: list[int]) -> list[dict]:
    """Rows laid out like MiMo's cyber.parquet: the task's JSON (its image among it) as a string in a struct."""
    return [{"data_source": "cyber",
             "prompt": [{"role": "user", "content": f"AddressSanitizer: heap-buffer-overflow in task {n}"}],
             "extra_info": {"instance_id": f"arvo_{n}",
                            "instance_json": json.dumps({"problem_statement": f"Fix the crash of {n}",
                                                         "docker_image": f"arvo-rl:v1-arvo-{n}",
                                                         "cwd": "/src/project"})}} for n in arvo_ids]


def write_cyber(folder: Path, arvo_ids: list[int]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(cyber_rows(arvo_ids), schema=CYBER_SCHEMA), folder / "cyber.parquet")
    return folder


def write_code(folder: Path, numbers: list[int]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    rows = [{"data_source": "code", "prompt": [{"role": "user", "content": "Fix the failing tests"}],
             "extra_info": {"instance_json": json.dumps({
                 "instance_id": f"format-code-task-{n:06d}", "problem_statement": "Fix it", "cwd": "/testbed",
                 "test_patch": f"diff --git a/t{n}.py b/t{n}.py\n",
                 "docker_image": f"format-code-task-{n:06d}:latest"})}}
            for n in numbers]
    pq.write_table(pa.Table.from_pylist(rows), folder / "code.parquet")
    return folder


ARVO = [10055, 42471002, 10102, 42471005, 386128948, 5080, 61234]


@settings(max_examples=15, deadline=None)
@given(st.integers(1, len(ARVO)), st.integers(0, 10_000))
def test_mimo_cyber_names_each_image_from_its_row(tmp_path_factory, k, seed):
    data = write_cyber(tmp_path_factory.mktemp("cyber"), ARVO)
    targets, sampling = benchmark_sets(["mimo-cyber"], sample=k, seed=seed, data={"mimo-cyber": data})
    ids = sorted(f"arvo_{n}" for n in ARVO)
    drawn = sorted(random.Random(seed).sample(ids, k))
    assert [t.instance_id for t in targets] == drawn
    assert [t.target for t in targets] == [f"docker://{REPO}:arvo-v1-{i.removeprefix('arvo_')}" for i in drawn]
    assert {t.set for t in targets} == {"mimo-cyber"} and all(t.error is None for t in targets)
    assert sampling["mimo-cyber"]["population"] == len(ARVO) and sampling["mimo-cyber"]["drawn"] == k


def test_mimo_code_names_the_published_image_not_the_alias(tmp_path):
    data = write_code(tmp_path / "code", [1457, 1240, 448])
    targets, _ = benchmark_sets(["mimo-code"], sample=2, seed=0, data={"mimo-code": data})
    drawn = sorted(random.Random(0).sample(sorted(f"format-code-task-{n:06d}" for n in (1457, 1240, 448)), 2))
    assert [t.target for t in targets] == [f"docker://{REPO}:{i}" for i in drawn]
    assert all(t.test_patch and t.test_patch.startswith("diff --git") for t in targets)


def test_a_row_without_its_image_fails_alone(tmp_path):
    rows = cyber_rows([10055, 10102])
    rows[1]["extra_info"]["instance_json"] = json.dumps({"problem_statement": "no image named"})
    (tmp_path / "c").mkdir()
    pq.write_table(pa.Table.from_pylist(rows, schema=CYBER_SCHEMA), tmp_path / "c" / "cyber.parquet")
    targets, _ = benchmark_sets(["mimo-cyber"], data={"mimo-cyber": tmp_path / "c"})
    by_id = {t.instance_id: t for t in targets}
    assert by_id["arvo_10055"].target == f"docker://{REPO}:arvo-v1-10055"
    assert "docker_image" in by_id["arvo_10102"].error and by_id["arvo_10102"].target == ""


def test_a_mirror_reads_the_declared_registry_elsewhere(tmp_path):
    data = write_cyber(tmp_path / "cyber", ARVO[:3])
    targets, _ = benchmark_sets(["mimo-cyber"], data={"mimo-cyber": data},
                                mirrors=["docker.io=127.0.0.1:5000/hub"])
    assert sorted(t.target for t in targets) == sorted(
        f"docker://127.0.0.1:5000/hub/xiaomimimo/mimo-v2.6-rl-oss:arvo-v1-{n}" for n in ARVO[:3])


@pytest.mark.parametrize("reference, expected", [
    ("docker://docker.io/swebench/x:latest", "docker://m.test/swebench/x:latest"),
    ("docker://index.docker.io/a/b:1", "docker://m.test/a/b:1"),
    ("docker://swebench/x:latest", "docker://m.test/swebench/x:latest"),  # no host: Docker Hub, as Docker reads it
    ("docker://ghcr.io/a/b:1", "docker://ghcr.io/a/b:1"),  # another host: unchanged
    ("docker://localhost:5000/a:1", "docker://localhost:5000/a:1"),
])
def test_mirror_rule(reference, expected):
    assert mirrored(reference, parse_mirrors(["docker.io=m.test"])) == expected


@pytest.mark.parametrize("bad", ["docker.io", "=m.test", "docker.io=", "docker.io=https://m.test", "a/b=m.test"])
def test_a_malformed_mirror_is_refused(bad):
    with pytest.raises(InputError, match="--mirror"):
        parse_mirrors([bad])


def test_tags_per_benchmark():
    assert split_tags(["latest", "swe-bench=v1", "swe-bench=latest"], ["swe-bench", "toy"]) == (
        ["latest"], {"swe-bench": ["v1", "latest"]})
    with pytest.raises(InputError, match="--tag nope=v1"):
        split_tags(["nope=v1"], ["swe-bench"])


def test_one_run_mixes_tags_per_benchmark_and_a_per_record_set(tmp_path):
    """swe-bench-verified at v1 and latest beside MiMo's cyber set (which takes no tag), in one run."""
    verified = tmp_path / "verified.jsonl"
    verified.write_text("".join(json.dumps({"instance_id": i, "repo": "django/django", "base_commit": "a" * 40,
                                            "patch": "diff --git a/x b/x\n", "test_patch": "diff --git a/t b/t\n",
                                            "problem_statement": "fix"}) + "\n"
                                for i in ("django__django-11099", "astropy__astropy-12907")))
    cyber = write_cyber(tmp_path / "cyber", ARVO[:2])
    targets, sampling = benchmark_sets(
        ["swe-bench-verified", "mimo-cyber"], tags=["swe-bench-verified=v1", "swe-bench-verified=latest"],
        data={"swe-bench-verified": verified, "mimo-cyber": cyber})
    sets = [t.set for t in targets]
    assert list(dict.fromkeys(sets)) == ["swe-bench-verified:v1", "swe-bench-verified:latest", "mimo-cyber"]
    assert sorted(t.target for t in targets if t.set == "swe-bench-verified:v1") == [
        "docker://docker.io/swebench/sweb.eval.x86_64.astropy_1776_astropy-12907:v1",
        "docker://docker.io/swebench/sweb.eval.x86_64.django_1776_django-11099:v1"]
    assert set(sampling) == set(sets)
    with pytest.raises(InputError, match="drop --tag"):
        benchmark_sets(["swe-bench-verified", "mimo-cyber"], tags=["v1"],
                       data={"swe-bench-verified": verified, "mimo-cyber": cyber})


def openhands_swe_gym_image(instance_id: str) -> str:
    """OpenHands' get_instance_docker_image for SWE-Gym, as its run_infer.py writes it."""
    return ("docker.io/xingyaoww/" + ("sweb.eval.x86_64." + instance_id).replace("__", "_s_")).lower()


def cybergym_image(task_id: str) -> str:
    """CyberGym's server: the vulnerable build of an arvo:<id> or oss-fuzz:<id> task."""
    kind, _, number = task_id.partition(":")
    return f"n132/arvo:{number}-vul" if kind == "arvo" else f"cybergym/oss-fuzz:{number}-vul"


@settings(max_examples=30, deadline=None)
@given(st.from_regex(r"[A-Za-z][A-Za-z0-9-]{0,12}__[A-Za-z][A-Za-z0-9.-]{0,12}-[0-9]{1,5}", fullmatch=True))
def test_swe_gym_names_follow_openhands(instance_id):
    from overlap.audit.study.naming import ImageNaming
    from overlap.sources.registry.registry import get_spec

    spec = get_spec("swe-gym")
    naming = ImageNaming.from_table(spec.audit, spec.origin)
    assert naming.target({}, instance_id, naming.tags[0], Path("."))[1] == (
        f"docker://{openhands_swe_gym_image(instance_id)}:latest")


def test_cybergym_names_follow_its_server():
    from overlap.resources import demo_root

    targets, sampling = benchmark_sets(["cybergym"], data={"cybergym": demo_root() / "cybergym"})
    assert targets and sampling["cybergym"]["population"] == len(targets)
    assert {t.instance_id.split(":")[0] for t in targets} == {"arvo", "oss-fuzz"}
    for t in targets:
        assert t.target == f"docker://docker.io/{cybergym_image(t.instance_id)}", t
