"""The Ray engine against the local engine: ``python benchmarks/ngram_bench.py --engine ray``.

On the benchmark's workload (one size: the largest of ``--sizes``, as parquet shards), in a fresh process:
the local engine with one worker in process (the per-core baseline), then a local Ray (``num_cpus`` = 2;
its start-up timed apart) with 1 and 2 actors. Printed per run: MB/s of train text (wall time, index
build excluded), speed-up over the local engine and efficiency = speed-up / actors, and whether the flags
are byte-identical to the local engine's; then the fixed start-up of a Ray scan (a 2,000-item scan: file
listing, actor start, index fetch) and the efficiency without it, which is what a long scan approaches.
Also runnable alone:

    python benchmarks/ngram_ray_bench.py --sizes 100000
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def shards(data: Path, size: int) -> Path:
    """The benchmark's train set of ``size`` items as parquet shards (generated once by ngram_bench.py)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = data / f"ray-train-{size}"
    if folder.is_dir() and any(folder.glob("*.parquet")):
        return folder
    out, truth = data / f"ray-gen-{size}", data / f"ray-truth-{size}.npz"
    subprocess.run([sys.executable, str(HERE / "ngram_bench.py"), "--child", "gen", str(out), str(truth), str(size)],
                   check=True, capture_output=True, text=True)
    if out.is_dir():  # ngram_bench writes parquet shards
        out.rename(folder)
        return folder
    folder.mkdir(parents=True)  # an Arrow IPC file: into 8 parquet shards
    table = pa.ipc.open_file(pa.memory_map(str(out))).read_all()
    per = -(-table.num_rows // 8)
    for k in range(8):
        pq.write_table(table.slice(k * per, per), folder / f"part-{k:05d}.parquet", row_group_size=8192)
    out.unlink()
    return folder


def measure(folder: Path, actors: list[int], num_cpus: int) -> dict:
    """Run in a fresh process: local baseline, then Ray with each actor count."""
    sys.path.insert(0, str(HERE.parent))
    sys.path.insert(0, str(HERE))
    import pandas as pd
    import pyarrow as pa
    import ray
    from ngram_bench import make_bench, vocabulary

    from overlap.text.api import text_check
    from overlap.text.ngram import build_index

    surface, cdf = vocabulary()
    bench = make_bench(surface, cdf)
    bench_df = pd.DataFrame({"item_id": bench["ids"], "text": bench["text"].to_pylist()})
    index = build_index(pa.array(bench_df["text"]), bench["ids"])
    out: dict = {"runs": []}

    def run(label: str, path: Path = folder, **kw) -> tuple[dict, str]:
        t = time.perf_counter()
        res = text_check(str(path), bench_df, "text", "text", index=index, **kw)
        s = time.perf_counter() - t
        mb = res.train_counts["bytes"] / 1e6
        return {"label": label, "s": s, "mb": mb, "mb_s": mb / s, "items": res.train_counts["items"]}, \
            res.flags.to_csv(index=False)

    base, flags = run("local, 1 worker", workers=1)
    out["runs"].append(base)
    t = time.perf_counter()
    ray.init(address="local", num_cpus=num_cpus, include_dashboard=False, log_to_driver=False)
    out["ray_start_s"] = time.perf_counter() - t
    tiny = folder.parent / f"{folder.name}-tiny"
    if not tiny.is_dir():
        import pyarrow.parquet as pq

        tiny.mkdir()
        first = sorted(folder.glob("*.parquet"))[0]
        pq.write_table(pq.read_table(first).slice(0, 2000), tiny / "part-00000.parquet")
    for k in actors:
        r, f = run(f"ray, {k} actor{'s' if k > 1 else ''}", workers=k, engine="ray")
        r["same_flags"] = f == flags
        r["startup_s"] = run("tiny", tiny, workers=k, engine="ray")[0]["s"]
        out["runs"].append(r)
    ray.shutdown()
    for r in out["runs"]:
        k = 1 if r["label"].startswith("local") else int(r["label"].split(", ")[1].split()[0])
        r["actors"] = k
        r["speedup"] = r["mb_s"] / base["mb_s"]
        r["efficiency"] = r["speedup"] / k
        if "startup_s" in r and r["s"] > 2 * r["startup_s"]:  # else the start-up is too large a share to take out
            r["steady_efficiency"] = r["mb"] / (r["s"] - r["startup_s"]) / base["mb_s"] / k
    return out


def run_ray_table(args, data: Path) -> dict:
    """The Ray table on the largest size (``args.sizes``)."""
    size = max(int(s) for s in args.sizes.split(","))
    folder = shards(data, size)
    env = dict(os.environ, RAY_DATA_DISABLE_PROGRESS_BARS="1")
    proc = subprocess.run([sys.executable, __file__, "--child", str(folder)], check=True, capture_output=True,
                          text=True, env=env)
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    print(f"Ray engine vs local ({size:,} train items, {res['runs'][0]['mb']:.0f} MB in parquet shards; "
          f"local Ray num_cpus=2 started in {res['ray_start_s']:.1f} s, not counted):", flush=True)
    for r in res["runs"]:
        same = "" if "same_flags" not in r else ("; flags byte-identical" if r["same_flags"] else "; FLAGS DIFFER")
        steady = "" if "startup_s" not in r else f"; start-up {r['startup_s']:.1f} s"
        if "steady_efficiency" in r:
            steady += f", efficiency without it {r['steady_efficiency']:.2f}"
        print(f"  {r['label']:<18} {r['s']:6.2f} s = {r['mb_s']:6.1f} MB/s, speed-up {r['speedup']:.2f}, "
              f"efficiency {r['efficiency']:.2f}{steady}{same}", flush=True)
    return {"size": size, **res}


def main_from(args) -> None:
    """``ngram_bench.py --engine ray``: the Ray table (``--sizes``, ``--data``, ``--tmp``, ``--json``)."""
    with tempfile.TemporaryDirectory(dir=getattr(args, "tmp", None)) as tmp:
        data = Path(args.data) if getattr(args, "data", None) else Path(tmp)
        data.mkdir(parents=True, exist_ok=True)
        out = run_ray_table(args, data)
    if getattr(args, "json", None):
        Path(args.json).write_text(json.dumps({"ray": out}, indent=2, sort_keys=True) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100000")
    parser.add_argument("--data", help="folder for the generated shards, kept and reused")
    parser.add_argument("--json", help="also write the results here")
    main_from(parser.parse_args())


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        print(json.dumps(measure(Path(sys.argv[2]), [1, 2], 2)))
    else:
        main()
