"""`companion doctor`: check camera, panel, groups, disk, data folder, calibration and
configuration.

One line per check; `--json` gives `{"check": ..., "ok": ..., "detail": ...}` per line.
Exits 1 when a check fails, so an installer or a person can act on it.
"""

from __future__ import annotations

import argparse
import grp
import os
import pwd
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from calibration import load_profile
from calibration.errors import CalibrationError
from companion.commands.common import add_config_option, load
from companion.config import Config
from companion.errors import CompanionError
from companion.output import print_json
from firmware.camera import open_source
from firmware.errors import FirmwareError
from firmware.panel import make_panel

# Below this the SD card is nearly full: the game store and logs need room to grow.
MIN_FREE_BYTES = 200 * 1024 * 1024
FRAMES = 3  # a camera passes when it delivers this many frames


@dataclass
class Check:
    check: str
    ok: bool
    detail: str

    def to_dict(self) -> dict:
        return {"check": self.check, "ok": self.ok, "detail": self.detail}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "doctor",
        help="check camera, panel, calibration and configuration",
        description="Check what the service needs: the configuration, the camera "
        "delivering frames, the panel pins, the user's gpio/video groups, "
        "free disk, a writable data folder, and a calibration matching the "
        "camera. Exits 1 if any check fails.",
    )
    add_config_option(p)
    p.add_argument("--data", metavar="DIR", help="data folder (default: from the configuration)")
    p.add_argument(
        "--source", metavar="SOURCE", help="camera source to check instead of the configured one"
    )
    p.add_argument(
        "--calibration",
        metavar="FILE",
        help="calibration profile to check (default: the one the service uses, in the data folder)",
    )
    p.add_argument("--json", action="store_true", help="one JSON object per check")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    checks: list[Check] = []
    try:
        config, _ = load(args, **{"data_dir": args.data, "camera.source": args.source})
        checks.append(Check("configuration", True, _config_detail(args)))
    except CompanionError as e:
        # The other checks still run, on the defaults, so one bad key does not hide the rest.
        config = Config()
        checks.append(Check("configuration", False, f"{e} (other checks use the defaults)"))
    from companion.service.table import PROFILE_FILE  # the service's own file name; heavy to import

    camera, frame_size = check_camera(config)
    checks += [
        camera,
        check_panel(config),
        check_groups(),
        check_disk(config.data_dir),
        check_data_dir(config.data_dir),
        check_calibration(
            Path(args.calibration) if args.calibration else Path(config.data_dir) / PROFILE_FILE,
            frame_size,
            config,
        ),
    ]
    for check in checks:
        if args.json:
            print_json(check.to_dict())
        else:
            print(f"{'ok  ' if check.ok else 'FAIL'}  {check.check}: {check.detail}", flush=True)
    return 0 if all(check.ok for check in checks) else 1


def _config_detail(args: argparse.Namespace) -> str:
    from companion.config import CONFIG_ENV, default_config_path

    path = args.config or os.environ.get(CONFIG_ENV)
    if path:
        return f"{path} is valid"
    default = default_config_path()
    return (
        f"{default} is valid"
        if default.exists()
        else f"no configuration file; defaults ({default} absent)"
    )


def check_camera(config: Config) -> tuple[Check, tuple[int, int] | None]:
    """Open the configured source without retrying and read a few frames."""
    cam = config.camera
    try:
        source = open_source(cam.source, cam.width, cam.height, cam.fps, retry=False)
    except FirmwareError as e:
        return Check("camera", False, str(e)), None
    try:
        start = time.monotonic()
        frames = [source.read(timeout=cam.timeout) for _ in range(FRAMES)]
        took = time.monotonic() - start
    except FirmwareError as e:
        return Check("camera", False, f"{source.name} opened but delivers no frames: {e}"), None
    finally:
        source.close()
    width, height = frames[-1].size
    detail = f"{source.name}: {FRAMES} frames of {width}x{height} in {took:.2f} s"
    if source.name == "sim" and cam.source != "sim":
        # The service would run, but on a pretend tray: the camera itself is not there.
        return Check(
            "camera",
            False,
            f"no camera found ({cam.source}): the service would use the simulated tray",
        ), (width, height)
    return Check("camera", True, detail), (width, height)


