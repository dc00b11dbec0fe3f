"""Physical dice (docs/rules.md section 4): an automaton decision that needs a roll asks the table,
replays the rolls it was given, keeps them across a restart, and undo takes one back."""

from __future__ import annotations

import pytest

from companion.config import load_config
from companion.rules import game as rules_game
from companion.rules.dice import Dice
from companion.service import turns
from companion.service.table import TableService
from companion.store import Store
from companion.web import create_app
from firmware.panel import make_panel
from tests.companion.service.test_game import PLAYERS, new_game

# With this seed the automaton's first decision is a tie: expand from Valencia or from Bulgaria.
TIE_SEED = 0


def physical(client, seed=TIE_SEED):
    r = client.post("/api/game", json={"seed": seed, "players": PLAYERS, "physical_dice": True})
    assert r.status_code == 201, r.get_json()
    assert client.post("/api/automaton/next", json={}).get_json()["status"] == "human"
    return client.post("/api/automaton/next", json={}).get_json()


def test_a_tie_asks_the_table_and_the_roll_decides(client):
    turn = physical(client)
    assert turn["status"] == "needs_roll" and turn["player"] == "blue"
    assert turn["roll"]["sides"] == 2 and turn["roll"]["reason"].startswith(
        "expand: tie between targets (1 "
    )
    assert (
        turn["text"].startswith("Roll a die for Blue, expand: tie")
        and "enter 1 to 2" in turn["text"]
    )
    state = client.get("/api/state").get_json()
    assert state["physical_dice"] is True and state["automaton"]["status"] == "needs_roll"
    assert state["events"][-1]["text"] == turn["text"]  # said and shown as one sentence
    # Nothing else goes on while the die is wanted.
    for url in ("/api/automaton/next", "/api/automaton/confirm"):
        r = client.post(url, json={})
        assert r.status_code == 409 and "die roll" in r.get_json()["error"]
    r = client.post("/api/automaton/roll", json={"value": 2}).get_json()
    assert r["status"] == "waiting" and r["rolls"] == [2]
    assert r["table_rolls"] == [{"die": 2, "value": 2, "reason": "expand: tie between targets"}]
    first, second = turn["roll"]["reason"].split("(1 ")[1].rstrip(")").split(", 2 ")
    expand = [a for a in r["actions"] if a["action"] == "expand"][0]
    assert f"{expand['from']} to {expand['to']}" == second  # 2 picked the second option
    assert (
        client.get("/api/state").get_json()["events"][-1]["text"]
        == f"Rolled 2 at the table. {r['text']}"
    )
    # A roll now is not wanted; the confirmed step says which dice the table rolled.
    assert client.post("/api/automaton/roll", json={"value": 1}).status_code == 409
    client.post("/api/automaton/confirm", json={})
    step = client.get("/api/state").get_json()["history"][-1]
    assert step["text"] == f"Confirmed: {r['text']} Dice rolled at the table: 2 (d2)."


@pytest.mark.parametrize(
    "body, message",
    [
        ({"value": 3}, "from 1 to 2"),
        ({"value": 0}, "from 1 to 2"),
        ({"value": "1"}, "from 1 to 2"),
        ({"value": True}, "from 1 to 2"),
        ({"value": 1.5}, "from 1 to 2"),
        ({}, "missing key 'value'"),
        ({"value": 1, "die": 6}, "unknown key 'die'"),
        ("[1", "not valid JSON"),
        ("[1]", "expected a JSON object"),
    ],
)
def test_bad_roll_values_are_refused_and_change_nothing(client, body, message):
    physical(client)
    before = client.get("/api/state").get_json()["automaton"]
    r = client.post(
        "/api/automaton/roll",
        **(
            {"data": body, "content_type": "application/json"}
            if isinstance(body, str)
            else {"json": body}
        ),
    )
    assert r.status_code == 400 and message in r.get_json()["error"]
    assert client.get("/api/state").get_json()["automaton"] == before


def test_no_roll_is_wanted_without_physical_dice(client):
    assert client.post("/api/automaton/roll", json={"value": 1}).status_code == 409  # no game
    new_game(client, seed=TIE_SEED)
    client.post("/api/automaton/next", json={})
    assert client.post("/api/automaton/next", json={}).get_json()["status"] == "waiting"
    r = client.post("/api/automaton/roll", json={"value": 1})
    assert r.status_code == 409 and "no die roll is wanted" in r.get_json()["error"]


