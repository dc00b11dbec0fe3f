"""Lost sources are retried with backoff and recovered; USB capture on a real video file."""

from __future__ import annotations

import shutil

import pytest

from firmware.camera import CameraLost, EndOfStream
from firmware.errors import FirmwareError
from firmware.files import ImageFolderSource
from firmware.retry import RetryingSource
from firmware.usbcam import UsbCamera
from tests.firmware.test_files import blue, write_folder, write_video


def test_folder_that_disappears_and_returns(tmp_path):
    folder = write_folder(tmp_path / "card", 4)
    statuses = []
    source = RetryingSource(
        lambda: ImageFolderSource(folder),
        backoff=0.02,
        max_backoff=0.1,
        on_status=lambda status, detail: statuses.append((status, detail)),
    )
    assert [blue(source.read()) for _ in range(2)] == [0, 10]
    shutil.move(folder, tmp_path / "away")  # the card is pulled
    with pytest.raises(
        CameraLost, match="camera lost: .*card: no such folder .attempt [0-9]+, next in"
    ):
        source.read(timeout=0.3)
    assert source.status == "lost" and source.attempts >= 2
    assert statuses == [("lost", f"camera lost: {folder}/frame2.png: image has disappeared")]
    with pytest.raises(CameraLost):  # still away: keeps failing, no crash
        source.read(timeout=0.2)
    shutil.move(tmp_path / "away", folder)  # and put back
    frame = source.read(timeout=1)
    assert blue(frame) == 0 and frame.index == 2  # indices run on across the gap
    assert source.status == "ok" and [s for s, _ in statuses] == ["lost", "ok"]
    assert statuses[-1][1].startswith(f"{folder}: back after")


def test_backoff_doubles_up_to_its_limit(tmp_path):
    opened = []

    def opener():
        opened.append(1)
        if len(opened) > 1:
            raise FirmwareError("still gone")
        return ImageFolderSource(write_folder(tmp_path / "one", 1))

    now = [0.0]
    source = RetryingSource(opener, backoff=1.0, max_backoff=4.0, clock=lambda: now[0])
    source.read()
    with pytest.raises(EndOfStream):  # the end of a recording is passed through, not retried
        source.read(timeout=0)
    assert source.status == "ok" and len(opened) == 1

    delays = []
    source._lose("test")
    for _ in range(5):
        now[0] = source._next_attempt
        source._reopen(now[0])
        delays.append(source._next_attempt - now[0])
    assert delays == [2.0, 4.0, 4.0, 4.0, 4.0]


def test_usb_capture_on_a_video_file_resizes_and_is_recovered_at_its_end(tmp_path):
    video = write_video(tmp_path / "cam.avi", 6)
    camera = UsbCamera(str(video), width=32, height=24)
    frame = camera.read(timeout=2)
    assert frame.image.shape == (24, 32, 3)
    camera.close()
    # The stream ending is a camera that stopped delivering: retried, and it comes back.
    statuses = []
    source = RetryingSource(
        lambda: UsbCamera(str(video), 32, 24),
        backoff=0.02,
        on_status=lambda status, detail: statuses.append(status),
    )
    frames = [source.read(timeout=2) for _ in range(3)]
    assert [f.index for f in frames] == [0, 1, 2]
    for _ in range(20):
        source.read(timeout=2)
    assert "lost" in statuses and statuses[-1] == "ok"
    source.close()


def test_missing_usb_camera_is_named(tmp_path):
    with pytest.raises(FirmwareError, match="nothing.avi: no camera there"):
        UsbCamera(str(tmp_path / "nothing.avi"))