def check_panel(config: Config) -> Check:
    panel_config = config.panel
    try:
        panel = make_panel(panel_config.mode, panel_config.pins, panel_config.long_press)
    except FirmwareError as e:
        return Check("panel", False, str(e))
    try:
        pins = ", ".join(f"{role}={pin}" for role, pin in panel.pins.items())
        where = {
            "gpio": "GPIO",
            "mock": "gpiozero MockFactory (no GPIO here; shown on the page)",
            "off": "off (mock pins, not shown)",
        }[panel.mode]
        return Check("panel", True, f"{where}; BCM pins {pins}")
    finally:
        panel.close()


def check_groups() -> Check:
    """The service user must be in gpio (panel) and video (camera) where those groups exist."""
    user = pwd.getpwuid(os.getuid()).pw_name
    if os.getuid() == 0:
        return Check(
            "groups",
            True,
            "running as root: every device is reachable (the service itself "
            "runs as a normal user in gpio and video)",
        )
    have = set(os.getgroups()) | {os.getgid()}
    missing, absent = [], []
    for name in ("gpio", "video"):
        try:
            gid = grp.getgrnam(name).gr_gid
        except KeyError:
            absent.append(name)
            continue
        if gid not in have:
            missing.append(name)
    if missing:
        return Check(
            "groups",
            False,
            f"user {user} is not in {' and '.join(missing)}: "
            f"sudo usermod -aG {','.join(missing)} {user}, then log in again",
        )
    detail = f"user {user} is in the gpio and video groups"
    if absent:
        detail = f"user {user}: no {' or '.join(absent)} group on this system (not a Raspberry Pi?)"
    return Check("groups", True, detail)


def _existing_parent(path: Path) -> Path:
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def check_disk(data_dir: str) -> Check:
    where = _existing_parent(Path(data_dir).expanduser().absolute())
    free = shutil.disk_usage(where).free
    detail = f"{free / 1e9:.1f} GB free at {where}"
    if free < MIN_FREE_BYTES:
        return Check("disk", False, f"only {detail}; at least {MIN_FREE_BYTES // 2**20} MB needed")
    return Check("disk", True, detail)


def check_data_dir(data_dir: str) -> Check:
    path = Path(data_dir).expanduser()
    if not path.exists():
        parent = _existing_parent(path)
        if os.access(parent, os.W_OK | os.X_OK):
            return Check(
                "data",
                True,
                f"{path} does not exist yet; it will be created ({parent} is writable)",
            )
        return Check(
            "data", False, f"{path} does not exist and {parent} is not writable by this user"
        )
    if not path.is_dir():
        return Check("data", False, f"{path} is not a folder")
    try:
        with tempfile.NamedTemporaryFile(dir=path, prefix=".doctor-"):
            pass
    except OSError as e:
        return Check("data", False, f"{path} is not writable: {e.strerror}")
    return Check("data", True, f"{path} is writable")


def check_calibration(path: Path, frame_size: tuple[int, int] | None, config: Config) -> Check:
    try:
        profile = load_profile(path)
    except CalibrationError as e:
        return Check(
            "calibration",
            False,
            f"{e}: calibrate on the page's Calibrate view or with `companion calibrate`",
        )
    size = frame_size or (config.camera.width, config.camera.height)
    made = profile.frame_size
    detail = (
        f"{path}: {len(profile.colours)} colours ({', '.join(profile.colours)}) "
        f"at {made[0]}x{made[1]}"
    )
    if profile.camera_controls:
        detail += (
            ", camera exposure and focus locked"
            if "LensPosition" in profile.camera_controls
            else ", camera exposure locked"
        )
    if tuple(made) == tuple(size):
        return Check("calibration", True, detail)
    # Positions are stored relative to the frame, so only the shape of the frame must agree.
    if abs(made[0] / made[1] - size[0] / size[1]) < 0.01:
        return Check(
            "calibration", True, f"{detail}; camera gives {size[0]}x{size[1]} (same shape, scaled)"
        )
    return Check(
        "calibration",
        False,
        f"{detail}, but the camera gives {size[0]}x{size[1]}, another shape: calibrate again",
    )
