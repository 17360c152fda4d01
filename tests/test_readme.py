"""The README is a contract: its Python blocks run as written, in order, in one session."""

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def readme_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), flags=re.S)


def test_the_readme_has_python_blocks():
    assert len(readme_blocks()) >= 5


def test_every_readme_python_block_runs_in_order_in_one_session(tmp_path):
    (tmp_path / "data").symlink_to(ROOT / "data")  # the blocks read data/…, and write beside it
    script = "\n".join(readme_blocks())
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True,
                          timeout=600, env={**os.environ, "MPLBACKEND": "Agg"})
    assert done.returncode == 0, done.stderr[-3000:]
    assert (tmp_path / "heart.svmkit").exists()
