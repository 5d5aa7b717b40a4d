from fixtures import write_cybergym

from overlap.api.demo import demo_data
from overlap.sources.load import load_dataset
from overlap.sources.places.taskfiles import MAX_FILE_BYTES, fetch_item_files
from overlap.sources.rows.item_paths import cybergym_task_path


def test_task_path_layout():
    assert cybergym_task_path("arvo:1065", "error.txt") == "data/arvo/1065/error.txt"
    assert cybergym_task_path("oss-fuzz:42537168", "patch.diff") == "data/oss-fuzz/42537168/patch.diff"
    assert cybergym_task_path("broken", "patch.diff") is None


def test_fetch_from_folder_with_missing_and_oversized_files(tmp_path):
    root = write_cybergym(tmp_path / "cg")
    (root / "data/arvo/10288").mkdir(parents=True)
    (root / "data/arvo/10288/error.txt").write_bytes(b"==1==ERROR: AddressSanitizer: SEGV \xff\n")
    (root / "data/arvo/10400").mkdir(parents=True)
    (root / "data/arvo/10400/error.txt").write_bytes(b"x" * (MAX_FILE_BYTES + 1))
    ds = load_dataset("cybergym", {"cybergym": root})
    files = fetch_item_files(ds, ["arvo:10288", "arvo:10400", "arvo:11500"], "error.txt", cybergym_task_path)
    assert files["arvo:10288"].text.startswith("==1==ERROR") and "\ufffd" in files["arvo:10288"].text
    assert files["arvo:10400"].text is None and "cap" in files["arvo:10400"].reason
    assert files["arvo:11500"].text is None and "not found" in files["arvo:11500"].reason


def test_partly_cached_hub_files_offline(tmp_path, monkeypatch):
    """Offline, a file missing from the cache does not stop the others from being read from it."""
    import shutil

    from overlap.model import Dataset
    from overlap.sources.places.files import HubRepo

    sha = "a" * 40
    snap = tmp_path / "hub" / "datasets--sunblaze-ucb--cybergym" / "snapshots" / sha
    for number in ("10055", "10340"):
        (snap / "data/arvo" / number).mkdir(parents=True)
        shutil.copy(demo_data()["cybergym"] / "data/arvo" / number / "error.txt", snap / "data/arvo" / number)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    ds = load_dataset("cybergym", demo_data())
    hub_like = Dataset(ds.name, ds.items, ds.keys, ds.provenance,
                       source=HubRepo(origin="hub", repo_id="sunblaze-ucb/cybergym", revision=sha))
    files = fetch_item_files(hub_like, ["arvo:10055", "arvo:10102", "arvo:10340"], "error.txt", cybergym_task_path)
    assert files["arvo:10055"].text and files["arvo:10340"].text
    assert files["arvo:10102"].text is None and "not in the Hub cache" in files["arvo:10102"].reason


def test_fetch_from_hub_without_cache_is_not_run_not_an_error(tmp_path, monkeypatch):
    from overlap.model import Dataset
    from overlap.sources.places.files import HubRepo

    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty"))
    monkeypatch.delenv("HF_HUB_OFFLINE")  # "online", but every download fails: stop after the first
    monkeypatch.delenv("OVERLAP_OFFLINE")
    monkeypatch.setattr(HubRepo, "fetch", _unreachable)
    ds = load_dataset("cybergym", demo_data())
    hub_like = Dataset(ds.name, ds.items, ds.keys, ds.provenance,
                       source=HubRepo(origin="hub", repo_id="sunblaze-ucb/cybergym", revision="0" * 40))
    files = fetch_item_files(hub_like, ["arvo:10055", "arvo:10102"], "patch.diff", cybergym_task_path)
    assert {f.reason for f in files.values()} == {"patch.diff not cached and the Hub is unreachable"}


def _unreachable(self, relpath):
    from overlap.errors import HubUnavailableError

    raise HubUnavailableError(f"{relpath}: no network")


def test_demo_holds_task_files():
    ds = load_dataset("cybergym", demo_data())
    files = fetch_item_files(ds, ["arvo:10055"], "patch.diff", cybergym_task_path)
    assert files["arvo:10055"].text.startswith("diff --git a/parser.c b/parser.c")
