"""A USB camera through OpenCV's VideoCapture (V4L2 on Linux)."""
from __future__ import annotations

import cv2
import numpy as np

from firmware.camera import LiveSource
from firmware.errors import FirmwareError
from firmware.files import _as_bgr


def _capture(number: int) -> cv2.VideoCapture:
    backend = cv2.CAP_V4L2 if hasattr(cv2, "CAP_V4L2") else cv2.CAP_ANY
    return cv2.VideoCapture(number, backend)


def probe(number: int) -> bool:
    """Whether camera `number` opens and delivers one frame."""
    capture = _capture(number)
    try:
        return bool(capture.isOpened() and capture.read()[0])
    finally:
        capture.release()


class UsbCamera(LiveSource):
    def __init__(self, number: int, width: int = 640, height: int = 480, fps: int = 15) -> None:
        super().__init__(f"usb:{number}")
        self.number = number
        self.size = (width, height)
        self._capture = _capture(number)
        if not self._capture.isOpened():
            self._capture.release()
            raise FirmwareError(f"usb:{number}: no USB camera with that number (is it plugged in? "
                                f"is this user in the video group?)")
        # Requests only: a camera that cannot do the size gives its nearest, resized below.
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
