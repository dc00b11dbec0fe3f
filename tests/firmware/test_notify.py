"""sd_notify over a real unix datagram socket, as systemd listens for it."""

from __future__ import annotations

import os
import socket
import uuid

import pytest

from firmware import notify


@pytest.fixture
def listener(tmp_path, monkeypatch):
    path = tmp_path / "notify.sock"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(path))
    sock.settimeout(2)
    monkeypatch.setenv("NOTIFY_SOCKET", str(path))
    yield sock
    sock.close()


def test_ready_status_ping_stopping(listener):
    assert notify.ready("counting cubes")
    assert listener.recv(4096) == b"READY=1\nSTATUS=counting cubes"
    assert notify.ping()
    assert listener.recv(4096) == b"WATCHDOG=1"
    assert notify.status("camera lost")
    assert listener.recv(4096) == b"STATUS=camera lost"
    assert notify.stopping()
    assert listener.recv(4096) == b"STOPPING=1"


def test_abstract_socket(monkeypatch):
    name = f"tower-companion-test-{uuid.uuid4().hex}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind("\0" + name)
        sock.settimeout(2)
        monkeypatch.setenv("NOTIFY_SOCKET", "@" + name)
        assert notify.ping()
        assert sock.recv(100) == b"WATCHDOG=1"


def test_outside_systemd_is_a_quiet_no_op(monkeypatch, tmp_path):
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    assert notify.ready() is False
    monkeypatch.setenv("NOTIFY_SOCKET", str(tmp_path / "gone.sock"))
    assert notify.ping() is False


def test_watchdog_interval(monkeypatch):
    monkeypatch.delenv("WATCHDOG_USEC", raising=False)
    assert notify.watchdog_interval() is None
    monkeypatch.setenv("WATCHDOG_USEC", "30000000")
    monkeypatch.setenv("WATCHDOG_PID", str(os.getpid()))
    assert notify.watchdog_interval() == 15.0
    monkeypatch.setenv("WATCHDOG_PID", str(os.getpid() + 1))  # meant for another process
    assert notify.watchdog_interval() is None
