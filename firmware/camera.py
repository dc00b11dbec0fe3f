"""Frame sources: one small interface over the Pi camera, USB cameras, files and the simulated tray.

Everything downstream (settle detection, counting, the MJPEG stream) reads `Frame`s from a
`FrameSource` and never learns which device is behind it.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np

from firmware.errors import FirmwareError

log = logging.getLogger(__name__)


class CameraLost(FirmwareError):
    """The source delivered no frame: unplugged, crashed, or silent past the timeout."""


class FrameTimeout(CameraLost):
    """No frame arrived within the read's timeout (the device may still be there)."""


class EndOfStream(CameraLost):
    """A video file or image folder has no more frames (and is not looping).

    A subclass of CameraLost so a reader that only knows CameraLost stops too; the
    retrying wrapper never retries it.
    """


@dataclass(frozen=True)
class Frame:
    image: np.ndarray  # BGR uint8, height x width x 3
    timestamp: float  # seconds; monotonic clock for live cameras, media time for files
    index: int  # 0, 1, 2 ... in the order this source delivered them

    @property
    def size(self) -> tuple[int, int]:
        """(width, height), the order OpenCV and the configuration use."""
        return self.image.shape[1], self.image.shape[0]


@runtime_checkable
class FrameSource(Protocol):
    name: str

    def read(self, timeout: float = 3.0) -> Frame:
        """The next frame; raises CameraLost if none arrives within `timeout` seconds."""

    def close(self) -> None:
        """Release the device. Safe to call twice."""


class SourceBase:
    """Shared conveniences: iteration until the end of the stream, and `with`."""

    name = "source"

    def read(self, timeout: float = 3.0) -> Frame:  # pragma: no cover - overridden
        raise NotImplementedError

    def close(self) -> None:
        pass

    def __iter__(self) -> Iterator[Frame]:
        while True:
            try:
                yield self.read()
            except EndOfStream:
                return

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


