"""`companion calibrate`, `companion count` and `companion watch` on real image files."""

import json

import cv2
import numpy as np
import pytest

from calibration.profile import VERSION
from companion.cli import main
from firmware.scene import drop_video, layout, render
from tests.calibration.photo import photo
from tests.vision.scenes import calibrated
from vision.counter import SURE

SEED = 12


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    """A set-up, its calibration frame as PNG, and the profile made by the CLI."""
    setup, _, _ = calibrated(SEED)
    rng = np.random.default_rng(5)
    calib = render(setup, layout(setup, {c: 1 for c in setup.colours}, "scattered", rng), rng)
    folder = tmp_path_factory.mktemp("cli")
    image = folder / "calib.png"
    cv2.imwrite(str(image), calib.image)
    return setup, calib, folder, image


def corners_arg(corners) -> str:
    return " ".join(f"{x:.1f},{y:.1f}" for x, y in corners)


def samples_args(clicks) -> list[str]:
    return [
        a
        for colour, pts in clicks.items()
        for x, y in pts
        for a in ("--sample", f"{colour}={x:.1f},{y:.1f}")
    ]


def calibrate(table, capsys, output):
    setup, calib, folder, image = table
    code = main(
        [
            "calibrate",
            str(image),
            "--corners",
            corners_arg(calib.corners),
            *samples_args(calib.clicks),
            "--output",
            str(output),
        ]
    )
    return code, capsys.readouterr()


def test_calibrate_writes_a_profile_and_prints_the_quality_report(table, capsys, tmp_path):
    code, out = calibrate(table, capsys, tmp_path / "cal.json")
    assert code == 0, out.err
    assert "calibration written to" in out.out and "separation" in out.out
    data = json.loads((tmp_path / "cal.json").read_text())
    assert data["version"] == VERSION and set(data["colours"]) == set(table[0].colours)


