"""`overlap compare` on generated training mixes, differential against the mix oracle: for every benchmark, the
bench items in a counted pair are exactly the oracle's, through the library and through the CLI, and a
benchmark's cell is the same whether it is compared alone or beside other benchmarks (nothing is decided per
dataset: an SWE benchmark in the list must not change what CyberGym counts, and PR ids in the training mix
must not stop OSS-Fuzz pairs from counting)."""

from __future__ import annotations

from hypothesis import HealthCheck, example, given, settings
from mix_oracle import Columns, matched_bench
from mix_run import cli_compare, library_matched
from mix_strategies import PR_TASKS, MixCase, forced_cases, mix_cases, row

SETTINGS = {"deadline": None, "database": None, "derandomize": True,
            "suppress_health_check": [HealthCheck.function_scoped_fixture, HealthCheck.too_slow]}
CYBERGYM = ("cybergym", None, None)
RG = PR_TASKS[1]  # BurntSushi/ripgrep#1234

# The reported mix: an OSS-Fuzz id and a PR URL in one id column, against CyberGym.
REPORTED = MixCase(Columns(), [row("arvo:10055"), row("https://github.com/Owner/Repo/pull/12")], "jsonl", [CYBERGYM])
# OSS-Fuzz ids only, but an SWE benchmark beside CyberGym.
BESIDE_SWE = MixCase(Columns(), [row("arvo_42471001")], "jsonl",
                     [CYBERGYM, ("swe", [row("psf__requests-2317", "psf/requests", 2317)], "jsonl")])
# A fix-commit URL and a CVE next to a PR, against an OSS-Fuzz/CVE benchmark.
FIX_AND_CVE = MixCase(Columns(), [row("https://github.com/jqlang/jq/commit/" + "a" * 40), row("jq.cve-2023-50246"),
                                  row("owner__repo-12")], "csv",
                      [("sec", [row("https://github.com/jqlang/jq/commit/" + "a" * 40), row("jq.cve-2023-50246")],
                        "jsonl")])
# Same base commit, another PR: reported, not counted; same PR at the same base under another name: counted.
BASES = MixCase(Columns(base="base_commit"), [row("Owner/Repo#13", base=PR_TASKS[3].base),
                                              row("someone__ripgrep-fork-1234", base=RG.base)], "parquet",
                [("swe", [row("owner__repo-12", "owner/repo", 12, PR_TASKS[3].base),
                          row("burntsushi__ripgrep-1234", "burntsushi/ripgrep", 1234, RG.base)], "jsonl")])


def _check_counts(case: MixCase, folder) -> None:
    written = case.write(folder)
    expected = {b.name: matched_bench(written.train, b) for b in written.benches}
    together = library_matched(written, case.columns)
    alone = {}
    for i in range(len(written.benches)):
        alone.update(library_matched(written, case.columns, [i]))
    story = f"{case!r}\noracle: {expected}\nalone: {alone}\ntogether: {together}"
    for name, ids in expected.items():
        assert alone[name] == ids, f"{name} compared alone: not the oracle's matches\n{story}"
    for name, ids in expected.items():
        assert together[name] == ids, f"{name} beside {sorted(set(expected) - {name})}: not the oracle's\n{story}"


@settings(max_examples=15, **SETTINGS)
@example(REPORTED)
@example(BESIDE_SWE)
@example(FIX_AND_CVE)
@example(BASES)
@given(mix_cases())
def test_library_compare_counts_the_oracle_matches_alone_and_together(tmp_path_factory, case):
    _check_counts(case, tmp_path_factory.mktemp("mix"))


@settings(max_examples=5, **SETTINGS)
@example(REPORTED)
@given(mix_cases())
def test_cli_compare_json_and_id_lists_count_the_oracle_matches(tmp_path_factory, case):
    folder = tmp_path_factory.mktemp("mix")
    written = case.write(folder)
    expected = {b.name: matched_bench(written.train, b) for b in written.benches}
    run, counted, listed = cli_compare(written, case.columns, folder / "out")
    story = f"{case!r}\noracle: {expected}\n--format json bench_items_matched: {counted}\nlisted: {listed}"
    assert set(counted) == set(expected), story
    for name, ids in expected.items():
        assert counted[name] == len(ids), f"{name}: bench_items_matched\n{story}"
        assert listed[name] == ids, f"{name}: <bench>_contaminated_ids.txt\n{story}"


FORCED_PR_URL = MixCase(Columns(scheme="ossfuzz"), [row("https://github.com/google/oss-fuzz/pull/10340"), row(10055)],
                        "jsonl", [CYBERGYM])


@settings(max_examples=12, **SETTINGS)
@example(FORCED_PR_URL)
@given(forced_cases())
def test_forced_ossfuzz_scheme_counts_the_oracle_matches(tmp_path_factory, case):
    """`--id-scheme ossfuzz`: every trailing issue number is an OSS-Fuzz id, translated old→new; a GitHub PR or
    commit URL is not (`…/pull/10340` is not issue 10340, which CyberGym holds)."""
    _check_counts(case, tmp_path_factory.mktemp("forced"))
