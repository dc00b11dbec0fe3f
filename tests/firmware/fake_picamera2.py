"""A stand-in for the `picamera2` module, for tests only (picamera2 needs libcamera and a Pi).

It mimics exactly the parts of picamera2's real API that `firmware.picam` calls, with the
real names, signatures and behaviours (checked against raspberrypi/picamera2,
picamera2/picamera2.py):

- `Picamera2.global_camera_info()`: static; one dict per attached camera with "Model",
  "Location", "Rotation", "Id"; an empty list when no camera is connected.
- `Picamera2(camera_num=0)`: raises RuntimeError("Camera __init__ sequence did not complete.")
  when the camera cannot be opened (none attached, or already in use).
- `create_video_configuration(main={}, lores=None, raw={}, ..., controls={}, ...)` and
  `create_still_configuration(...)`: a config dict; stream keys other than "format"/"size"
  raise ValueError; the default main format is XBGR8888 (video) / BGR888 (still).
- `configure(config)`: sizes must be (width, height) tuples of even numbers, formats known.
- `start()`, `stop()`, `close()` (close stops first, like the real one).
- `capture_array("main")`: a height x width x 3 uint8 array for "RGB888", whose memory
  order is B, G, R (picamera2's "RGB888" is named after the DRM fourcc, little-endian);
  x width x 4 for the XBGR8888/XRGB8888 formats.
- `capture_metadata()`: dict with "ExposureTime" (int, microseconds), "AnalogueGain"
  (float), "ColourGains" (tuple red, blue), "FrameDuration", "SensorTimestamp", and
  "LensPosition" (dioptres) on a camera with a focusing lens.
- `set_controls(dict)`, and a configuration's "controls" on `configure`: "AeEnable"/"AwbEnable"
  False freeze auto exposure / white balance; "AeConstraintMode" 1 (Highlight) makes auto
  exposure keep the picture's brightest part below full scale;
  "ExposureTime", "AnalogueGain", "ColourGains" set them; "AfMode" (libcamera's AfModeEnum:
  0 manual, 1 auto, 2 continuous) and "LensPosition" (dioptres, obeyed in manual mode) on
  a camera with a focusing lens. A control the camera does not advertise raises
  RuntimeError, as picamera2's Controls does.
- `camera_controls`: property, {name: (min, max, default)} of the controls the camera
  advertises; "AfMode" and "LensPosition" only where the lens focuses (imx708, Camera
  Module 3; not imx219, the fixed-focus v2).
- `autofocus_cycle(wait=None, signal_function=None)`: sets AfMode auto and AfTrigger
  start, waits while the lens scans (a few frames), and returns True if it focused, else
  False; the lens stays where the scan ended. Metadata then reports "LensPosition".

Frames come at the configured frame duration (FrameDurationLimits), as from a sensor.

What the fake adds, for tests to drive it (not picamera2 API): `CAMERAS` (the attached
cameras), `fake_light` (room brightness the auto exposure follows), `fake_fail_after`
(after that many frames the ribbon is pulled: captures raise, the camera is gone),
`fake_hang_after` (after that many frames captures block, delivering nothing, until the
camera is stopped), `fake_busy` (the camera is held by another process), `fake_sharp_at`
(the lens position, dioptres, where the tray is sharp; None: autofocus fails), `plug()`,
`reset()`, `INSTANCES` (every Picamera2 made).
"""

from __future__ import annotations

import threading
import time

import numpy as np

IMX708 = {
    "Model": "imx708",
    "Location": 2,
    "Rotation": 180,
    "Id": "/base/soc/i2c0mux/i2c@1/imx708@1a",
}
IMX219 = {
    "Model": "imx219",
    "Location": 2,
    "Rotation": 180,
    "Id": "/base/soc/i2c0mux/i2c@1/imx219@10",
}
CAMERAS: list[dict] = [dict(IMX708)]
INSTANCES: list[Picamera2] = []
fake_light = 1.0
fake_fail_after: int | None = None
fake_hang_after: int | None = None
fake_busy = False
fake_sharp_at: float | None = 2.5  # a tray 40 cm below the lens

_CONTROLS = {
    "AeEnable": (False, True, None),
    "AwbEnable": (False, True, None),
    "ExposureTime": (75, 66666, None),
    "AnalogueGain": (1.0, 16.0, None),
    "ColourGains": (0.0, 32.0, None),
    "FrameDurationLimits": (33333, 120000000, None),
    "AeConstraintMode": (0, 3, 0),  # libcamera's Normal, Highlight, Shadows, Custom
}
_FOCUS_CONTROLS = {"AfMode": (0, 2, 0), "AfTrigger": (0, 1, 0), "LensPosition": (0.0, 15.0, 1.0)}
AF_SCAN_FRAMES = 6  # frames an autofocus cycle takes

