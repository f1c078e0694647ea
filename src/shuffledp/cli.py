"""The one command-line interface: ``shuffledp <command> ...``.

Commands live in :mod:`shuffledp.commands`; every module there that defines
``register(subparsers, account_subparsers)`` is discovered and adds its commands, so a new
command is a new module and nothing else changes. ``account`` subcommands (privacy
accountants) print JSON on stdout.
"""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import sys

from shuffledp import __version__
from shuffledp import commands as _commands_pkg
from shuffledp.errors import InputError, UsageError


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors: ``shuffledp: error: argument --flag: ...`` (exit 2)."""

    def error(self, message: str):  # noqa: D102
        hint = f" (see '{self.prog} --help')"
        self.exit(2, f"shuffledp: error: {_one_line(message)}{hint}\n")


def build_parser(commands: tuple[str, ...] | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or of the command modules named in ``commands`` only (what
    ``shuffledp step``, the command of every workflow job, needs: the others' imports are not paid)."""
    parser = _Parser(prog="shuffledp", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"shuffledp {__version__}")
    parser.add_argument("--traceback", action="store_true", help="on an error, show the Python traceback")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=_Parser)
    account = sub.add_parser("account", help="privacy accountants (JSON on stdout)")
    account_sub = account.add_subparsers(dest="accountant", required=True, metavar="ACCOUNTANT", parser_class=_Parser)
    for info in sorted(pkgutil.iter_modules(_commands_pkg.__path__), key=lambda m: m.name):
        if info.name.startswith("_") or (commands is not None and info.name not in commands):
            continue
        module = importlib.import_module(f"{_commands_pkg.__name__}.{info.name}")
        register = getattr(module, "register", None)
        if register is not None:
            register(sub, account_sub)
    return parser


def _one_line(text: object) -> str:
    out = ""
    for line in (ln.strip() for ln in str(text).splitlines()):
        if line:
            out += (" " if out.endswith(":") else "; " if out else "") + line
    return out


def _describe(exc: BaseException) -> str:
    """One line for an exception: the flag or file it names, what failed."""
    if isinstance(exc, OSError) and exc.filename is not None:
        what = exc.strerror or type(exc).__name__
        return f"{exc.filename}: {what}"
    text = _one_line(exc)
    flag = getattr(exc, "flag", None)  # e.g. AccountantDomainError(ValueError) carries the flag it concerns
    if flag and not text.startswith(str(flag)):
        text = f"{flag}: {text}"
    return text or type(exc).__name__


# Exceptions that mean "bad input" (a value, a flag, a file, a damaged download): exit 2, one line.
# Anything else is a bug of ours: exit 1, "internal error" (--traceback shows where).
_INPUT_ERRORS: tuple[type[BaseException], ...] = (InputError, OSError)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    # a workflow job (`shuffledp step ...`) parses with the step command's module alone
    parser = build_parser(("step",) if argv[:1] == ["step"] else None)
    args = parser.parse_args(argv)
    debug = bool(args.traceback)
    try:
        from shuffledp.environment import check_environment, debug_enabled

        debug = debug_enabled() or debug  # SHUFFLEDP_DEBUG=0 is off; a value it cannot read is one line
        check_environment()
        if sys.stdout is None:  # started with stdout closed (`>&-`): nothing it prints could arrive
            raise UsageError("standard output is closed; run it with stdout open (e.g. > /dev/null to discard it)")
        # figures are always drawn with Agg: a MPLBACKEND set for other programs never reaches matplotlib
        os.environ["MPLBACKEND"] = "Agg"
        result = args.func(args)
    except KeyboardInterrupt:
        print("shuffledp: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `shuffledp account ... | head`
        return 0
    except _INPUT_ERRORS as exc:
        if debug:
            raise
        print(f"shuffledp: error: {_describe(exc)}", file=sys.stderr)
        return 2
    except Exception as exc:  # a bug, not bad input: still one line (--traceback shows the traceback)
        if debug:
            raise
        print(f"shuffledp: internal error: {type(exc).__name__}: {_one_line(exc)} "
              "(a bug: please report it; --traceback or SHUFFLEDP_DEBUG=1 shows where)", file=sys.stderr)
        return 1
    return int(result or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
