"""Speech: a WAV rendered by the real espeak-ng; the Speaker never blocks its caller."""

from __future__ import annotations

import logging
import threading
import wave

import pytest

from firmware import speech
from firmware.errors import FirmwareError
from firmware.speech import Speaker, render_wav


def test_espeak_renders_an_announcement_to_a_wav_file(tmp_path):
    if speech.espeak_path() is None:
        pytest.skip("espeak-ng is not installed (apt install espeak-ng); CI installs it")
    path = render_wav("Battle 1 confirmed: red holds, 5 against 3.", tmp_path / "a.wav")
    with wave.open(str(path)) as w:
        seconds = w.getnframes() / w.getframerate()
        assert w.getnchannels() == 1
    assert 1.0 < seconds < 10.0  # a spoken sentence, not silence or a click


def test_without_espeak_speech_is_off_with_a_log_line(monkeypatch, caplog, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    with caplog.at_level(logging.WARNING, logger="firmware.speech"):
        speaker = Speaker(enabled=True)
    assert not speaker.available
    assert "speech off: espeak-ng not found" in caplog.text
    speaker.say("nobody hears this")  # no error, no thread
    with pytest.raises(FirmwareError, match="espeak-ng is not installed"):
        render_wav("x", tmp_path / "x.wav")


def test_say_returns_while_espeak_is_still_speaking(monkeypatch):
    if speech.espeak_path() is None:
        pytest.skip("espeak-ng is not installed")
    release = threading.Event()
    spoken = []

    def slow_run(command, **kwargs):
        release.wait(10)  # espeak "speaking" until the test lets it finish
        spoken.append(command[-1])
        return speech.subprocess.CompletedProcess(command, 0, "", "")

    monkeypatch.setattr(speech.subprocess, "run", slow_run)
    speaker = Speaker()
    speaker.say("first")
    speaker.say("second")  # both calls returned although the first is not finished
    assert spoken == []
    release.set()
    speaker.close()
    assert spoken == ["first", "second"]


def test_a_muted_speaker_says_nothing(monkeypatch):
    if speech.espeak_path() is None:
        pytest.skip("espeak-ng is not installed")
    calls = []
    monkeypatch.setattr(speech.subprocess, "run", lambda command, **kw: calls.append(command))
    speaker = Speaker()
    speaker.muted = True
    speaker.say("quiet please")
    speaker.close()
    assert calls == []
