"""Options and helpers shared by several subcommands."""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from companion.config import Config, load_config


def add_config_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", metavar="FILE",
                        help="configuration file (default: $TOWER_COMPANION_CONFIG, "
                             "else ~/.config/tower-companion/config.toml if it exists)")


def load(args: argparse.Namespace, **overrides: Any) -> tuple[Config, dict[str, str]]:
    """The effective configuration for a subcommand: file, then its own options."""
    return load_config(getattr(args, "config", None), overrides)


def print_json(obj: Any) -> None:
    """Machine output: one JSON object per line, flushed so a reader sees it at once."""
    sys.stdout.write(json.dumps(obj, ensure_ascii=False) + "\n")
    sys.stdout.flush()
