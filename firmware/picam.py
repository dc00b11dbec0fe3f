"""The Raspberry Pi camera through picamera2 (imported lazily: it exists only on a Pi).

Colour counting needs the same exposure and white balance at every throw, so the source
lets auto exposure / white balance settle once, then locks them. A camera with a focusing
lens (Camera Module 3) first focuses on the tray once, and its lens is locked too: its
default focus is far beyond a tray under a tower (a blurred tray costs exact counts), and
a lens that refocused whenever a hand passed would change the picture between throws.
The locked values (`controls`) are stored with the calibration and handed back at the
next start, so the camera sees the tray as it did when it was calibrated.

picamera2's "RGB888" format is, despite its name, laid out B, G, R in memory: exactly
OpenCV's BGR, so frames need no conversion.
"""

from __future__ import annotations

import logging
import time

import numpy as np

from firmware.camera import LiveSource
from firmware.errors import FirmwareError

log = logging.getLogger(__name__)

# The controls that fix what the camera sees; a calibration stores exactly these.
LOCKED_CONTROLS = ("ExposureTime", "AnalogueGain", "ColourGains")
# libcamera's AeConstraintModeEnum.Highlight: auto exposure keeps the brightest part of the
# picture below full scale. A colour is read as a top's ratio to the floor, which a clipped
# top loses: on a dark felt, exposing for the floor would turn every bright cube white.
AE_HIGHLIGHT = 1
SETTLE_SECONDS = 2.0  # upper bound for auto exposure / white balance to converge
SETTLE_FRAMES = 4  # consecutive frames whose exposure/gains agree within 2%
AF_MANUAL = 0  # libcamera's AfModeEnum.Manual: the lens stays at LensPosition


def _picamera2():
    try:
        from picamera2 import Picamera2
    except ImportError:
        raise FirmwareError(
            "picamera2 is not installed (on Raspberry Pi OS: sudo apt install "
            "python3-picamera2, and create the venv with --system-site-packages)"
        ) from None
    return Picamera2


def camera_count() -> int:
    """How many cameras libcamera sees; 0 where picamera2 is missing or sees none."""
    try:
        Picamera2 = _picamera2()
    except FirmwareError:
        return 0
    try:
        return len(Picamera2.global_camera_info())
    except Exception as e:  # libcamera itself failing to start means no usable camera here
        log.debug("picamera2 global_camera_info failed: %s", e)
        return 0


