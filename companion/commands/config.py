"""`companion config`: the effective configuration and where each value came from."""

from __future__ import annotations

import argparse

from companion.commands.common import add_config_option, load
from companion.output import print_json


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "config",
        help="print the effective configuration and where each value came from",
        description="Print the effective configuration: every key, its value and "
        "its source (default, file, environment, command line).",
    )
    add_config_option(p)
    p.add_argument("--data", metavar="DIR", help="data directory (overrides the file)")
    p.add_argument("--json", action="store_true", help="one JSON object per key")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    config, sources = load(args, data_dir=args.data)
    flat = _flatten(config.to_dict())
    width = max(len(k) for k in flat)
    for key, value in flat.items():
        if args.json:
            print_json({"key": key, "value": value, "source": sources[key]})
        else:
            print(f"{key:<{width}}  {_show(value):<40}  ({sources[key]})")
    return 0


def _flatten(d: dict, prefix: str = "") -> dict:
    out = {}
    for key, value in d.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, dict) and not prefix:
            out.update(_flatten(value, f"{dotted}."))
        else:
            out[dotted] = value
    return out


def _show(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ", ".join(value)
    if isinstance(value, dict):
        return " ".join(f"{k}={v}" for k, v in value.items())
    return str(value)
