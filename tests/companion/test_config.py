import json
import subprocess
import sys

import pytest

from companion.config import Config, load_config
from companion.errors import ConfigError


def write(tmp_path, text):
    path = tmp_path / "config.toml"
    path.write_text(text)
    return path


def test_defaults_are_the_shogun_set_and_loopback():
    config, sources = load_config()
    assert config.colours.players == ("red", "blue", "yellow", "purple", "black")
    assert config.colours.farmer == "green"
    assert config.web.host == "127.0.0.1"
    assert set(sources.values()) == {"default"}


def test_file_values_override_defaults_and_say_where_they_came_from(tmp_path):
    path = write(
        tmp_path,
        """
data_dir = "~/tc-data"
[web]
port = 9000
[colours]
players = ["Orange", "white"]
farmer = "green"
[panel.pins]
button_confirm = 16
""",
    )
    config, sources = load_config(path)
    assert config.web.port == 9000
    assert config.colours.players == ("orange", "white")
    assert config.panel.pins["button_confirm"] == 16
    assert config.panel.pins["led_ready"] == Config().panel.pins["led_ready"]
    assert config.data_dir.endswith("tc-data") and "~" not in config.data_dir
    assert sources["web.port"] == f"file {path}"
    assert sources["web.host"] == "default"


def test_command_line_beats_file_and_environment(tmp_path, monkeypatch):
    path = write(tmp_path, "[web]\nport = 9000\n")
    monkeypatch.setenv("TOWER_COMPANION_DATA", str(tmp_path / "env-data"))
    config, sources = load_config(path, {"web.port": 9100, "data_dir": None})
    assert config.web.port == 9100 and sources["web.port"] == "command line"
    assert config.data_dir == str(tmp_path / "env-data")
    assert sources["data_dir"] == "environment TOWER_COMPANION_DATA"


@pytest.mark.parametrize(
    "text, words",
    [
        ("[web]\nport = 'abc'\n", ["[web] port", "whole number", "'abc'"]),
        ("[web]\nport = 70000\n", ["[web] port", "1 to 65535"]),
        ("[web]\nprot = 80\n", ["[web] unknown key 'prot'"]),
        ("[camra]\nwidth = 640\n", ["unknown key 'camra'"]),
        ("[speech]\nenabled = 'yes'\n", ["[speech] enabled", "true or false"]),
        ("[panel]\nmode = 'fast'\n", ["[panel] mode", "auto, gpio, mock, off"]),
        ("[panel.pins]\nbutton_fire = 4\n", ["unknown role 'button_fire'"]),
        ("[panel.pins]\nled_ready = 'five'\n", ["led_ready", "BCM pin number"]),
        ("[colours]\nfarmer = 'red'\n", ["farmer", "'red' is also a player colour"]),
        ("[colours]\nplayers = ['red', 'red']\n", ["named twice"]),
        ("[web\nport = 1\n", ["not valid TOML"]),
    ],
)
def test_bad_file_names_the_key_and_the_problem(tmp_path, text, words):
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as e:
        load_config(path)
    message = str(e.value)
    assert str(path) in message
    for word in words:
        assert word in message


def test_bad_command_line_value_is_named_as_such(tmp_path):
    path = write(tmp_path, "[web]\nport = 9000\n")
    with pytest.raises(
        ConfigError, match=r"^command line: \[web\] port: expected 1 to 65535, got 99999$"
    ):
        load_config(path, {"web.port": 99999})


def test_missing_explicit_file_is_an_error(tmp_path):
    with pytest.raises(ConfigError, match="no such configuration file"):
        load_config(tmp_path / "nope.toml")


def test_config_command_prints_every_key_with_its_source(tmp_path):
    path = write(tmp_path, "[camera]\nwidth = 1280\n")
    out = subprocess.run(
        [sys.executable, "-m", "companion", "config", "--config", str(path), "--json"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    rows = {row["key"]: row for row in map(json.loads, out.splitlines())}
    assert rows["camera.width"] == {"key": "camera.width", "value": 1280, "source": f"file {path}"}
    assert rows["colours.farmer"]["source"] == "default"


def test_config_command_bad_file_is_one_line_and_exit_2(tmp_path):
    path = write(tmp_path, "[web]\nport = -1\n")
    result = subprocess.run(
        [sys.executable, "-m", "companion", "config", "--config", str(path)],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1
    assert "[web] port" in result.stderr and "Traceback" not in result.stderr
