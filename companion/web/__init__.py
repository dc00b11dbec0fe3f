"""The web app: `create_app(service, config)` registers one blueprint per area.

The service's JSON API (`api.py`), live events (`events.py`) and the camera preview
(`stream.py`) always; the pages (PAGE_BLUEPRINTS, each module's `bp`) when they are
installed; and the PIN/CSRF rules of `security.py` as a before-request hook.
"""

from __future__ import annotations

import importlib

from flask import Flask, current_app

from companion.config import Config

# The pages' blueprints, by module; each module defines `bp`.
PAGE_BLUEPRINTS = (
    "companion.web.pages_api",
    "companion.web.table",
    "companion.web.calibrate",
    "companion.web.game",
    "companion.web.board_map",
    "companion.web.settings",
)
SERVICE_KEY = "COMPANION_SERVICE"
CONFIG_KEY = "COMPANION_CONFIG"


def create_app(
    service,
    config: Config,
    host: str | None = None,
    test_config: dict | None = None,
    config_path: str | None = None,
) -> Flask:
    """The Flask app for a running TableService (or None for page tests without one).

    `host` is the address the server is bound to (default: the configured one); bound to
    anything but loopback, changing anything needs the table's PIN. When the PIN was made
    now (first start), `app.config["NEW_PIN"]` holds it for `companion serve` to print.
    `config_path` is the file given with --config, where Settings saves.
    """
    from companion.web import api, events, security, settings, stream

    app = Flask(__name__)
    app.config.update(MAX_CONTENT_LENGTH=2 * 1024 * 1024)
    app.json.sort_keys = False  # players and colours keep the table's order
    app.config[SERVICE_KEY] = service
    app.config[CONFIG_KEY] = config
    if config_path is not None:
        app.config[settings.CONFIG_PATH_KEY] = config_path
    app.config.update(test_config or {})
    app.config["NEW_PIN"] = security.init_app(app, config.data_dir, host or config.web.host)
    for module in (api, events, stream):
        app.register_blueprint(module.bp)
    for name in PAGE_BLUEPRINTS:
        app.register_blueprint(importlib.import_module(name).bp)
    return app


def service():
    """The TableService of the current app."""
    return current_app.config[SERVICE_KEY]
