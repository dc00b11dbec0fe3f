"""The `companion` command: one subcommand per module in `companion.commands`."""

from __future__ import annotations

import argparse
import importlib
import keyword
import sys

from calibration.errors import CalibrationError
from companion.errors import CompanionError
from firmware.errors import FirmwareError
from vision.errors import VisionError

# Subcommand name -> module in companion.commands (dashes become underscores; a Python keyword
# gets a trailing underscore: `import` is import_.py).
COMMANDS = (
    "serve",
    "config",
    "battle",
    "odds",
    "automaton",
    "simulate",
    "export",
    "import",
    "calibrate",
    "count",
    "watch",
    "bench",
    "scenes",
    "train",
    "doctor",
    "panel-test",
)

# Errors that are the user's to fix: printed as one line, never as a traceback.
USER_ERRORS = (CompanionError, CalibrationError, FirmwareError, VisionError)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="companion",
        description="Tower Companion: counts the cubes under a cube tower, resolves battles, "
        "runs the solo automaton.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMANDS:
        module = name.replace("-", "_") + "_" * keyword.iskeyword(name)
        module = importlib.import_module(f"companion.commands.{module}")
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except USER_ERRORS as e:
        print(f"companion {args.command}: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 1
