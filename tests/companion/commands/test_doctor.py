"""`companion doctor`: one JSON line per check, exit 1 when one fails."""

from __future__ import annotations

import grp
import json
import os
import pwd

import cv2
import numpy as np
import pytest

from calibration import Profile, save_profile
from companion.cli import main


def write_images(folder, n=4, size=(64, 48)):
    folder.mkdir()
    for i in range(n):
        cv2.imwrite(str(folder / f"{i}.png"), np.full((size[1], size[0], 3), 40 * i, np.uint8))
    return folder


def save_calibration(path, frame_size, controls=None):
    profile = Profile(
        frame_size=frame_size,
        corners=((0.1, 0.1), (0.9, 0.1), (0.9, 0.9), (0.1, 0.9)),
        rect_size=(100, 100),
        cube_size=10.0,
        tops={"red": ((-1.0, -1.0, 1.0),), "blue": ((1.0, -1.0, -1.0),)},
        clicks={"red": ((0.5, 0.5),), "blue": ((0.6, 0.5),)},
        camera_controls=controls or {},
    )
    save_profile(profile, path)


def doctor(capsys, *args) -> tuple[int, dict[str, dict]]:
    rc = main(["doctor", "--json", *args])
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert all(set(line) == {"check", "ok", "detail"} for line in lines)
    return rc, {line["check"]: line for line in lines}


@pytest.fixture
def in_groups(monkeypatch):
    """This process is in the gpio and video groups, where the system has them."""
    gids = [g.gr_gid for g in grp.getgrall() if g.gr_name in ("gpio", "video")]
    real = os.getgroups()
    monkeypatch.setattr(os, "getgroups", lambda: real + gids)


