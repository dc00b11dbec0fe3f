"""Shared fixtures. Test folders mirror the packages."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path_factory, monkeypatch):
    """No test reads or writes the user's real config or data."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    for name in ("TOWER_COMPANION_CONFIG", "TOWER_COMPANION_DATA"):
        monkeypatch.delenv(name, raising=False)
    yield
