"""Machine output shared by the commands and the benchmarks."""

from __future__ import annotations

import json
import sys
from typing import Any


def print_json(obj: Any) -> None:
    """Machine output: one JSON object per line, flushed so a reader sees it at once."""
    sys.stdout.write(json.dumps(obj, ensure_ascii=False) + "\n")
    sys.stdout.flush()
