"""Fixtures for the web pages: an app per test, on loopback or on the network, a client
that carries the page's CSRF token the way the pages' scripts do, and Debian's chromium for
the browser tests."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from companion.config import Config
from companion.web import create_app
from companion.web.security import EXTENSION

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


class FakeClock:
    """Time for the PIN limiter, moved by the test (no sleeping)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def config(tmp_path):
    return dataclasses.replace(Config(), data_dir=str(tmp_path / "data"))


@pytest.fixture
def make_app(config):
    """make_app(host=..., service=...) -> Flask app with the pages; loopback by default."""

    def make(host: str = "127.0.0.1", service=None, **test_config):
        app = create_app(service, config, host=host, test_config={"TESTING": True, **test_config})
        app.extensions[EXTENSION].limiter.clock = FakeClock()
        return app

    return make


@pytest.fixture
def app(make_app):
    return make_app()


@pytest.fixture
def client(app):
    return app.test_client()


def csrf(client) -> str:
    """The session's CSRF token, as the pages read it."""
    return client.get("/api/session").get_json()["csrf"]


def post_json(client, url, body=None, token: str | None = "auto"):
    headers = {}
    if token == "auto":
        token = csrf(client)
    if token:
        headers["X-CSRF-Token"] = token
    return client.post(url, json={} if body is None else body, headers=headers)


def unlock(app, client) -> None:
    pin = app.config["NEW_PIN"]
    r = client.post("/unlock", data={"pin": pin, "csrf_token": csrf(client)})
    assert r.status_code == 302, r.data


@pytest.fixture(scope="module")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is not installed (apt install chromium) : browser tests need it")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()
