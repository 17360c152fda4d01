"""The README and the documentation's first pages are a contract: their Python blocks run as
written, in order, in one session; the README stays short and names every public model."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def readme_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README, flags=re.S)


def rst_python_blocks(page: Path) -> list[str]:
    """The `.. code-block:: python` blocks of a page, dedented."""
    blocks = []
    for body in re.findall(r"^\.\. code-block:: python\n\n((?:(?:   .*)?\n)+)", page.read_text(), flags=re.M):
        blocks.append("\n".join(line[3:] for line in body.splitlines()).strip() + "\n")
    return blocks


def run_in_order(blocks: list[str], tmp_path: Path) -> None:
    (tmp_path / "data").symlink_to(ROOT / "data")  # the blocks read data/…, and write beside it
    done = subprocess.run([sys.executable, "-c", "\n".join(blocks)], cwd=tmp_path, capture_output=True, text=True,
                          timeout=600, env={**os.environ, "MPLBACKEND": "Agg"})
    assert done.returncode == 0, done.stderr[-3000:]
    assert (tmp_path / "heart.svmkit").exists()


def test_the_readme_is_short_with_install_quick_start_models_and_documentation():
    assert len(README.splitlines()) <= 100
    for heading in ("## Install", "## Quick start", "## Models", "## Documentation"):
        assert heading in README
    for command in ("pip install .", "make run", "make test"):
        assert command in README


def test_the_readme_names_every_extra():
    extras = re.search(r"\[project\.optional-dependencies\]\n(.*?)\n\[", (ROOT / "pyproject.toml").read_text(), re.S)
    names = re.findall(r"^([\w-]+) = ", extras.group(1), flags=re.M)
    assert names and [n for n in names if not re.search(rf"\b{re.escape(n)}\b", README)] == []


def test_the_readme_table_lists_every_public_model():
    import svmkit

    estimators = {n for n in svmkit.__all__ if isinstance(getattr(svmkit, n), type)
                  and hasattr(getattr(svmkit, n), "fit") and hasattr(getattr(svmkit, n), "predict")}
    searches = {n for n in estimators if n.endswith("CV")}  # named in the text under the table
    table = set(re.findall(r"^\| `(\w+)` \|", README, flags=re.M))
    assert (estimators - searches) | {"HardBandSVR", "LinearSVC", "LinearSVR", "KernelLogisticRegression"} <= table
    assert searches and all(f"`{n}`" in README for n in searches)


def test_the_readme_links_point_at_files():
    links = re.findall(r"\]\(([^)#]+)\)", README)
    assert links and [link for link in links if not (ROOT / link).exists()] == []


def test_every_readme_python_block_runs_in_order_in_one_session(tmp_path):
    assert readme_blocks()
    run_in_order(readme_blocks(), tmp_path)


@pytest.mark.parametrize("page", ["install.rst", "tour.rst"])
def test_every_python_block_of_the_first_pages_runs_in_order_in_one_session(page, tmp_path):
    blocks = rst_python_blocks(ROOT / "docs" / page)
    assert blocks
    run_in_order(blocks, tmp_path)