class PiCameraSource(LiveSource):
    def __init__(
        self,
        width: int = 640,
        height: int = 480,
        fps: int = 15,
        *,
        controls: dict | None = None,
        camera_num: int = 0,
        settle_seconds: float = SETTLE_SECONDS,
    ) -> None:
        super().__init__("picamera" if camera_num == 0 else f"picamera:{camera_num}")
        Picamera2 = _picamera2()
        cameras = Picamera2.global_camera_info()
        if not cameras:
            raise FirmwareError(
                "picamera: no camera connected (check the ribbon cable, its "
                "orientation, and that the camera is enabled)"
            )
        if camera_num >= len(cameras):
            raise FirmwareError(f"picamera: no camera {camera_num}; libcamera sees {len(cameras)}")
        self.model = cameras[camera_num].get("Model", "unknown")
        try:
            self._camera = Picamera2(camera_num)
        except Exception as e:  # e.g. the camera is held by another process
            raise FirmwareError(
                f"picamera: the {self.model} camera is present but cannot be opened: {e} "
                f"(is another program using it?)"
            ) from None
        try:
            # FrameDurationLimits (microseconds) rather than picamera2's newer FrameRate
            # shorthand, so older Raspberry Pi OS releases work too.
            frame_us = int(1_000_000 / fps)
            settings = {"FrameDurationLimits": (frame_us, frame_us)}
            if "AeConstraintMode" in self._camera.camera_controls:  # (a sensor without AGC)
                settings["AeConstraintMode"] = AE_HIGHLIGHT
            config = self._camera.create_video_configuration(
                main={"size": (width, height), "format": "RGB888"}, controls=settings
            )
            self._camera.configure(config)
            self._camera.start()
            self._focusing = "AfMode" in self._camera.camera_controls
            if controls:
                self.controls = self.apply_controls(controls)
            else:
                self.controls = self._settle_and_lock(settle_seconds)
        except FirmwareError:
            self._camera.close()
            raise
        except Exception as e:
            self._camera.close()
            raise FirmwareError(f"picamera: the {self.model} camera failed to start: {e}") from None
        log.info("picamera: %s at %dx%d, locked %s", self.model, width, height, self.controls)
        self._start()

    def _settle_and_lock(self, seconds: float) -> dict:
        """Focus (a camera with a focusing lens), let AE/AWB converge (values stable over a
        few frames, or a time limit), then lock."""
        if self._focusing:
            self._focus()
        deadline = time.monotonic() + seconds
        history: list[tuple[float, float, float, float]] = []
        metadata: dict = {}
        while time.monotonic() < deadline:
            metadata = self._camera.capture_metadata()
            red, blue = metadata.get("ColourGains", (0.0, 0.0))
            history.append(
                (metadata.get("ExposureTime", 0), metadata.get("AnalogueGain", 0.0), red, blue)
            )
            recent = history[-SETTLE_FRAMES:]
            if len(recent) == SETTLE_FRAMES and all(
                max(v) - min(v) <= 0.02 * max(max(v), 1e-9) for v in zip(*recent, strict=True)
            ):
                break
        else:
            log.warning(
                "picamera: exposure and white balance still changing after %g s; locking anyway",
                seconds,
            )
        if not all(name in metadata for name in LOCKED_CONTROLS):
            raise FirmwareError(
                f"picamera: the camera does not report {', '.join(LOCKED_CONTROLS)}; "
                f"cannot lock exposure and white balance"
            )
        locked = {name: metadata[name] for name in LOCKED_CONTROLS}
        if self._focusing and "LensPosition" in metadata:
            locked["LensPosition"] = metadata["LensPosition"]
        return self.apply_controls(locked)

    def _focus(self) -> None:
        """One autofocus cycle on what the camera sees (the tray); the lens stays where it ends."""
        if not self._camera.autofocus_cycle():
            log.warning(
                "picamera: autofocus found no sharp picture of the tray; the lens stays where "
                "its scan ended (a Camera Module 3 focuses from 10 cm: is the tray in view?)"
            )

    def relock(self, settle_seconds: float = SETTLE_SECONDS) -> dict:
        """Let exposure and white balance adapt to the light as it is now (and a focusing
        lens refocus), then lock them again.

        For calibrating anew under changed light; store the result with the new profile.
        """
        self._camera.set_controls({"AeEnable": True, "AwbEnable": True})
        self.controls = self._settle_and_lock(settle_seconds)
        return self.controls

    def apply_controls(self, controls: dict) -> dict:
        """Turn off AE/AWB and fix exposure and gains, and on a camera with a focusing lens
        its position (focusing once where `controls` hold none: stored before focus was
        locked); returns the values set (JSON-ready)."""
        missing = [name for name in LOCKED_CONTROLS if name not in controls]
        if missing:
            raise FirmwareError(
                f"picamera: stored camera controls lack {', '.join(missing)}; "
                f"recalibrate to store them again"
            )
        red, blue = controls["ColourGains"]
        locked = {
            "ExposureTime": int(controls["ExposureTime"]),
            "AnalogueGain": float(controls["AnalogueGain"]),
            "ColourGains": [float(red), float(blue)],
        }
        settings = {
            "AeEnable": False,
            "AwbEnable": False,
            "ExposureTime": locked["ExposureTime"],
            "AnalogueGain": locked["AnalogueGain"],
            "ColourGains": (locked["ColourGains"][0], locked["ColourGains"][1]),
        }
        # (a fixed-focus camera has no such controls: a stored lens position is not for it)
        if self._focusing:
            if "LensPosition" in controls:
                position = controls["LensPosition"]
            else:
                self._focus()
                position = self._camera.capture_metadata()["LensPosition"]
            locked["LensPosition"] = float(position)
            settings.update(AfMode=AF_MANUAL, LensPosition=locked["LensPosition"])
        self._camera.set_controls(settings)
        return locked

    def _grab(self) -> np.ndarray:
        return self._camera.capture_array("main")

    def _release(self) -> None:
        try:
            self._camera.stop()
        finally:
            self._camera.close()
