"""Properties of every decision on random states of the Risk Europe board (hypothesis)."""

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from companion.rules import leave_behind
from companion.rules.actions import MOVES
from companion.rules.automaton import apply_action, decide
from companion.rules.board import load_map
from companion.rules.deck import CARDS, ORDERS
from companion.rules.dice import Dice
from companion.rules.state import StateError, from_dict
from companion.rules.threshold import may_attack
from companion.rules.units import SIEGE_ENGINE, minus, total

BOARD = load_map()
COLOURS = ("blue", "red", "yellow")
ALL_ORDERS = ORDERS + tuple(o for orders in CARDS.values() for o in orders if o not in ORDERS)

units = st.fixed_dictionaries(
    {},
    optional={
        "footman": st.integers(1, 6),
        "archer": st.integers(1, 2),
        "cavalry": st.integers(1, 3),
        "siege_engine": st.integers(1, 1),
    },
)
territory = st.fixed_dictionaries(
    {"units": st.dictionaries(st.sampled_from(COLOURS), units, min_size=1, max_size=2)},
    optional={"castle": st.booleans()},
)
states = st.fixed_dictionaries(
    {
        "players": st.fixed_dictionaries(
            {
                c: st.fixed_dictionaries(
                    {
                        "automaton": st.just(True),
                        "coins": st.integers(0, 25),
                        "crowns": st.integers(0, 6),
                    }
                )
                for c in COLOURS
            }
        ),
        "territories": st.dictionaries(st.sampled_from(BOARD.territories), territory, max_size=12),
    }
)


def build(data):
    try:
        return from_dict(data, board=BOARD)
    except StateError:  # over the box limits: not a state
        assume(False)


@settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(data=states, order=st.sampled_from(ALL_ORDERS), seed=st.integers(0, 1000))
def test_decisions_keep_the_card_rules(data, order, seed):
    state = build(data)
    for action in decide(state, "blue", order, Dice(seed)):
        d = action.details
        if action.action in MOVES:
            source, target = d["from"], d["to"]
            # never moves units out of a disputed territory
            assert not state.disputed(source)
            # never leaves fewer than required, and only moves units that are there
            assert total(d["left_behind"]) >= leave_behind.required(BOARD, source)
            assert minus(state.units(source, "blue"), d["units"]) == d["left_behind"]
            # never attacks below the threshold (nor a castle without a siege engine)
            if action.action != "maneuver":
                t = state.territory(target)
                assert may_attack(
                    total(d["units"]),
                    state.enemies(target, "blue"),
                    t.castle and "blue" not in t.units,
                    d["units"].get(SIEGE_ENGINE, 0),
                )
            else:
                assert "blue" in state.territory(target).units
        if action.action == "purchase":
            # never spends coins it does not have
            coins = state.player("blue").coins
            assert 0 <= d["spent"] <= coins and d["coins_left"] == coins - d["spent"]
        after = apply_action(state, action)
        assert after.player("blue").coins >= 0
        for colour in COLOURS:
            assert all(n >= 0 for n in after.supply(colour).values())
