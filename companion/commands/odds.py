"""`companion odds`: a battle's odds before the throw, from JSON, as one JSON line."""

from __future__ import annotations

import argparse
from pathlib import Path

from companion.commands.common import add_config_option, load, read_json
from companion.errors import CompanionError
from companion.output import print_json
from companion.rules.battle import BattleError, battle_from_dict, counts
from companion.rules.odds import battle_odds
from companion.rules.stickiness import Stickiness, estimate, prior
from companion.store import FILE_NAME, Store
from companion.throws import throws

# Keys beyond `companion battle`'s: the tower's estimated contents and its stickiness.
TOWER_KEYS = ("tower", "keep", "release")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "odds",
        help="a battle's odds before the throw",
        description="Read one battle as JSON (as `companion battle`, without emerged) and print "
        "the chances of conquered, held and devastated and the cubes expected out "
        "per colour. The tower's contents (tower) and stickiness (keep, release) come "
        "from the JSON, else from --data's game, else an empty tower and the usual "
        "stickiness.",
    )
    p.add_argument(
        "--json",
        required=True,
        metavar="FILE",
        dest="source",
        help="the battle as a JSON file, or - for standard input",
    )
    p.add_argument(
        "--data",
        metavar="DIR",
        help="a companion's data directory: the tower and stickiness of its game",
    )
    p.add_argument("--seed", type=int, default=0, metavar="N", help="the draws' seed (default 0)")
    add_config_option(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    config, _ = load(args)
    obj = read_json(args.source)
    if not isinstance(obj, dict):
        raise BattleError(f"expected a JSON object describing one battle, got {type(obj).__name__}")
    given = {k: obj.pop(k) for k in TOWER_KEYS if k in obj}
    if "emerged" in obj:
        raise BattleError("emerged: the odds are asked before the throw; leave it out")
    battle = battle_from_dict({**obj, "emerged": {}}, config.colours.farmer)
    inside, sticky = ({}, prior()) if args.data is None else _from_data(args.data)
    inside = counts("tower", given.get("tower", inside))
    if "keep" in given or "release" in given:
        sticky = Stickiness(
            _share("keep", given.get("keep", sticky.keep)),
            _share("release", given.get("release", sticky.release)),
            sticky.throws,
        )
    print_json(battle_odds(battle, inside, sticky, seed=args.seed).to_dict())
    return 0


def _from_data(data_dir: str) -> tuple[dict[str, int], Stickiness]:
    path = Path(data_dir) / FILE_NAME
    if not path.is_file():
        raise CompanionError(f"{data_dir}: no companion database here ({FILE_NAME})")
    store = Store(path)
    try:
        last = store.last_step()
        return dict(((last.ledger or {}) if last else {}).get("tower", {})), estimate(throws(store))
    finally:
        store.close()


def _share(key: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise BattleError(f"{key}: expected a share from 0 to 1, got {value!r}")
    return float(value)
