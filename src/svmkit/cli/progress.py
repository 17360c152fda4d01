"""Progress bars on stderr for the commands that loop over blocks or folds."""

from __future__ import annotations

import contextlib
import math
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


class GapBar:
    """A solve's progress as a share of the way from its first maximal KKT violation to tol,
    on a log scale: log(gap₀/gap) / log(gap₀/tol), in percent. Each new solve (a class pair)
    starts the share again and counts in the bar's description."""

    def __init__(self, bar):
        self.bar = bar
        self.first = None
        self.problems = 0

    def __call__(self, gap, tol):
        if gap is None:
            self.first = None
            self.problems += 1
            self.bar.set_description(f"train (problem {self.problems})")
            self.bar.reset(total=100)
            return
        if self.first is None:
            self.first = gap
        done = 100 if gap <= tol else share(self.first, gap, tol)
        self.bar.update(max(0, done - self.bar.n))
        if gap <= tol:
            # the problem is solved: free the line for the summary svm-train prints next
            self.bar.clear()


def share(first, gap, tol) -> int:
    """Percent of the way from `first` down to `tol` that `gap` has come, on a log scale."""
    if first <= tol or gap >= first:
        return 0
    return int(min(99, 100 * math.log(first / gap) / math.log(first / tol)))


@contextlib.contextmanager
def gap_progress(quiet):
    """While inside, the solver's maximal-violation gap drives a bar on stderr (none when
    quiet or stderr is not a terminal)."""
    if quiet or not sys.stderr.isatty():
        yield
        return
    from tqdm import tqdm

    from svmkit.solvers.smo.solver import gap_observer

    bar = tqdm(total=100, desc="train", unit="%", file=sys.stderr, leave=False)
    token = gap_observer.set(GapBar(bar))
    try:
        yield
    finally:
        gap_observer.reset(token)
        bar.close()
