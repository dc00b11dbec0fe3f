"""The real server (waitress in a subprocess of `companion serve --demo`) on the simulated tray."""

from __future__ import annotations

import time

import pytest

from companion.benchmarks.service import ServerProcess, run_load

pytestmark = pytest.mark.slow

SEED_BATTLE = {
    "attacker": "blue",
    "defender": "red",
    "revolt_markers": 0,
    "thrown": {"blue": 4, "red": 3},
}


def counted(state):
    return state["battle"] is not None and state["battle"]["status"] == "counted"


def test_a_declared_battle_is_dropped_counted_confirmed_and_stored(tmp_path):
    with ServerProcess(tmp_path / "data") as server:
        status, battle = server.post("/api/battles", SEED_BATTLE)
        assert status == 201
        assert battle["status"] == "waiting_for_throw" and battle["into_tower"] == {
            "blue": 4,
            "red": 3,
        }
        # The camera's count becomes what the simulated tray really holds (a cube that trickles
        # out late is counted again when the tray is still again).
        state = server.wait_for(
            lambda s: (
                counted(s)
                and s["battle"]["emerged"] == {c: n for c, n in s["simulated_tray"].items() if n}
            ),
            what="the drop to be counted right",
        )
        record = state["battle"]
        assert record["outcome"]["result"] in ("held", "devastated", "conquered")
        status, applied = server.post(f"/api/battles/{battle['id']}/confirm")
        assert status == 200 and applied["status"] == "applied"
        state = server.get("/api/state")[1]
        ledger = state["ledger"]
        outcome = applied["outcome"]
        # Every cube is accounted for: what emerged went to the supply, the province or the cup.
        assert ledger["cup"] == outcome["cup_after"]
        assert ledger["board"] == {c: n for c, n in outcome["to_province"].items()}
        assert state["history"][-1]["kind"] == "battle"
        emerged = applied["emerged"]
        tower = {
            c: 4 * (c == "blue") + 3 * (c == "red") - emerged.get(c, 0)
            for c in set(emerged) | {"blue", "red"}
        }
        assert ledger["tower"] == {c: n for c, n in sorted(tower.items()) if n}
        # A quiet table writes nothing, although the camera keeps watching the tray.
        files = sorted((tmp_path / "data").glob("companion.sqlite3*"))
        before = [(f.name, f.stat().st_size, f.stat().st_mtime_ns) for f in files]
        assert server.get("/api/state")[1]["camera"]["status"] == "ok"
        time.sleep(1.5)
        assert [(f.name, f.stat().st_size, f.stat().st_mtime_ns) for f in files] == before
    # After a clean stop the same data directory starts where it was.
    with ServerProcess(tmp_path / "data") as server:
        state = server.get("/api/state")[1]
        assert state["ledger"] == ledger and state["phase"] == "idle"
        assert server.get(f"/api/battles/{battle['id']}")[1]["status"] == "applied"


def test_sigkill_at_each_phase_of_a_battle_loses_nothing_confirmed(tmp_path):
    data = tmp_path / "data"
    # Phase 1: killed right after the declaration was acknowledged (waiting for the throw).
    with ServerProcess(data) as server:
        status, first = server.post("/api/battles", SEED_BATTLE)
        assert status == 201
        server.kill()
    # Restarted: the same battle is open and, the simulated tray having been dropped again, counted.
    with ServerProcess(data) as server:
        state = server.wait_for(counted, what="the resumed battle to be counted")
        assert state["battle"]["id"] == first["id"]
        counted_record = state["battle"]
        server.kill()
    # Phase 3: killed while counted, waiting for confirmation: the count and outcome are kept.
    with ServerProcess(data) as server:
        state = server.get("/api/state")[1]
        assert state["battle"]["status"] == "counted"
        assert state["battle"]["emerged"] == counted_record["emerged"]
        assert state["battle"]["outcome"] == counted_record["outcome"]
        status, applied = server.post(f"/api/battles/{first['id']}/confirm")
        assert status == 200
        ledger = server.get("/api/state")[1]["ledger"]
        server.kill()
    # Phase 4: killed right after the confirmation was acknowledged: the step is intact.
    with ServerProcess(data) as server:
        state = server.get("/api/state")[1]
        assert state["phase"] == "idle" and state["ledger"] == ledger
        assert state["history"][-1]["kind"] == "battle"
        # Phase 2: killed while the cubes are falling.
        status, second = server.post(
            "/api/battles", {"attacker": "red", "defender": None, "thrown": {"red": 3}}
        )
        server.wait_for(
            lambda s: s["battle"]["status"] in ("moving", "counted"), what="cubes moving"
        )
        server.kill()
    with ServerProcess(data) as server:
        state = server.get("/api/state")[1]
        assert state["battle"]["id"] == second["id"] and state["ledger"] == ledger
        state = server.wait_for(counted, what="the second battle to be counted after the restart")
        # Cancelled, then killed: the cancellation is kept and nothing was applied.
        assert server.post(f"/api/battles/{second['id']}/cancel")[0] == 200
        server.kill()
    with ServerProcess(data) as server:
        state = server.get("/api/state")[1]
        assert state["phase"] == "idle" and state["ledger"] == ledger
        assert server.get(f"/api/battles/{second['id']}")[1]["status"] == "cancelled"
        # Undo after the restarts takes back the confirmed battle, to the start of the game.
        assert server.post("/api/undo")[0] == 200
        assert server.get(f"/api/battles/{first['id']}")[1]["status"] == "undone"
        assert server.post("/api/undo")[0] == 409


