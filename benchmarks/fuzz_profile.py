"""The fuzzing suite's long profile (issue 41): draws --cases cases with Hypothesis (bad
parameters and data for every estimator, damaged files for every reader, bad arguments for every
command), runs each in a worker process under --time-limit seconds, and prints the totals by
outcome class and one line per case that is neither a clear error nor a correct result.

    PYTHONPATH=src python benchmarks/fuzz_profile.py --cases 3000 --seed 1
"""

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
import fuzzing  # noqa: E402  (the harness the tests use)
from _results import write  # noqa: E402  (beside this script, whose folder is on sys.path)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=3000, help="cases to draw (default 3000)")
    parser.add_argument("--seed", type=int, default=1, help="Hypothesis seed (default 1)")
    parser.add_argument("--time-limit", type=float, default=60.0, help="seconds per case before it is a hang")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes at once (default 2)")
    parser.add_argument("--batch", type=int, default=100, help="cases per worker process (default 100)")
    args = parser.parse_args()
    t0 = time.perf_counter()
    cases = fuzzing.draw_cases(args.cases, seed=args.seed)
    results = fuzzing.run_cases(cases, time_limit=args.time_limit, jobs=args.jobs, batch=args.batch)
    elapsed = time.perf_counter() - t0
    print(f"{len(cases)} cases (seed {args.seed}, {args.time_limit:g} s limit) in {elapsed:.0f} s")
    by_target = Counter(c["target"] for c in cases)
    print("by target:", ", ".join(f"{t} {n}" for t, n in by_target.items()))
    print("totals:", ", ".join(f"{k} {v}" for k, v in fuzzing.totals(results).items()))
    for line in fuzzing.report(cases, results):
        print(line)
    write("fuzz_profile", [{"outcome": k, "cases": v} for k, v in fuzzing.totals(results).items()],
          notes=f"{len(cases)} cases (Hypothesis seed {args.seed}, {args.time_limit:g} s limit per case) in "
                f"{elapsed:.0f} s; by target: " + ", ".join(f"{t} {n}" for t, n in by_target.items()) + ".",
          plots=[{"kind": "bars", "value": "cases", "label": ["outcome"], "xscale": "log", "xlabel": "cases"}])


if __name__ == "__main__":
    main()