@pytest.fixture
def table(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    camera = write_images(tmp_path / "camera")
    config = tmp_path / "config.toml"
    config.write_text(f'[camera]\nsource = "{camera}"\n[panel]\nmode = "mock"\n')
    return config, data


def test_all_checks_pass(capsys, table, in_groups):
    config, data = table
    save_calibration(
        data / "calibration.json",
        (64, 48),
        {"ExposureTime": 9000, "AnalogueGain": 2.0, "ColourGains": [1.5, 2.0]},
    )
    rc, checks = doctor(capsys, "--config", str(config), "--data", str(data))
    assert list(checks) == [
        "configuration",
        "camera",
        "panel",
        "groups",
        "disk",
        "data",
        "calibration",
    ]
    assert {name: c["ok"] for name, c in checks.items() if not c["ok"]} == {}
    assert rc == 0
    assert checks["configuration"]["detail"] == f"{config} is valid"
    assert checks["camera"]["detail"].startswith(
        f"{config.parent / 'camera'}: 3 frames of 64x48 in "
    )
    assert (
        "MockFactory" in checks["panel"]["detail"] and "button_arm=17" in checks["panel"]["detail"]
    )
    assert checks["data"]["detail"] == f"{data} is writable"
    assert list(data.iterdir()) == [data / "calibration.json"]  # the write test left nothing
    assert checks["calibration"]["detail"].endswith(
        "2 colours (red, blue) at 64x48, camera exposure locked"
    )
    # a Camera Module 3's calibration holds its lens position too
    save_calibration(
        data / "calibration.json",
        (64, 48),
        {"ExposureTime": 9000, "AnalogueGain": 2.0, "ColourGains": [1.5, 2.0], "LensPosition": 2.5},
    )
    rc, checks = doctor(capsys, "--config", str(config), "--data", str(data))
    assert rc == 0
    assert checks["calibration"]["detail"].endswith("at 64x48, camera exposure and focus locked")


def test_missing_calibration_fails_the_run(capsys, table, in_groups):
    config, data = table
    rc, checks = doctor(capsys, "--config", str(config), "--data", str(data))
    assert rc == 1
    assert not checks["calibration"]["ok"]
    assert "no such calibration profile" in checks["calibration"]["detail"]
    assert checks["camera"]["ok"]


def test_calibration_size_against_the_camera(capsys, table, in_groups, tmp_path):
    config, data = table
    save_calibration(tmp_path / "same-shape.json", (640, 480))
    _, checks = doctor(
        capsys,
        "--config",
        str(config),
        "--data",
        str(data),
        "--calibration",
        str(tmp_path / "same-shape.json"),
    )
    assert checks["calibration"]["ok"]
    assert "camera gives 64x48 (same shape, scaled)" in checks["calibration"]["detail"]
    save_calibration(tmp_path / "wide.json", (640, 360))
    rc, checks = doctor(
        capsys,
        "--config",
        str(config),
        "--data",
        str(data),
        "--calibration",
        str(tmp_path / "wide.json"),
    )
    assert rc == 1 and not checks["calibration"]["ok"]
    assert "camera gives 64x48, another shape: calibrate again" in checks["calibration"]["detail"]


def test_bad_camera_pins_and_config_are_reported_not_raised(capsys, tmp_path, in_groups):
    config = tmp_path / "config.toml"
    config.write_text(
        '[camera]\nsource = "usb:zero"\n[panel]\nmode = "mock"\n[panel.pins]\nbutton_arm = 5\n'
    )
    rc, checks = doctor(capsys, "--config", str(config), "--data", str(tmp_path / "new"))
    assert rc == 1
    assert checks["configuration"]["ok"]
    assert checks["camera"] == {
        "check": "camera",
        "ok": False,
        "detail": "camera source 'usb:zero': expected usb:N with N a camera number, e.g. usb:0",
    }
    assert checks["panel"]["detail"] == "panel pins: BCM 5 is given to led_ready and button_arm"
    assert checks["data"]["ok"] and "does not exist yet" in checks["data"]["detail"]
    assert not (tmp_path / "new").exists()

    config.write_text("[camera]\nwidht = 640\n")
    rc, checks = doctor(capsys, "--config", str(config), "--data", str(tmp_path))
    assert rc == 1
    assert not checks["configuration"]["ok"]
    assert "unknown key 'widht'" in checks["configuration"]["detail"]
    assert len(checks) == 7  # the rest still ran, on the defaults


def test_group_membership(monkeypatch):
    from companion.commands.doctor import check_groups

    existing = {g.gr_name: g.gr_gid for g in grp.getgrall()}
    if "video" not in existing:
        pytest.skip("this system has no video group to test membership against")
    monkeypatch.setattr(os, "getuid", lambda: 4321)  # a normal user (pwd knows no 4321: patched)
    monkeypatch.setattr(
        pwd, "getpwuid", lambda uid: pwd.struct_passwd(("tower", "x", uid, uid, "", "/", "/bin/sh"))
    )
    monkeypatch.setattr(os, "getgroups", lambda: [])
    monkeypatch.setattr(os, "getgid", lambda: -1)
    check = check_groups()
    assert not check.ok and "is not in" in check.detail and "sudo usermod -aG" in check.detail
    assert "video" in check.detail and "tower" in check.detail
    monkeypatch.setattr(os, "getgroups", lambda: [existing["video"], existing.get("gpio", -2)])
    assert check_groups().ok


def test_root_needs_no_groups(monkeypatch):
    from companion.commands.doctor import check_groups

    monkeypatch.setattr(os, "getuid", lambda: 0)
    check = check_groups()
    assert check.ok and check.detail.startswith("running as root")


def test_data_folder_not_writable(tmp_path):
    from companion.commands.doctor import check_data_dir

    plain = tmp_path / "file"
    plain.write_text("x")
    assert check_data_dir(str(plain)).detail == f"{plain} is not a folder"
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        if os.access(locked, os.W_OK):
            pytest.skip("running as root: permissions do not stop writes")
        check = check_data_dir(str(locked))
        assert not check.ok and "not writable" in check.detail
    finally:
        locked.chmod(0o700)


def test_text_output(capsys, table, in_groups):
    config, data = table
    rc = main(["doctor", "--config", str(config), "--data", str(data)])
    out = capsys.readouterr().out.splitlines()
    assert rc == 1
    assert out[0].startswith("ok    configuration: ")
    assert out[-1].startswith("FAIL  calibration: ")
