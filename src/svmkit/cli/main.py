"""The `svmkit` command: one subcommand per module of this package."""

from __future__ import annotations

import argparse
import sys

from svmkit.cli import easy


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="svmkit", description="Kernel machines on LIBSVM data files.")
    sub = parser.add_subparsers(dest="command", required=True)
    easy.add_parser(sub)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except (OSError, ValueError) as exc:
        print(f"svmkit {args.command}: error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
