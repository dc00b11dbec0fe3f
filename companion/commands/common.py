"""Options and helpers shared by several subcommands."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from companion.config import Config, load_config
from companion.errors import CompanionError


def add_config_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--config",
        metavar="FILE",
        help="configuration file (default: $TOWER_COMPANION_CONFIG, "
        "else ~/.config/tower-companion/config.toml if it exists)",
    )


def load(args: argparse.Namespace, **overrides: Any) -> tuple[Config, dict[str, str]]:
    """The effective configuration for a subcommand: file, then its own options."""
    return load_config(getattr(args, "config", None), overrides)


def read_json(source: str) -> Any:
    """The JSON in a file, or standard input for -; a CompanionError names what is wrong."""
    name = "standard input" if source == "-" else source
    try:
        if source == "-":
            text = sys.stdin.read()
        else:
            with open(source, encoding="utf-8") as f:
                text = f.read()
    except OSError as e:
        raise CompanionError(f"{name}: cannot read: {e.strerror}") from None
    except UnicodeDecodeError:
        raise CompanionError(f"{name}: not UTF-8 text") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise CompanionError(f"{name}: not valid JSON: {e}") from None


def read_image(path: str):
    """A BGR image from a PNG/JPEG file, or a CompanionError saying why not (named file)."""
    import cv2
    import numpy as np

    try:
        data = np.fromfile(path, dtype=np.uint8)
    except OSError as e:
        raise CompanionError(f"{path}: cannot read image: {e.strerror}") from None
    if data.size == 0:
        raise CompanionError(f"{path}: cannot read image: the file is empty")
    image = cv2.imdecode(data, cv2.IMREAD_COLOR)
    if image is None or image.size == 0:
        raise CompanionError(
            f"{path}: cannot read image: not a PNG, JPEG or other image OpenCV can decode"
        )
    return image


def counts_text(counts: dict[str, int]) -> str:
    """'3 red, 2 blue' for people; colours with none are left out."""
    return ", ".join(f"{n} {colour}" for colour, n in counts.items() if n) or "no cubes"
