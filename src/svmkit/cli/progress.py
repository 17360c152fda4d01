"""Progress bars on stderr for the commands that loop over blocks or folds."""

from __future__ import annotations

import sys


def progress(steps, desc, unit, quiet):
    """`steps` in a tqdm bar on stderr, or `steps` itself when quiet or stderr is not a terminal
    (tqdm is imported only when a bar is shown)."""
    if quiet or not sys.stderr.isatty():
        return steps
    from tqdm import tqdm

    return tqdm(steps, desc=desc, unit=unit, file=sys.stderr)


def progress_callback(desc, unit, quiet):
    """A callback `(done, total)` that moves a tqdm bar on stderr, or None when quiet or stderr
    is not a terminal."""
    if quiet or not sys.stderr.isatty():
        return None
    from tqdm import tqdm

    bar = tqdm(desc=desc, unit=unit, file=sys.stderr)

    def advance(done, total):
        bar.total = total
        bar.update(done - bar.n)
        if done == total:
            bar.close()

    return advance