class LiveSource(SourceBase):
    """A camera read on its own thread, so `read(timeout)` can give up on a silent device.

    Subclasses implement `_grab()` (blocking; returns one BGR image or raises) and
    `_release()`. Only the newest frame is kept: a slow reader sees the present, not a backlog.
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self._cond = threading.Condition()
        self._image: np.ndarray | None = None
        self._stamp = 0.0
        self._seq = 0  # frames grabbed
        self._taken = 0  # last sequence number handed out
        self._index = 0
        self._error: BaseException | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=f"grab-{self.name}", daemon=True)
        self._thread.start()

    def _grab(self) -> np.ndarray:  # pragma: no cover - overridden
        raise NotImplementedError

    def _release(self) -> None:  # pragma: no cover - overridden
        pass

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                image = self._grab()
            except Exception as e:  # any device fault ends this thread; read() reports it
                with self._cond:
                    self._error = e
                    self._cond.notify_all()
                return
            with self._cond:
                self._image, self._stamp = image, time.monotonic()
                self._seq += 1
                self._cond.notify_all()

    def read(self, timeout: float = 3.0) -> Frame:
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._seq == self._taken:
                if self._error is not None:
                    raise CameraLost(f"{self.name}: {self._error}") from None
                if self._stop.is_set():
                    raise CameraLost(f"{self.name}: closed")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise FrameTimeout(f"{self.name}: no frame for {timeout:g} s")
                self._cond.wait(left)
            self._taken = self._seq
            frame = Frame(self._image, self._stamp, self._index)
            self._index += 1
            return frame

    def close(self) -> None:
        if self._stop.is_set():
            return
        self._stop.set()
        with self._cond:
            self._cond.notify_all()
        # A healthy grab ends within a frame; a stuck one only ends when the device is
        # released under it, so release after a short wait either way.
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=0.5)
        self._release()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=1.0)


def open_source(
    spec: str,
    width: int = 640,
    height: int = 480,
    fps: int = 15,
    loop: bool = False,
    *,
    realtime: bool = False,
    controls: dict | None = None,
    retry: bool = True,
    seed: int | None = None,
) -> FrameSource:
    """Open a frame source by its configuration name.

    spec: "auto" (Pi camera, else the first USB camera, else the simulated tray; the choice
    is logged), "picamera", "usb:N", "sim", or a path to a video file or a folder of images.
    width/height/fps apply to cameras and the simulated tray; files keep their recorded size.
    loop: files and folders start again at the end instead of raising EndOfStream.
    realtime: files and folders are paced at their frame rate (for a live-looking demo) instead
    of delivered as fast as they are read.
    controls: locked Pi camera exposure/gains (and lens position) from a calibration profile,
    re-applied at start.
    retry: live cameras are wrapped so a lost camera is reopened with backoff.
    seed: the simulated tray's random seed.
    """
    spec = spec.strip()
    if spec == "auto":
        return _open_auto(width, height, fps, controls=controls, retry=retry, seed=seed)
    if spec == "sim":
        from firmware.simtray import SimulatedTray

        return SimulatedTray(width=width, height=height, fps=fps, seed=seed)
    if spec == "picamera":
        return _picamera(width, height, fps, controls, retry)
    if spec.startswith("usb:"):
        number = spec[4:]
        if not number.isdigit():
            raise FirmwareError(
                f"camera source {spec!r}: expected usb:N with N a camera number, e.g. usb:0"
            )
        from firmware.usbcam import UsbCamera

        return _live(lambda: UsbCamera(int(number), width, height, fps), retry)
    path = Path(spec).expanduser()
    if not path.exists():
        raise FirmwareError(
            f"camera source {spec!r}: no such file or folder "
            f"(expected auto, picamera, usb:N, sim, a video file or an image folder)"
        )
    from firmware.files import ImageFolderSource, VideoFileSource

    if path.is_dir():
        return ImageFolderSource(path, fps=fps, loop=loop, realtime=realtime)
    return VideoFileSource(path, fps=fps, loop=loop, realtime=realtime)


def _live(opener: Callable[[], FrameSource], retry: bool) -> FrameSource:
    """Open now (so a missing camera is a clear error at start); retry later losses."""
    source = opener()
    if not retry:
        return source
    from firmware.retry import RetryingSource

    return RetryingSource(opener, first=source)


def _picamera(width: int, height: int, fps: int, controls: dict | None, retry: bool) -> FrameSource:
    from firmware.picam import PiCameraSource

    first = PiCameraSource(width, height, fps, controls=controls)
    if not retry:
        return first
    from firmware.retry import RetryingSource

    def reopen() -> FrameSource:
        # Back with the exposure it had (the calibration's, or the last relock's), not a new one.
        return PiCameraSource(width, height, fps, controls=source.controls)

    source = RetryingSource(reopen, first=first)
    return source


def _open_auto(
    width: int, height: int, fps: int, *, controls: dict | None, retry: bool, seed: int | None
) -> FrameSource:
    from firmware.picam import camera_count

    if camera_count() > 0:
        log.info("camera source auto: using the Pi camera")
        return _picamera(width, height, fps, controls, retry)
    number = first_usb_camera()
    if number is not None:
        from firmware.usbcam import UsbCamera

        log.info("camera source auto: no Pi camera; using USB camera %d", number)
        return _live(lambda: UsbCamera(number, width, height, fps), retry)
    from firmware.simtray import SimulatedTray

    log.warning(
        "camera source auto: no Pi camera and no USB camera found; using the simulated tray"
    )
    return SimulatedTray(width=width, height=height, fps=fps, seed=seed)


def first_usb_camera() -> int | None:
    """The number N of the first USB /dev/videoN that delivers a frame, or None.

    Only USB devices are probed (sysfs says which): on a Pi, /dev/video* also holds the
    codec and ISP nodes, which are no cameras. Opening a missing index makes OpenCV print
    warnings, so only devices that exist are tried.
    """
    from firmware.usbcam import probe

    for number in usb_video_devices():
        if probe(number):
            return number
    return None


def usb_video_devices(sysfs: Path = Path("/sys/class/video4linux")) -> list[int]:
    numbers = []
    for node in sorted(sysfs.glob("video*")) if sysfs.is_dir() else []:
        if node.name[5:].isdigit() and "/usb" in os.path.realpath(node):
            numbers.append(int(node.name[5:]))
    return sorted(numbers)
