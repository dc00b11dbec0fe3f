"""What the table sees and hears: SSE replay, the panel's LEDs and buttons, a refused database."""

from __future__ import annotations

import json
import threading
import time

import pytest

from companion.cli import main
from companion.service import phases
from companion.service.table import TableService
from companion.store import FILE_NAME
from firmware import speech
from firmware.panel import make_panel
from firmware.speech import Speaker

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


def test_the_arm_button_answers_with_what_to_throw_or_why_not(config, store, monkeypatch):
    if speech.espeak_path() is None:
        pytest.skip("espeak-ng is not installed (apt install espeak-ng); CI installs it")
    spoken = []

    def run(command, **kwargs):
        spoken.append(command[-1])
        return speech.subprocess.CompletedProcess(command, 0, "", "")

    monkeypatch.setattr(speech.subprocess, "run", run)
    panel = make_panel("mock", config.panel.pins, long_press=0.2)
    speaker = Speaker()
    try:
        service = TableService(config, store, None, panel=panel, speaker=speaker)
        panel.press("arm")
        service.declare_battle(SEED_1)
        panel.press("arm")
        service.battle = phases.moving(service.battle)  # the camera saw the throw
        panel.press("arm")
        speaker.close()
    finally:
        panel.close()
    assert "declare the battle on the page first" in spoken[0]
    assert (
        spoken[2] == spoken[1] and "Throw 4 blue and 3 red" in spoken[1]
    )  # the declaration, said again
    assert spoken[3:] == ["battle 1 is thrown already: confirm, recount or cancel it"]


def test_serve_refuses_a_foreign_database_and_keeps_it(tmp_path, capsys):
    data = tmp_path / "data"
    data.mkdir()
    (data / FILE_NAME).write_text("not a database")
    assert main(["serve", "--demo", "--data", str(data), "--port", "8089"]) == 2
    err = capsys.readouterr().err
    assert (
        err.startswith("companion serve: error: ")
        and "not an SQLite file" in err
        and "--data" in err
    )
    assert (data / FILE_NAME).read_text() == "not a database"


class FlakyCamera:
    """A test double of a FrameSource (firmware.camera's protocol): frames, then a loss, then
    frames."""

    name = "flaky"

    def __init__(self, script):
        import numpy as np

        self.script = list(script)
        self.image = np.zeros((48, 64, 3), np.uint8)
        self.index = 0
        self.done = threading.Event()  # the script has been played
        self.closed = threading.Event()

    def read(self, timeout=3.0):
        from firmware.camera import CameraLost, Frame

        if not self.script:
            self.done.set()
            self.closed.wait()  # silent until the service stops
            raise CameraLost("flaky: closed")
        step = self.script.pop(0)
        if step == "lost":
            raise CameraLost("camera lost: flaky unplugged")
        self.index += 1
        return Frame(self.image, float(self.index), self.index)

    def close(self):
        self.closed.set()


def test_a_lost_camera_is_announced_once_and_its_return_too(config, store):
    panel = make_panel("mock", config.panel.pins)
    camera = FlakyCamera(["frame", "frame", "lost", "lost", "lost", "frame", "frame"])
    service = TableService(config, store, camera, panel=panel)
    phases_seen = []
    service.bus.add_listener(lambda e: phases_seen.append(panel.phase))
    try:
        service.start()
        assert camera.done.wait(10)
        texts = [e.text for e in service.bus.recent(5) if e.kind == "camera"]
        assert texts == [
            "Camera lost: flaky unplugged. Counting resumes when it is back.",
            "Camera back; watching the tray.",
        ]
        assert phases_seen == ["camera_lost", "idle"]
        assert [e["kind"] for e in store.events()] == ["camera", "camera"]
    finally:
        service.stop()
        panel.close()


def _service_on_simulated_tray(tmp_path, settings=None):
    """A TableService on seed 1's non-realtime simulated tray, calibrated from its own clicks."""
    from calibration import build_profile
    from companion.config import load_config
    from companion.store import Store
    from firmware.simtray import SimulatedTray

    config, _ = load_config(
        None, {"data_dir": str(tmp_path), "speech.enabled": False, **(settings or {})}
    )
    tray = SimulatedTray(seed=1, realtime=False)
    corners, samples = tray.calibration_clicks()
    profile, _ = build_profile(tray.read().image, corners, samples)
    tray.clear()
    store = Store.in_dir(tmp_path)
    return tray, store, TableService(config, store, tray, profile=profile)


def test_camera_loop_counts_a_simulated_drop_and_auto_confirms(tmp_path):
    """In-process: the camera thread on a (non-realtime) simulated tray, the real settle detector
    and counter; with game.auto_confirm a clear count is applied without a press."""
    tray, store, service = _service_on_simulated_tray(tmp_path, {"game.auto_confirm": True})
    applied = threading.Event()
    truth = {}
    # Called in the camera thread as each event is published: what the tray held when counted.
    service.bus.add_listener(lambda e: e.kind == "battle_counted" and truth.update(tray.contents()))
    service.bus.add_listener(lambda e: e.kind == "battle_applied" and applied.set())
    try:
        # Declared before the camera starts, so the drop begins on the first frame (deterministic).
        service.declare_battle(
            {"attacker": "red", "defender": "blue", "thrown": {"red": 3, "blue": 2}}
        )
        service.start()
        assert applied.wait(30), [e.text for e in service.bus.recent(5)]
        record = service.get_battle(1)
        assert record.status == "applied" and not record.corrected
        assert record.emerged == truth
        kinds = [e.kind for e in service.bus.recent(10) if e.kind.startswith("battle")]
        assert kinds == ["battle_declared", "battle_moving", "battle_counted", "battle_applied"]
        assert store.battle_image(1)[:2] == b"\xff\xd8"  # the annotated JPEG of the count
    finally:
        service.stop()
        store.close()


def test_a_cube_that_trickles_out_late_is_counted_before_the_confirmation(tmp_path):
    """The settle detector reports the tray still, then a late cube lands: the count follows."""
    tray, store, service = _service_on_simulated_tray(tmp_path)
    counts = []
    service.bus.add_listener(
        lambda e: (
            e.kind == "battle_counted"
            and counts.append(
                (e.data["battle"]["emerged"], {c: n for c, n in tray.at_rest().items() if n})
            )
        )
    )
    try:
        # On seed 1's table this throw comes out in two bursts: 6 red, a pause, then 1 more.
        service.declare_battle({"attacker": "red", "defender": None, "thrown": {"red": 8}})
        service.start()
        deadline = time.monotonic() + 30
        while (tray.dropping() or not counts) and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(1.0)
        assert len(counts) == 2 and counts[0][0] != counts[1][0]
        assert all(
            emerged == at_rest for emerged, at_rest in counts
        )  # each count is of a still tray
        assert service.battle.status == "counted"
        assert service.battle.emerged == {c: n for c, n in tray.contents().items() if n}
    finally:
        service.stop()
        store.close()
