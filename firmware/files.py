"""Recorded frames: a video file or a folder of images, read through OpenCV.

Timestamps are media time (frame number / frame rate), so a recording gives the same
settle times however fast it is read.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import cv2
import numpy as np

from firmware.camera import CameraLost, EndOfStream, Frame, SourceBase
from firmware.errors import FirmwareError

IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp", ".ppm", ".pgm"}


def _natural_key(path: Path) -> list:
    # frame2 before frame10, as a person numbering files expects.
    return [int(part) if part.isdigit() else part.lower() for part in re.split(r"(\d+)", path.name)]


class _Recorded(SourceBase):
    def __init__(self, name: str, fps: float, loop: bool, realtime: bool) -> None:
        self.name = name
        self.fps = fps
        self.loop = loop
        self.realtime = realtime
        self._index = 0
        self._started: float | None = None

    def _stamp(self, image: np.ndarray) -> Frame:
        frame = Frame(image, self._index / self.fps, self._index)
        self._index += 1
        if self.realtime:
            # Deliver no earlier than the frame's media time after the first read.
            now = time.monotonic()
            if self._started is None:
                self._started = now - frame.timestamp
            wait = self._started + frame.timestamp - now
            if wait > 0:
                time.sleep(wait)
        return frame


class VideoFileSource(_Recorded):
    """A video file; `fps` is used only when the file does not say its own frame rate."""

    def __init__(
        self, path: str | Path, fps: float = 15, loop: bool = False, realtime: bool = False
    ) -> None:
        self.path = Path(path)
        self._capture = self._open()
        own = self._capture.get(cv2.CAP_PROP_FPS)
        super().__init__(str(self.path), own if 0 < own < 1000 else fps, loop, realtime)
        self._delivered_this_pass = 0

    def _open(self) -> cv2.VideoCapture:
        if not self.path.is_file():
            raise FirmwareError(f"{self.path}: no such video file")
        capture = cv2.VideoCapture(str(self.path))
        if not capture.isOpened():
            raise FirmwareError(f"{self.path}: not a video OpenCV can read")
        return capture

    def read(self, timeout: float = 3.0) -> Frame:
        if self._capture is None:
            raise CameraLost(f"{self.name}: closed")
        ok, image = self._capture.read()
        if not ok and self.loop and self._delivered_this_pass:
            self._capture.release()
            self._capture = self._open()
            self._delivered_this_pass = 0
            ok, image = self._capture.read()
        if not ok:
            if self._index == 0:
                raise FirmwareError(f"{self.path}: the video has no readable frames")
            raise EndOfStream(f"{self.name}: end of video after {self._index} frames")
        self._delivered_this_pass += 1
        return self._stamp(_as_bgr(image))

    def close(self) -> None:
        if self._capture is not None:
            self._capture.release()
            self._capture = None


class ImageFolderSource(_Recorded):
    """The images of a folder in natural name order (frame2 before frame10).

    The folder is listed once at open; an image that has vanished since is a lost camera
    (the card or disk went away), one that cannot be decoded is bad input.
    """

    def __init__(
        self, path: str | Path, fps: float = 15, loop: bool = False, realtime: bool = False
    ) -> None:
        self.path = Path(path)
        if not self.path.is_dir():
            raise FirmwareError(f"{self.path}: no such folder")
        self.files = sorted(
            (p for p in self.path.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES), key=_natural_key
        )
        if not self.files:
            raise FirmwareError(
                f"{self.path}: no images in the folder "
                f"(looked for {', '.join(sorted(IMAGE_SUFFIXES))})"
            )
        super().__init__(str(self.path), fps, loop, realtime)
        self._next = 0
        self._closed = False

    def read(self, timeout: float = 3.0) -> Frame:
        if self._closed:
            raise CameraLost(f"{self.name}: closed")
        if self._next == len(self.files):
            if not self.loop:
                raise EndOfStream(f"{self.name}: end of folder after {self._index} images")
            self._next = 0
        path = self.files[self._next]
        if not path.is_file():
            raise CameraLost(f"{path}: image has disappeared")
        image = cv2.imread(str(path), cv2.IMREAD_COLOR)
        if image is None:
            raise FirmwareError(f"{path}: not an image OpenCV can read")
        self._next += 1
        return self._stamp(image)

    def close(self) -> None:
        self._closed = True


def _as_bgr(image: np.ndarray) -> np.ndarray:
    if image.ndim == 2:
        return cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    if image.shape[2] == 4:
        return cv2.cvtColor(image, cv2.COLOR_BGRA2BGR)
    return image
