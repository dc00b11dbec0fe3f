"""Video files and image folders through open_source, on real files written here."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from firmware.camera import CameraLost, EndOfStream, Frame, FrameSource, open_source
from firmware.errors import FirmwareError


def shade(i: int, size=(64, 48)) -> np.ndarray:
    """A frame whose colour says its number, robust to MJPG compression."""
    image = np.zeros((size[1], size[0], 3), np.uint8)
    image[:] = (10 * i % 256, 200 - 10 * i % 200, 40)
    return image


def write_video(path, n: int, fps: float = 10.0, size=(64, 48)):
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), fps, size)
    assert writer.isOpened()
    for i in range(n):
        writer.write(shade(i, size))
    writer.release()
    return path


def write_folder(folder, n: int):
    folder.mkdir()
    for i in range(n):
        # Unpadded numbers: natural order must put frame2 before frame10.
        cv2.imwrite(str(folder / f"frame{i}.png"), shade(i))
    return folder


def blue(frame: Frame) -> int:
    return int(frame.image[..., 0].mean().round())


def test_video_file_frames_in_order_with_media_time(tmp_path):
    source = open_source(str(write_video(tmp_path / "drop.avi", 12, fps=10)))
    assert isinstance(source, FrameSource)
    frames = list(source)
    assert [f.index for f in frames] == list(range(12))
    assert [round(f.timestamp, 3) for f in frames] == [round(i / 10, 3) for i in range(12)]
    assert all(abs(blue(f) - 10 * i) <= 3 for i, f in enumerate(frames))
    assert frames[0].image.dtype == np.uint8 and frames[0].size == (64, 48)
    with pytest.raises(EndOfStream):
        source.read()
    source.close()


def test_video_file_loops(tmp_path):
    source = open_source(str(write_video(tmp_path / "drop.avi", 5)), loop=True)
    frames = [source.read() for _ in range(12)]
    assert [f.index for f in frames] == list(range(12))
    assert [abs(blue(f) - 10 * (i % 5)) <= 3 for i, f in enumerate(frames)] == [True] * 12
    assert frames[11].timestamp > frames[4].timestamp  # time keeps running across the loop
    source.close()


def test_image_folder_natural_order_and_loop(tmp_path):
    folder = write_folder(tmp_path / "shots", 12)
    (folder / "notes.txt").write_text("not an image")
    with open_source(str(folder), fps=4) as source:
        frames = list(source)
    assert [blue(f) for f in frames] == [10 * i for i in range(12)]
    assert frames[3].timestamp == pytest.approx(0.75)
    with open_source(str(folder), loop=True) as source:
        assert [blue(source.read()) for _ in range(14)][12:] == [0, 10]


def test_bad_sources_say_what_is_wrong(tmp_path):
    with pytest.raises(FirmwareError, match="no such file or folder"):
        open_source(str(tmp_path / "missing.avi"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(FirmwareError, match="no images in the folder"):
        open_source(str(tmp_path / "empty"))
    (tmp_path / "junk.avi").write_bytes(b"this is no video")
    with pytest.raises(FirmwareError, match="junk.avi"):
        open_source(str(tmp_path / "junk.avi"))
    with pytest.raises(FirmwareError, match="usb:N"):
        open_source("usb:first")
    folder = write_folder(tmp_path / "broken", 2)
    (folder / "frame1.png").write_bytes(b"\x89PNG broken")
    source = open_source(str(folder))
    source.read()
    with pytest.raises(FirmwareError, match="frame1.png: not an image"):
        source.read()


def test_vanished_image_is_a_lost_camera(tmp_path):
    folder = write_folder(tmp_path / "shots", 3)
    source = open_source(str(folder))
    source.read()
    (folder / "frame1.png").unlink()
    with pytest.raises(CameraLost) as lost:
        source.read()
    assert not isinstance(lost.value, EndOfStream)


def test_realtime_paces_frames(tmp_path):
    import time

    source = open_source(str(write_folder(tmp_path / "shots", 4)), fps=20, realtime=True)
    start = time.monotonic()
    list(source)
    assert time.monotonic() - start >= 3 / 20 * 0.9


def test_only_usb_video_devices_are_probed(tmp_path):
    from firmware.camera import usb_video_devices

    devices = tmp_path / "devices"
    usb = devices / "platform" / "xhci" / "usb1" / "1-1" / "1-1:1.0" / "video4linux"
    codec = devices / "platform" / "soc" / "bcm2835-codec" / "video4linux"
    classes = tmp_path / "class"
    classes.mkdir()
    for parent, names in ((usb, ("video0", "video1")), (codec, ("video10", "video11"))):
        for name in names:
            (parent / name).mkdir(parents=True)
            (classes / name).symlink_to(parent / name)
    assert usb_video_devices(classes) == [0, 1]
    assert usb_video_devices(tmp_path / "missing") == []
