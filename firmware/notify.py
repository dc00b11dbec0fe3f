"""systemd's sd_notify protocol, in plain socket code (no libsystemd binding needed).

Under `Type=notify` systemd waits for READY=1 before it counts the service as started,
and with `WatchdogSec=` it restarts the service when WATCHDOG=1 stops arriving. The
service's main loop pings, so a hung loop, not just a dead process, gets restarted.
Outside systemd ($NOTIFY_SOCKET unset) every call is a quiet no-op.
"""

from __future__ import annotations

import os
import socket


def notify(*fields: str) -> bool:
    """Send "KEY=value" fields to systemd; True if a notify socket took them."""
    address = os.environ.get("NOTIFY_SOCKET")
    if not address or not fields:
        return False
    if address.startswith("@"):  # abstract namespace socket
        address = "\0" + address[1:]
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
            sock.sendto("\n".join(fields).encode(), address)
    except OSError:
        return False  # systemd gone (shutting down): nothing to tell
    return True


def watchdog_interval() -> float | None:
    """Seconds between watchdog pings this service should send (half of WatchdogSec), or None.

    systemd sets $WATCHDOG_USEC (and $WATCHDOG_PID, which must be this process) when the
    unit has a watchdog.
    """
    usec = os.environ.get("WATCHDOG_USEC")
    pid = os.environ.get("WATCHDOG_PID")
    if not usec or not usec.isdigit() or int(usec) == 0:
        return None
    if pid and pid.isdigit() and int(pid) != os.getpid():
        return None
    return int(usec) / 1e6 / 2


def ready(status: str | None = None) -> bool:
    return notify("READY=1", *([f"STATUS={status}"] if status else []))


def ping() -> bool:
    """Tell the watchdog the main loop is alive."""
    return notify("WATCHDOG=1")


def status(text: str) -> bool:
    """One line shown by `systemctl status`."""
    return notify(f"STATUS={text}")


def stopping() -> bool:
    return notify("STOPPING=1")
