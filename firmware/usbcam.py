"""A USB camera (or any stream OpenCV opens, e.g. an IP camera's URL) through VideoCapture."""

from __future__ import annotations

import cv2
import numpy as np

from firmware.camera import LiveSource
from firmware.errors import FirmwareError
from firmware.files import _as_bgr


def _capture(device: int | str) -> cv2.VideoCapture:
    # V4L2 by number on Linux: the default backend order may try GStreamer first and stall.
    if isinstance(device, int) and hasattr(cv2, "CAP_V4L2"):
        return cv2.VideoCapture(device, cv2.CAP_V4L2)
    return cv2.VideoCapture(device)


def probe(number: int) -> bool:
    """Whether camera `number` opens and delivers one frame."""
    capture = _capture(number)
    try:
        return bool(capture.isOpened() and capture.read()[0])
    finally:
        capture.release()


class UsbCamera(LiveSource):
    """`device`: N for /dev/videoN, or a device path / stream URL.

    Frames not at the requested size (a camera that cannot do it gives its nearest) are resized.
    """

    def __init__(
        self, device: int | str, width: int = 640, height: int = 480, fps: int = 15
    ) -> None:
        super().__init__(f"usb:{device}" if isinstance(device, int) else str(device))
        self.device = device
        self.size = (width, height)
        self._capture = _capture(device)
        if not self._capture.isOpened():
            self._capture.release()
            raise FirmwareError(
                f"{self.name}: no camera there (is it plugged in? is this user in the video group?)"
            )
        self._capture.set(cv2.CAP_PROP_FRAME_WIDTH, width)
        self._capture.set(cv2.CAP_PROP_FRAME_HEIGHT, height)
        self._capture.set(cv2.CAP_PROP_FPS, fps)
        self._start()

    def _grab(self) -> np.ndarray:
        ok, image = self._capture.read()
        if not ok:
            raise FirmwareError("the camera stopped delivering frames (unplugged?)")
        image = _as_bgr(image)
        if (image.shape[1], image.shape[0]) != self.size:
            image = cv2.resize(image, self.size, interpolation=cv2.INTER_AREA)
        return image

    def _release(self) -> None:
        self._capture.release()