def test_load_twenty_event_clients_and_five_streams_miss_nothing(tmp_path):
    with ServerProcess(tmp_path / "data") as server:
        result = run_load(server, sse_clients=20, mjpeg_clients=5, battles=10)
        assert len(result.published) >= 10 * 3  # declared, counted, applied (and moving) per battle
        for client in result.events:
            ids = [e["id"] for e in client]
            assert ids == result.published  # every event, once, in order
        assert all(n > 0 for n in result.mjpeg_frames)
        state = server.get("/api/state")[1]
        assert [s["kind"] for s in state["history"]].count("battle") == 10


def test_sigkill_at_each_phase_of_an_automaton_turn(tmp_path):
    data = tmp_path / "data"
    players = [{"colour": "red", "automaton": False}, {"colour": "blue", "automaton": True}]
    with ServerProcess(data) as server:
        assert server.post("/api/game", {"seed": 3, "players": players})[0] == 201
        assert server.post("/api/automaton/next")[1]["status"] == "human"
        decision = server.post("/api/automaton/next")[1]
        assert decision["status"] == "waiting"
        server.kill()
    # Killed while the decision waits for the table: shown again, same words, nothing applied.
    with ServerProcess(data) as server:
        state = server.get("/api/state")[1]
        assert (
            state["automaton"]["status"] == "waiting"
            and state["automaton"]["text"] == decision["text"]
        )
        assert state["history"][-1]["kind"] == "round"
        assert server.post("/api/automaton/confirm")[0] == 200
        confirmed = server.get("/api/state")[1]
        server.kill()
    # Killed right after the confirmation: the step is intact.
    with ServerProcess(data) as server:
        state = server.get("/api/state")[1]
        assert state["game"] == confirmed["game"] and state["ledger"] == confirmed["ledger"]
        assert (
            state["history"][-1]["kind"] == "automaton" and state["automaton"]["status"] == "done"
        )
        while True:  # on to the round's battles, which the service declares itself
            step = server.post("/api/automaton/next")[1]
            if step["status"] == "waiting":
                server.post("/api/automaton/confirm")
            if step["status"] == "battles":
                break
        battle = server.get("/api/state")[1]["battle"]
        assert battle["origin"] == "automaton"
        server.kill()
    # Killed with the automaton's battle waiting for its throw: resumed, dropped, counted, applied.
    with ServerProcess(data) as server:
        state = server.wait_for(
            counted, what="the automaton's battle to be counted after a restart"
        )
        assert state["battle"]["id"] == battle["id"] and state["automaton"]["status"] == "battles"
        status, applied = server.post(f"/api/battles/{battle['id']}/confirm")
        assert status == 200
        state = server.get("/api/state")[1]
        assert "attacker" not in state["game"]["territories"].get(battle["territory"], {})
        server.kill()
    with ServerProcess(data) as server:
        state = server.get("/api/state")[1]
        assert server.get(f"/api/battles/{battle['id']}")[1]["status"] == "applied"
        assert state["history"][-1]["kind"] in ("battle", "round_end")