@pytest.mark.parametrize(
    "corners, message",
    [
        ("10,10 600,10 600,400", "expected 4 corners"),
        ("10,10 600,10 600,400 10,400 5,5", "expected 4 corners"),
        ("10,10 700,10 600,400 10,400", "outside the 640x480 frame"),
        ("10,10 600,x 600,400 10,400", "expected x,y in pixels"),
    ],
)
def test_calibrate_rejects_bad_corners(table, capsys, tmp_path, corners, message):
    _, calib, _, image = table
    code = main(
        [
            "calibrate",
            str(image),
            "--corners",
            corners,
            *samples_args(calib.clicks),
            "--output",
            str(tmp_path / "c.json"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and message in err and err.startswith("companion calibrate: error:")
    assert not (tmp_path / "c.json").exists()


def test_calibrate_rejects_a_click_on_the_tray_floor(table, capsys, tmp_path):
    _, calib, _, image = table
    clicks = {**calib.clicks, "red": [calib.bare_floor()]}
    code = main(
        [
            "calibrate",
            str(image),
            "--corners",
            corners_arg(calib.corners),
            *samples_args(clicks),
            "--output",
            str(tmp_path / "c.json"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and "click for red at" in err and "is not on a cube" in err


def test_count_png_and_jpeg_and_a_broken_file_among_them(table, capsys, tmp_path):
    setup = table[0]
    calibrate(table, capsys, tmp_path / "cal.json")
    rng = np.random.default_rng(77)
    truths, scenes, paths = [], [], []
    for i, (kind, ext) in enumerate((("scattered", ".png"), ("touching", ".jpg"))):
        s = render(
            setup, layout(setup, {"red": 2, "blue": 1, "yellow": 2, "green": i}, kind, rng), rng
        )
        path = tmp_path / f"scene{i}{ext}"
        cv2.imwrite(str(path), s.image)
        truths.append(s.counts)
        scenes.append(s)
        paths.append(str(path))
    broken = tmp_path / "broken.jpg"
    broken.write_bytes(b"\xff\xd8 not really a jpeg")
    empty = tmp_path / "empty.png"
    empty.write_bytes(b"")
    missing = tmp_path / "missing.png"
    debug = tmp_path / "debug"
    code = main(
        [
            "count",
            "--calibration",
            str(tmp_path / "cal.json"),
            "--json",
            "--debug",
            str(debug),
            paths[0],
            str(broken),
            paths[1],
            str(empty),
            str(missing),
        ]
    )
    out = capsys.readouterr()
    assert code == 1
    assert f"{broken}: cannot read image: not a PNG, JPEG" in out.err
    assert f"{empty}: cannot read image: the file is empty" in out.err
    assert f"{missing}: cannot read image: No such file" in out.err
    lines = [json.loads(line) for line in out.out.splitlines()]
    assert [line["image"] for line in lines] == paths
    for line, truth, scene in zip(lines, truths, scenes, strict=True):
        assert {c: n for c, n in line["counts"].items() if n} == truth
        assert line["unknown"] == 0 and line["ms"] > 0
        assert line["sure"] == (line["confidence"] >= SURE) and (line["sure"] or line["doubts"])
        # each cube named where a cube of its colour lies in the image (within 15 px)
        assert sorted(cube["colour"] for cube in line["cubes"]) == sorted(
            c for c, n in truth.items() for _ in range(n)
        )
        for cube in line["cubes"]:
            assert (
                min(
                    np.hypot(*np.subtract(cube["centre"], true.centre))
                    for true in scene.cubes
                    if true.colour == cube["colour"]
                )
                < 15
            )
    assert sorted(p.name for p in debug.iterdir()) == [
        "scene0.annotated.png",
        "scene1.annotated.png",
    ]


def test_count_with_a_missing_or_damaged_profile(capsys, tmp_path):
    code = main(["count", "--calibration", str(tmp_path / "nope.json"), "x.png"])
    assert code == 2 and "no such calibration profile" in capsys.readouterr().err
    (tmp_path / "bad.json").write_text("{")
    code = main(["count", "--calibration", str(tmp_path / "bad.json"), "x.png"])
    assert code == 2 and "not valid JSON" in capsys.readouterr().err


def test_watch_a_folder_of_frames_prints_each_settled_state(table, capsys, tmp_path):
    setup = table[0]
    calibrate(table, capsys, tmp_path / "cal.json")
    rng = np.random.default_rng(8)
    before = layout(setup, {"red": 1}, "scattered", rng)
    video = drop_video(
        setup, before, {"blue": 2, "yellow": 1}, rng, fps=15, hand=False, trickle=False
    )
    frames = tmp_path / "frames"
    frames.mkdir()
    for i, f in enumerate(video):
        cv2.imwrite(str(frames / f"{i:04d}.png"), f.image)
    code = main(["watch", str(frames), "--calibration", str(tmp_path / "cal.json"), "--json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    events = [json.loads(line) for line in out.out.splitlines()]
    assert len(events) == 2
    last_moving = max(i for i, f in enumerate(video) if f.moving)
    assert {c: n for c, n in events[0]["counts"].items() if n} == {"red": 1}
    assert {c: n for c, n in events[1]["counts"].items() if n} == video[-1].counts
    assert last_moving < events[1]["frame"] <= last_moving + 0.7 * 15


def test_calibrate_black_on_a_light_grey_tray_and_the_report_as_json(capsys, tmp_path):
    cubes = [
        ("black", (52, 50, 50), (150, 130)),
        ("black", (52, 50, 50), (330, 300)),
        ("red", (40, 40, 170), (480, 140)),
    ]
    shot = photo((176, 176, 172), cubes)
    image = tmp_path / "grey.png"
    cv2.imwrite(str(image), shot.image)
    args = [
        "calibrate",
        str(image),
        "--corners",
        corners_arg(shot.corners),
        *samples_args(shot.clicks),
        "--output",
        str(tmp_path / "c.json"),
    ]
    assert main(args) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("calibration written to") and "2 colours: black, red" in lines[0]
    [black] = [x for x in lines if x.strip().startswith("black:")]
    assert "2 clicked" in black and "from red" in black and "from the tray" in black
    assert main([*args, "--json"]) == 0
    report = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert report["output"] == str(tmp_path / "c.json") and report["warnings"] == []
    assert [(c["colour"], c["clicks"], c["nearest"]) for c in report["colours"]] == [
        ("black", 2, "red"),
        ("red", 1, "black"),
    ]
