"""firmware/install-pi.sh: shellcheck, its dry run (touches nothing), and the unit it installs."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "firmware" / "install-pi.sh"


def install(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", str(SCRIPT), *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **(env or {})},
    )


def test_shellcheck_is_clean():
    if shutil.which("shellcheck") is None:
        pytest.skip("shellcheck is not installed (apt install shellcheck)")
    result = subprocess.run(["shellcheck", str(SCRIPT)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout


def test_dry_run_says_everything_and_touches_nothing(tmp_path):
    prefix, data = tmp_path / "opt", tmp_path / "data"
    result = install("--dry-run", "--user", "tower", "--prefix", str(prefix), "--data", str(data))
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "(dry run: nothing is changed)" in out
    assert f"+ python3 -m venv --system-site-packages {prefix}/venv" in out
    assert f"+ copy {ROOT} to {prefix}/src (without .git, .venv and caches)" in out
    assert f"+ {prefix}/venv/bin/pip install --quiet --upgrade {prefix}/src" in out
    assert "usermod -aG gpio tower" in out and "usermod -aG video tower" in out
    assert "+ install -d -m 0750 -o tower" in out and str(data) in out
    for line in (
        "Type=notify",
        "WatchdogSec=30",
        "Restart=on-failure",
        "User=tower",
        "SupplementaryGroups=gpio video",
        f"WorkingDirectory={data}",
        f"ExecStart={prefix}/venv/bin/companion serve",
        f"ReadWritePaths={data}",
    ):
        assert f"    | {line}\n" in out
    for package in ("python3-picamera2", "python3-lgpio", "espeak-ng"):
        installed = subprocess.run(
            ["dpkg-query", "-W", "-f=${Status}", package], capture_output=True, text=True
        ).stdout
        if "install ok installed" not in installed:
            assert package in out.split("apt-get install -y", 1)[1].splitlines()[0]
    assert "+ systemctl enable tower-companion" in out
    assert not prefix.exists() and not data.exists()


def test_second_run_skips_what_is_done(tmp_path):
    prefix, data = tmp_path / "opt", tmp_path / "data"
    (prefix / "venv" / "bin").mkdir(parents=True)
    (prefix / "venv" / "bin" / "python").symlink_to(shutil.which("python3"))
    data.mkdir()
    (data / "config.toml").write_text("[web]\nport = 9000\n")
    result = install("--dry-run", "--user", "tower", "--prefix", str(prefix), "--data", str(data))
    assert result.returncode == 0, result.stderr
    assert f"= venv {prefix}/venv exists" in result.stdout
    assert "python3 -m venv" not in result.stdout
    assert f"= {data}/config.toml exists (kept as it is)" in result.stdout
    assert (data / "config.toml").read_text() == "[web]\nport = 9000\n"


def test_unit_passes_systemd_analyze_verify(tmp_path):
    if shutil.which("systemd-analyze") is None:
        pytest.skip("systemd-analyze is not available here")
    prefix = tmp_path / "opt"
    (prefix / "venv" / "bin").mkdir(parents=True)
    (prefix / "venv" / "bin" / "companion").symlink_to(ROOT / ".venv" / "bin" / "companion")
    result = install(
        "--print-unit", "--user", "tower", "--prefix", str(prefix), "--data", str(tmp_path)
    )
    assert result.returncode == 0 and "@" not in result.stdout.split("[Unit]", 1)[1]
    unit = tmp_path / "tower-companion.service"
    unit.write_text(result.stdout)
    verify = subprocess.run(
        ["systemd-analyze", "verify", str(unit)], capture_output=True, text=True
    )
    assert verify.returncode == 0, verify.stderr


@pytest.mark.parametrize(
    "args, message",
    [
        (["--user", "root", "--dry-run"], "must run as a normal user, not root"),
        (["--frobnicate"], "unknown option --frobnicate"),
        (["--data", "relative/dir", "--user", "tower", "--dry-run"], "must be absolute paths"),
        (["--user"], "--user needs a name"),
    ],
)
def test_bad_options(args, message):
    result = install(*args)
    assert result.returncode == 2
    assert result.stderr.strip() == f"install-pi.sh: error: {message}" or message in result.stderr


def test_a_32_bit_system_is_refused_before_anything_is_done(tmp_path):
    # (a `uname` first on PATH that says what 32-bit Raspberry Pi OS says)
    (tmp_path / "uname").write_text("#!/bin/sh\necho armv7l\n")
    (tmp_path / "uname").chmod(0o755)
    result = install(
        "--user", "tower", "--dry-run", env={"PATH": f"{tmp_path}:{os.environ['PATH']}"}
    )
    assert result.returncode == 2
    assert "needs 64-bit Raspberry Pi OS" in result.stderr and "armv7l" in result.stderr
    assert result.stdout == ""


def test_help():
    result = install("--help")
    assert result.returncode == 0 and "--dry-run prints what would be done" in result.stdout
