"""The `svmkit` command: train, predict, scale and info with LIBSVM's options, grid, easy, plot and update."""

from __future__ import annotations

import argparse
import os
import sys

from svmkit._version import __version__
from svmkit.cli import easy, grid, info, plot, predict, scale, train, update


#: The commands that mirror a LIBSVM tool, and its usage text (adapted to svmkit), which a bare
#: `svmkit COMMAND` prints as the bare LIBSVM tool does.
LIBSVM_USAGE = {"train": train.USAGE, "predict": predict.USAGE, "scale": scale.USAGE}


class _Parser(argparse.ArgumentParser):
    """Usage mistakes end the program with one line on stderr and exit status 1; a mistake with
    svm-train's -h (shrinking, which takes 0 or 1) also shows the usage text and where help is."""

    def __init__(self, *args, libsvm_usage="", **kwargs):
        super().__init__(*args, **kwargs)
        self.libsvm_usage = libsvm_usage

    def error(self, message):
        if "-h/--shrinking" in message:
            message += f" (-h is svm-train's shrinking flag, 0 or 1; `{self.prog} --help` shows the help)"
            self.exit(1, f"{self.libsvm_usage}{self.prog}: error: {message}\n")
        self.exit(1, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="svmkit", description="Kernel machines on LIBSVM data files.")
    parser.add_argument("--version", action="version", version=f"svmkit {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for module in (train, predict, scale, info, grid, easy, plot, update):
        module.add_parser(sub)
    return parser


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if len(argv) == 1 and argv[0] in LIBSVM_USAGE:
        print(LIBSVM_USAGE[argv[0]], end="", file=sys.stderr)
        return 1
    if argv[:1] in (["train"], ["grid"]):
        argv = train.split_weight_flags(argv)
    if argv[:1] == ["grid"]:
        argv = grid.join_range_flags(argv)
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except BrokenPipeError:
        # the reader of our output went away (e.g. `| head`): stop quietly, as svm-scale does
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        where = f"{exc.filename}: " if isinstance(exc, OSError) and exc.filename else ""
        print(f"svmkit {args.command}: error: {where}{reason}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"svmkit {args.command}: interrupted", file=sys.stderr)
        return 130


def program() -> None:
    """The `svmkit` executable: main(), then an immediate exit.

    Tearing the interpreter down frees scikit-learn's modules one object at a time, which takes
    longer than training on heart_scale; nothing needs it: the commands close (and
    sync) their files themselves, and the standard streams are flushed here.
    """
    status = main()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:  # the reader went away before the last lines
        status = 1
    os._exit(status)


if __name__ == "__main__":
    program()
