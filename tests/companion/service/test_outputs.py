"""What the table sees and hears: SSE replay, the panel's LEDs and buttons, a refused database."""
from __future__ import annotations

import json

from companion.cli import main
from companion.service.table import TableService
from companion.store import FILE_NAME
from firmware.panel import make_panel

SEED_1 = {"attacker": "blue", "defender": "red", "thrown": {"blue": 4, "red": 3}}


def read_events(response, n):
    """The first `n` SSE messages of a streamed response, as dicts."""
    events, buffer = [], ""
    for chunk in response.response:
        buffer += chunk.decode() if isinstance(chunk, bytes) else chunk
        while "\n\n" in buffer:
            message, buffer = buffer.split("\n\n", 1)
            data = [line[6:] for line in message.splitlines() if line.startswith("data: ")]
            if data:
                events.append(json.loads("\n".join(data)))
        if len(events) >= n:
            break
    response.close()
    return events


def test_a_reconnecting_page_gets_the_events_it_missed(client, service):
    service.declare_battle(SEED_1)
    service.cancel(1)
    first = service.bus.recent(2)[0].id
    response = client.get("/events", headers={"Last-Event-ID": str(first - 1)}, buffered=False)
    assert response.mimetype == "text/event-stream"
    events = read_events(response, 2)
    assert [e["kind"] for e in events] == ["battle_declared", "battle_cancelled"]
    assert events[1]["text"] == "Battle 1 cancelled; nothing was changed."


def test_the_panel_mirrors_the_battle_and_its_buttons_act(config, store):
    panel = make_panel("mock", config.panel.pins, long_press=0.2)
    try:
        service = TableService(config, store, None, panel=panel)
        assert panel.phase == "idle"
        service.declare_battle(SEED_1)
        assert panel.phase == "armed" and panel.led_modes()["ready"] == "blink"
        panel.press("confirm")  # no count yet: refused, nothing applied
        assert service.battle.status == "waiting_for_throw"
        service.confirm(1, {"blue": 3, "red": 4, "green": 1})
        assert panel.phase == "idle" and panel.leds()["held"] and not panel.leds()["attacker_won"]
        panel.press("recount", long=True)  # long press: undo
        assert service.get_battle(1).status == "undone"
    finally:
        panel.close()


def test_serve_refuses_a_foreign_database_and_keeps_it(tmp_path, capsys):
    data = tmp_path / "data"
    data.mkdir()
    (data / FILE_NAME).write_text("not a database")
    assert main(["serve", "--demo", "--data", str(data), "--port", "8089"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("companion serve: error: ") and "not an SQLite file" in err and "--data" in err
    assert (data / FILE_NAME).read_text() == "not a database"
