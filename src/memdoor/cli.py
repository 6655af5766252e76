"""The ``memdoor`` command. Each subcommand lives in :mod:`memdoor.commands` with ``configure`` and ``run``."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.metadata
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from memdoor import __version__
from memdoor.core.errors import MemdoorError

BROKEN_PIPE = 141
"""Exit status when standard output's reader went away before a command was done (128 + SIGPIPE, as a
shell reports a program a broken pipe killed)."""

COMMANDS: dict[str, str] = {
    "grade": "grade candidate programs against a problem file's tests",
    "solve": "a team solves one problem",
    "demo": "one agent against a team on a few small problems, side by side",
    "review": "a team reviews a diff: consensus findings and a patch checked by the tests",
    "bench": "run strategies over a suite and store every result",
    "report": "statistics, charts and comparisons of a bench directory",
    "worker": "one agent serving a distributed team over Redis",
    "serve": "a team as an OpenAI-compatible model endpoint",
    "models": "list known models and the state of their weights",
    "trace": "print a recorded trace as a timeline",
    "doctor": "check the sandbox isolation and the environment",
    "export": "export bench results for the official graders",
}


def version() -> str:
    """The installed package's version (its metadata); the source's ``__version__`` when run uninstalled."""
    try:
        return importlib.metadata.version("memdoor")
    except importlib.metadata.PackageNotFoundError:
        return __version__


def _command(name: str):
    return importlib.import_module(f"memdoor.commands.{name}")


class Parser(argparse.ArgumentParser):
    """argparse, with a usage error on one line (``memdoor: --timeout: must be more than 0 ...``), exit 2.

    Subcommand parsers are of this class too (argparse makes them with the parent's class). Option
    values are checked by the types of :mod:`memdoor.commands.options`.
    """

    def error(self, message: str) -> NoReturn:
        line = " ".join(message.split()).removeprefix("argument ")
        self.exit(2, f"memdoor: {line} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="memdoor", description="Teams of language models solving programming problems.")
    parser.add_argument("--version", action="version", version=f"memdoor {version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, help_text in COMMANDS.items():
        try:
            module = _command(name)
        except ModuleNotFoundError as e:
            if e.name != f"memdoor.commands.{name}":
                raise
            continue
        p = sub.add_parser(
            name,
            help=help_text,
            description=getattr(module, "__doc__", None) or help_text,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        module.configure(p)
        p.set_defaults(_run=module.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # a usage error (2, its line already printed), --help or --version (0)
        return e.code if isinstance(e.code, int) else 2
    if not getattr(args, "_run", None):
        parser.print_help()
        return 2
    try:
        return int(args._run(args) or 0)
    except MemdoorError as e:
        print(f"memdoor: {e}", file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt:
        print("memdoor: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away before the command was done: not a success
        quiet_stdout()
        return BROKEN_PIPE


def quiet_stdout() -> None:
    """Point standard output at /dev/null after a broken pipe, so that flushing it at exit cannot fail
    (Python would print a traceback and exit 120). A command that has computed its exit code before the
    pipe broke (``memdoor review``) calls this and still returns that code."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


if __name__ == "__main__":
    sys.exit(main())
