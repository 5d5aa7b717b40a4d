"""`keep_freed_memory` keeps what a process frees for reuse: a loop that allocates and frees batch-sized arrays
(numpy's through the C allocator, Arrow's through its mimalloc pool) faults far fewer fresh pages in with it
than without, and a setting the user made stays theirs. Each run is a fresh process (Arrow reads its setting
when it loads)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

LOOP = r"""
import json, os, resource, sys, time
if sys.argv[1] == "kept":
    from overlap.allocator import keep_freed_memory
    keep_freed_memory()
import numpy as np, pyarrow as pa, pyarrow.compute as pc

def faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt

start = faults()
for i in range(50):  # six ~8 MB arrays a round, sizes shifting as a batch's do, all freed
    held = [np.ones((1 << 20) + 4096 * (i + j)) for j in range(6)]
    del held
numpy_faults = faults() - start
arrays = [pa.array(np.arange((1 << 20) + 512 * j, dtype=np.int64)) for j in range(6)]
start = faults()
for _ in range(20):
    held = [pc.add(a, 1) for a in arrays]
    del held
    time.sleep(0.05)  # past mimalloc's default purge delay (10 ms): a pause between batches, as reading one is
print(json.dumps({"numpy": numpy_faults, "arrow": faults() - start,
                  "purge": os.environ.get("MIMALLOC_PURGE_DELAY")}))
"""

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="page-fault counts of Linux")


def _run(mode: str, **env: str) -> dict:
    done = subprocess.run([sys.executable, "-c", LOOP, mode], capture_output=True, text=True, check=True,
                          env={**{k: v for k, v in os.environ.items() if not k.startswith(("MALLOC_", "MIMALLOC_"))},
                               **env})
    return json.loads(done.stdout)


def test_freed_memory_is_reused_not_faulted_in_again():
    default, kept = _run("default"), _run("kept")
    assert kept["numpy"] * 5 < default["numpy"], (default, kept)
    assert kept["arrow"] * 3 < default["arrow"], (default, kept)
    assert kept["purge"] == "-1" and default["purge"] is None


def test_the_users_own_setting_stays():
    assert _run("kept", MIMALLOC_PURGE_DELAY="10")["purge"] == "10"


def test_the_command_keeps_freed_memory_before_arrow_loads():
    code = ("import sys\nfrom overlap.cli import main\nsys.argv = ['overlap', '--help']\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\nimport os\n"
            "print('pyarrow' in sys.modules, os.environ.get('MIMALLOC_PURGE_DELAY'))")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MIMALLOC_")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env).stdout
    assert out.strip().splitlines()[-1] == "False -1"


def test_objects_frozen_for_a_scan_are_unfrozen_after_it_even_when_it_fails():
    import gc

    from overlap.allocator import objects_frozen

    assert gc.get_freeze_count() == 0
    with objects_frozen():
        assert gc.get_freeze_count() > 0  # what was alive on entry is out of the collector's passes
    assert gc.get_freeze_count() == 0
    try:
        with objects_frozen():
            raise ValueError("a scan that fails")
    except ValueError:
        pass
    assert gc.get_freeze_count() == 0


def test_objects_the_caller_froze_stay_frozen():
    import gc

    from overlap.allocator import objects_frozen

    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with objects_frozen():
            pass
        assert gc.get_freeze_count() == frozen  # the caller's freeze is theirs to undo
    finally:
        gc.unfreeze()
