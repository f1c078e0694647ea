"""The one command-line interface: ``shuffledp <command> ...``.

Commands live in :mod:`shuffledp.commands`; every module there that defines
``register(subparsers, account_subparsers)`` is discovered and adds its commands, so a new
command is a new module and nothing else changes. ``account`` subcommands (privacy
accountants) print JSON on stdout.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

from shuffledp import __version__
from shuffledp import commands as _commands_pkg


class UsageError(Exception):
    """An invalid argument; the CLI prints it on one line and exits with status 2."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="shuffledp", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"shuffledp {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    account = sub.add_parser("account", help="privacy accountants (JSON on stdout)")
    account_sub = account.add_subparsers(dest="accountant", required=True, metavar="ACCOUNTANT")
    for info in sorted(pkgutil.iter_modules(_commands_pkg.__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{_commands_pkg.__name__}.{info.name}")
        register = getattr(module, "register", None)
        if register is not None:
            register(sub, account_sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        result = args.func(args)
    except UsageError as exc:
        print(f"shuffledp: error: {exc}", file=sys.stderr)
        return 2
    return int(result or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
