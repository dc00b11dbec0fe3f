"""Speech through espeak-ng: one queued sentence at a time, never blocking the caller.

espeak-ng runs as a subprocess from a worker thread, so the camera loop and web
requests only append to a queue. Without espeak-ng (or with speech disabled) the
Speaker stays silent and says so once in the log.
"""

from __future__ import annotations

import logging
import queue
import shutil
import subprocess
import threading
from pathlib import Path

from firmware.errors import FirmwareError

log = logging.getLogger(__name__)

ESPEAK = "espeak-ng"
# Sentences waiting beyond this are dropped oldest-first: a table that fell behind
# wants to hear what is happening now, not a backlog.
QUEUE_LIMIT = 8
# A sentence longer than this is cut off rather than hanging the worker.
SAY_TIMEOUT = 30.0


def espeak_path() -> str | None:
    return shutil.which(ESPEAK)


def _command(text: str, voice: str, words_per_minute: int) -> list[str]:
    # "--" keeps a sentence starting with "-" from being read as an option.
    return [ESPEAK, "-v", voice, "-s", str(words_per_minute), "--", text]


def render_wav(text: str, path: str | Path, voice: str = "en", words_per_minute: int = 160) -> Path:
    """Render `text` to a WAV file with espeak-ng; raise FirmwareError when it cannot."""
    if espeak_path() is None:
        raise FirmwareError(
            f"cannot render speech: {ESPEAK} is not installed "
            "(on Debian/Raspberry Pi OS: sudo apt install espeak-ng)"
        )
    path = Path(path)
    command = [ESPEAK, "-v", voice, "-s", str(words_per_minute), "-w", str(path), "--", text]
    result = subprocess.run(command, capture_output=True, text=True, timeout=SAY_TIMEOUT)
    if result.returncode != 0 or not path.exists():
        raise FirmwareError(
            f"{ESPEAK} failed to render {path}: {result.stderr.strip() or result.returncode}"
        )
    return path


class Speaker:
    """Says sentences one after another in a background thread.

    `muted` may be flipped at any time; a muted speaker drops what it is given.
    """

    def __init__(
        self, enabled: bool = True, voice: str = "en", words_per_minute: int = 160
    ) -> None:
        self.voice = voice
        self.words_per_minute = words_per_minute
        self.muted = False
        self.available = bool(enabled) and espeak_path() is not None
        if enabled and not self.available:
            log.warning(
                "speech off: %s not found (install espeak-ng to hear announcements)", ESPEAK
            )
        self._queue: queue.Queue[str | None] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def say(self, text: str) -> None:
        """Queue a sentence; returns at once."""
        if not self.available or self.muted or not text:
            return
        with self._lock:
            while self._queue.qsize() >= QUEUE_LIMIT:
                try:
                    self._queue.get_nowait()
                except queue.Empty:
                    break
            self._queue.put(text)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="speaker", daemon=True)
                self._thread.start()

    def close(self) -> None:
        with self._lock:
            thread, self._thread = self._thread, None
            if thread is not None:
                self._queue.put(None)
        if thread is not None:
            thread.join(timeout=SAY_TIMEOUT)

    def _run(self) -> None:
        while True:
            text = self._queue.get()
            if text is None:
                return
            if self.muted:
                continue
            try:
                result = subprocess.run(
                    _command(text, self.voice, self.words_per_minute),
                    capture_output=True,
                    text=True,
                    timeout=SAY_TIMEOUT,
                )
                if result.returncode != 0:
                    log.warning("%s failed: %s", ESPEAK, result.stderr.strip() or result.returncode)
            except (OSError, subprocess.TimeoutExpired) as e:
                log.warning("%s failed: %s", ESPEAK, e)
