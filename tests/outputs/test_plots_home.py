"""Drawing writes nothing outside the output folder: in a home folder matplotlib has never used, the demo's
report still has its plots and the home folder stays empty (matplotlib's font list goes to a temporary folder,
removed at exit)."""

import os
import subprocess
import sys


def test_demo_plots_leave_a_fresh_home_folder_empty(tmp_path):
    home, out = tmp_path / "home", tmp_path / "out"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("XDG_CACHE_HOME", "XDG_CONFIG_HOME", "MPLCONFIGDIR")}
    env.update(HOME=str(home), TMPDIR=str(tmp_path))
    done = subprocess.run([sys.executable, "-m", "overlap", "demo", "--out", str(out)], env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert (out / "report.html").read_text().count("data:image/svg+xml") >= 1
    assert sorted(p.name for p in home.rglob("*")) == []
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("overlap-matplotlib-")]


def test_no_temporary_folder_leaves_matplotlib_to_find_its_place(tmp_path, monkeypatch):
    """Where no temporary folder can be made, the import is not redirected (matplotlib then finds a place, as it
    does anywhere) instead of failing the report."""
    import tempfile

    from overlap.outputs import plots

    monkeypatch.delitem(sys.modules, "matplotlib", raising=False)
    monkeypatch.delenv("MPLCONFIGDIR", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr(tempfile, "mkdtemp", lambda **_: str(tmp_path / "made"))
    assert plots._private_folder() == str(tmp_path / "made")

    def no_room(**_):
        raise FileNotFoundError("No usable temporary directory found")

    monkeypatch.setattr(tempfile, "mkdtemp", no_room)
    assert plots._private_folder() is None
