"""Helpers for the output tests (a plain module, not conftest.py, so that no other test folder's
`conftest` can shadow it)."""

import pandas as pd


def hub_error(name, message):
    """A huggingface_hub error without an HTTP response (their constructors want one from a real call)."""
    from huggingface_hub import errors

    cls = getattr(errors, name)
    exc = cls.__new__(cls)
    Exception.__init__(exc, message)
    return exc


class FakeHfApi:
    """Stands in for huggingface_hub.HfApi: records calls, never touches the network."""

    def __init__(self, token="hf_test", role="write", repo_exists=True):
        self.token = token
        self.role = role
        self.repo_exists = repo_exists
        self.commits = []

    def whoami(self):
        return {"name": "tester", "auth": {"accessToken": {"role": self.role}}}

    def repo_info(self, repo_id, repo_type=None):
        if not self.repo_exists:
            raise hub_error("RepositoryNotFoundError", f"{repo_id} not found")
        return {"id": repo_id}

    def create_commit(self, repo_id, operations, **kwargs):
        from types import SimpleNamespace

        self.commits.append({"repo_id": repo_id, "operations": list(operations), **kwargs})
        return SimpleNamespace(pr_url=f"https://huggingface.co/datasets/{repo_id}/discussions/1",
                               commit_url="unused")


def attach_test_baselines(result, permutations=500):
    """Real chance baselines (overlap.stats.wiring) on a hand-made pool: every OSS-Fuzz id of the compare
    plus 20 others, in 4 projects. Returns the per-bench blocks."""
    from overlap.stats.wiring import cyber_baselines

    datasets = [result.train, *[c.bench for c in result.benches]]
    ids = sorted({int(v) for d in datasets for v in d.keys.loc[d.keys["kind"] == "ossfuzz", "value"]})
    ids += [900_000_001 + i for i in range(20)]
    pool = pd.DataFrame({"canonical_id": ids, "project": [f"p{i % 4}" for i in range(len(ids))]})
    block = cyber_baselines(result, pool, permutations=permutations, seed=1)
    per_bench = block.pop("benches")
    result.sections["baselines"] = block | {"status": "ran"}
    for comp in result.benches:
        comp.sections["baselines"] = per_bench[comp.bench.name]
    return per_bench