_FORMATS = {"RGB888": 3, "BGR888": 3, "XBGR8888": 4, "XRGB8888": 4, "YUV420": None}
TARGET_LEVEL = 100.0  # mean grey level the fake auto exposure aims for
# In AeConstraintMode Highlight (1) it also keeps the brightest channel at most this level.
HIGHLIGHT_LEVEL = 0.8 * 255
SCENE_RGB = (140, 70, 40)  # a reddish tray, in R, G, B


def plug() -> None:
    """The camera is connected (again) and works."""
    global fake_fail_after, fake_hang_after, fake_busy
    CAMERAS[:] = [dict(IMX708)]
    fake_fail_after, fake_hang_after, fake_busy = None, None, False


def reset() -> None:
    global fake_light, fake_sharp_at
    plug()
    INSTANCES.clear()
    fake_light, fake_sharp_at = 1.0, 2.5


class Picamera2:
    @staticmethod
    def global_camera_info() -> list:
        return [dict(info) for info in CAMERAS]

    def __init__(self, camera_num=0, verbose_console=None, tuning=None):
        if fake_busy or camera_num >= len(CAMERAS):
            raise RuntimeError("Camera __init__ sequence did not complete.")
        self.camera_idx = camera_num
        self.is_open = True
        self.started = False
        self.camera_config = None
        self.set_controls_calls: list[dict] = []
        self.frames = 0
        self._ae = True
        self._awb = True
        self._constraint = 0
        self._exposure = 5000
        self._gain = 4.0
        self._colour_gains = (1.0, 1.0)
        self._af_mode = 0
        self._lens = 1.0
        self._stopped = threading.Event()
        self._next_due = 0.0
        INSTANCES.append(self)

    @property
    def camera_controls(self) -> dict:
        focuses = (
            CAMERAS[self.camera_idx]["Model"] == "imx708"
            if self.camera_idx < len(CAMERAS)
            else False
        )
        return {**_CONTROLS, **(_FOCUS_CONTROLS if focuses else {})}

    @staticmethod
    def _stream(defaults: dict, updates: dict | None) -> dict | None:
        if updates is None:
            return None
        for key in updates:
            if key not in ("format", "size"):
                raise ValueError(
                    f"Bad key {key!r}: valid stream configuration keys are ('format', 'size')"
                )
        return {**defaults, **updates}

    def _config(self, use_case, main, lores, raw, controls, buffer_count, main_defaults):
        return {
            "use_case": use_case,
            "transform": None,
            "colour_space": None,
            "buffer_count": buffer_count,
            "queue": True,
            "main": self._stream(main_defaults, main),
            "lores": self._stream({"format": "YUV420", "size": main_defaults["size"]}, lores),
            "raw": self._stream({"format": "SRGGB10_CSI2P", "size": main_defaults["size"]}, raw),
            "controls": dict(controls),
        }

    # picamera2's own defaults (B006): `{}` is the default stream, None no stream; never mutated
    def create_video_configuration(
        self,
        main={},  # noqa: B006
        lores=None,
        raw={},  # noqa: B006
        transform=None,
        colour_space=None,
        buffer_count=6,
        controls={},  # noqa: B006
        display="main",
        encode="main",
        queue=True,
    ):
        return self._config(
            "video",
            main,
            lores,
            raw,
            controls,
            buffer_count,
            {"format": "XBGR8888", "size": (1280, 720)},
        )

    # picamera2's own defaults (B006): `{}` is the default stream, None no stream; never mutated
    def create_still_configuration(
        self,
        main={},  # noqa: B006
        lores=None,
        raw={},  # noqa: B006
        transform=None,
        colour_space=None,
        buffer_count=1,
        controls={},  # noqa: B006
        display=None,
        encode=None,
        queue=True,
    ):
        return self._config(
            "still",
            main,
            lores,
            raw,
            controls,
            buffer_count,
            {"format": "BGR888", "size": (4608, 2592)},
        )

    def configure(self, camera_config=None):
        main = camera_config["main"]
        if main["format"] not in _FORMATS:
            raise RuntimeError(f"Bad format {main['format']} in stream main")
        size = main["size"]
        if type(size) is not tuple or len(size) != 2:
            raise RuntimeError("size in main stream should be (width, height)")
        if size[0] % 2 or size[1] % 2:
            raise RuntimeError("width and height should be even")
        self._check_advertised(camera_config.get("controls", {}))
        self._apply(camera_config.get("controls", {}))
        self.camera_config = camera_config

    def start(self, config=None, show_preview=False):
        if self.camera_config is None:
            raise RuntimeError("Camera has not been configured")
        self.started = True
        self._stopped.clear()
        self._next_due = time.monotonic()

    def stop(self):
        self.started = False
        self._stopped.set()

    def close(self):
        if self.is_open:
            self.stop()
        self.is_open = False

    def set_controls(self, controls):
        self._check_advertised(controls)
        self.set_controls_calls.append(dict(controls))
        self._apply(controls)

    def _check_advertised(self, controls) -> None:
        for name in controls:
            if name not in self.camera_controls:
                raise RuntimeError(f"Control {name} is not advertised by libcamera")

    def _apply(self, controls) -> None:
        if "AeConstraintMode" in controls:
            self._constraint = int(controls["AeConstraintMode"])
        if "AfMode" in controls:
            self._af_mode = int(controls["AfMode"])
        if "LensPosition" in controls and self._af_mode == 0:
            self._lens = float(controls["LensPosition"])
        if "AeEnable" in controls:
            self._ae = bool(controls["AeEnable"])
        if "AwbEnable" in controls:
            self._awb = bool(controls["AwbEnable"])
        if "ExposureTime" in controls:
            self._exposure = int(controls["ExposureTime"])
        if "AnalogueGain" in controls:
            self._gain = float(controls["AnalogueGain"])
        if "ColourGains" in controls:
            red, blue = controls["ColourGains"]
            self._colour_gains = (float(red), float(blue))

    def autofocus_cycle(self, wait=None, signal_function=None):
        self.set_controls({"AfMode": 1, "AfTrigger": 0})
        for _ in range(AF_SCAN_FRAMES):
            self._next_frame()
        if fake_sharp_at is None:
            self._lens = 0.0  # scanned to the far end and found nothing sharp
            return False
        self._lens = fake_sharp_at
        return True

    def _next_frame(self) -> None:
        if not self.started:
            raise RuntimeError("Camera is not running")
        if fake_fail_after is not None and self.frames >= fake_fail_after:
            CAMERAS.clear()
        if self.camera_idx >= len(CAMERAS):
            raise RuntimeError("Device timeout detected, attempting a restart!!!")
        if fake_hang_after is not None and self.frames >= fake_hang_after:
            self._stopped.wait()
            raise RuntimeError("Camera is not running")
        low, _high = self.camera_config["controls"].get("FrameDurationLimits", (33333, 33333))
        self._next_due += low / 1e6
        time.sleep(max(0.0, self._next_due - time.monotonic()))
        self.frames += 1
        # Auto exposure / white balance move halfway to their target each frame.
        if self._ae:
            target = TARGET_LEVEL / np.mean(SCENE_RGB)
            if self._constraint == 1:
                target = min(target, HIGHLIGHT_LEVEL / max(SCENE_RGB))
            want = target / (self._level() / self._gain)
            self._gain = max(1.0, self._gain + (want - self._gain) / 2)
        if self._awb:
            red, blue = self._colour_gains
            self._colour_gains = (red + (1.6 - red) / 2, blue + (2.1 - blue) / 2)

    def _level(self) -> float:
        """Brightness factor of the sensor output: room light x exposure x gain."""
        return fake_light * self._exposure / 5000 * self._gain / 2

    def capture_metadata(self, wait=None):
        self._next_frame()
        metadata = {
            "ExposureTime": self._exposure,
            "AnalogueGain": self._gain,
            "ColourGains": self._colour_gains,
            "FrameDuration": 66666,
            "SensorTimestamp": self.frames * 66_666_000,
            "Lux": 400.0 * fake_light,
        }
        if "LensPosition" in self.camera_controls:
            metadata["LensPosition"] = self._lens
        return metadata

    def capture_array(self, name="main", wait=None):
        self._next_frame()
        stream = self.camera_config[name]
        width, height = stream["size"]
        level = self._level()
        red, blue = self._colour_gains
        r, g, b = np.clip(
            np.array(SCENE_RGB) * level * np.array([red / 1.6, 1.0, blue / 2.1]), 0, 255
        ).astype(np.uint8)
        channels = _FORMATS[stream["format"]]
        image = np.empty((height, width, channels), np.uint8)
        # "RGB888"/"XRGB8888" are B, G, R in memory; "BGR888"/"XBGR8888" are R, G, B.
        image[..., :3] = (b, g, r) if stream["format"] in ("RGB888", "XRGB8888") else (r, g, b)
        if channels == 4:
            image[..., 3] = 255
        return image
