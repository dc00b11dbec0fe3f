"""Fixtures: a configuration in a temporary data directory, a store, a service without camera."""

from __future__ import annotations

import pytest

from companion.config import load_config
from companion.service.table import TableService
from companion.store import Store
from companion.web import create_app


@pytest.fixture
def config(tmp_path):
    cfg, _ = load_config(
        None, {"data_dir": str(tmp_path / "data"), "speech.enabled": False, "panel.mode": "off"}
    )
    return cfg


@pytest.fixture
def store(config):
    s = Store.in_dir(config.data_dir)
    yield s
    s.close()


@pytest.fixture
def service(config, store):
    """A service with no camera: counts are typed in on confirm."""
    svc = TableService(config, store, None)
    yield svc
    svc.stop()


@pytest.fixture
def client(service, config):
    app = create_app(service, config, "127.0.0.1")
    app.testing = True
    return app.test_client()