def test_the_tables_rolls_give_the_decision_seeded_dice_give_for_the_same_values(client, service):
    physical(client)
    game, steps = service.game, service.store.step_count()
    decisions = set()
    for seed in range(4):
        # What seeded dice decide, and the values they rolled: the table rolls the same values.
        dice = Dice(seed)
        _, seeded = rules_game.take_turn(game, "blue", 0, dice)
        values = [r.value for r in dice.log]
        for value in values:
            table = client.post("/api/automaton/roll", json={"value": value}).get_json()
        assert table["status"] == "waiting" and table["rolls"] == values
        assert table["actions"] == [a.to_dict() for a in seeded]
        decisions.add(table["text"])
        for _ in values:  # undo takes the rolls back, one by one, for the next try
            assert client.post("/api/undo", json={}).status_code == 200
    assert len(decisions) == 2  # both faces were rolled, and each gave its own decision
    assert (
        service.store.step_count() == steps
    )  # the rolls are kept with the open turn, not as steps


def test_a_restart_keeps_the_rolls_the_table_gave(config, store, client, service):
    turn = physical(client)
    client.post("/api/automaton/roll", json={"value": 1})
    decided = client.get("/api/state").get_json()["automaton"]
    service.stop()
    store.close()
    again_store = Store.in_dir(config.data_dir)
    again = TableService(config, again_store, None)
    try:
        app = create_app(again, config, "127.0.0.1")
        c = app.test_client()
        state = c.get("/api/state").get_json()
        assert state["automaton"] == decided and state["physical_dice"] is True
        # Undo takes the roll back: the same question again, then another answer.
        r = c.post("/api/undo", json={})
        assert r.status_code == 200 and r.get_json()["text"] == "Undone: the roll of 1."
        state = c.get("/api/state").get_json()
        assert (
            state["automaton"]["status"] == "needs_roll"
            and state["automaton"]["text"] == turn["text"]
        )
        assert state["automaton"]["rolls"] == [] and state["can_undo"] is True
        assert c.post("/api/automaton/roll", json={"value": 2}).get_json()["rolls"] == [2]
        c.post("/api/automaton/confirm", json={})
        # Undo goes on past the rolls, step by step, back to the new game.
        while c.post("/api/undo", json={}).status_code == 200:
            pass
        state = c.get("/api/state").get_json()
        assert state["history"][-1]["kind"] == "new_game" and state["physical_dice"] is True
    finally:
        again.stop()
        again_store.close()


def test_physical_dice_from_the_configuration_and_the_attention_led(tmp_path):
    config, _ = load_config(
        None,
        {
            "data_dir": str(tmp_path),
            "speech.enabled": False,
            "panel.mode": "off",
            "game.physical_dice": True,
        },
    )
    store = Store.in_dir(config.data_dir)
    panel = make_panel("mock", config.panel.pins, long_press=0.2)
    service = TableService(config, store, None, panel=panel)
    try:
        service.new_game({"seed": TIE_SEED, "players": PLAYERS})
        service.automaton_next()
        assert service.automaton_next()["status"] == turns.NEEDS_ROLL
        assert panel.phase == "attention" and panel.led_modes()["attention"] == "blink"
        service.automaton_roll(1)
        assert panel.phase == "attention"  # now the pieces to move
        service.automaton_confirm()
        assert panel.phase == "idle"
        # A game may say otherwise.
        service.new_game({"seed": TIE_SEED, "players": PLAYERS, "physical_dice": False})
        service.automaton_next()
        assert service.automaton_next()["status"] == turns.WAITING
        with pytest.raises(turns.GameInputError, match="physical_dice: expected true or false"):
            service.new_game({"seed": 0, "players": PLAYERS, "physical_dice": "yes"})
    finally:
        service.stop()
        panel.close()
        store.close()


def test_each_roll_past_the_tables_asks_again_naming_the_faces():
    dice = turns.table_dice([3])
    assert dice.roll("siege assault") == 3
    with pytest.raises(turns.RollNeeded) as asked:
        dice.choose(["Saxony", "Bohemia"], "expand: tie between targets")
    assert (asked.value.sides, asked.value.reason) == (
        2,
        "expand: tie between targets (1 Saxony, 2 Bohemia)",
    )
    # Replayed with one more roll, the same dice go one step further: the value picks its face.
    dice = turns.table_dice([3, 2])
    dice.roll("siege assault")
    assert dice.choose(["Saxony", "Bohemia"], "expand: tie between targets") == "Bohemia"
    assert [r.to_dict() for r in dice.log][-1] == {
        "die": 2,
        "value": 2,
        "reason": "expand: tie between targets",
    }
