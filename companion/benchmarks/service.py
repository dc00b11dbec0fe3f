"""service: start-up time, memory, and event latency under load of `companion serve --demo`.

Starts the real server (waitress) as a subprocess on the simulated tray in a temporary
data directory, measures how long until it answers, its resident memory (RSS), then runs
battles while clients follow /events and /stream.mjpg, and prints the event latency (from
the event's commit to its arrival at each client) and the memory before and after.
Targets: start-up under 3 s, memory under 200 MB.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from companion.errors import CompanionError
from companion.output import print_json

START_TARGET_S = 3.0
MEMORY_TARGET_MB = 200.0
# A demo configuration: no speech on the benchmark machine, the panel on the mock factory.
DEMO_CONFIG = """[speech]
enabled = false

[panel]
mode = "mock"
"""


def add_arguments(parser) -> None:
    parser.add_argument(
        "--sse", type=int, default=20, help="clients following /events (default 20)"
    )
    parser.add_argument(
        "--mjpeg", type=int, default=5, help="clients watching /stream.mjpg (default 5)"
    )
    parser.add_argument(
        "--battles", type=int, default=10, help="battles to run under load (default 10)"
    )
    parser.add_argument("--starts", type=int, default=3, help="start-ups to time (default 3)")


def run(args) -> int:
    figures = []
    with tempfile.TemporaryDirectory(prefix="companion-bench-") as tmp:
        starts = []
        for _ in range(args.starts):
            # The first start calibrates the simulated tray; later starts load that profile.
            with ServerProcess(Path(tmp)) as server:
                starts.append(server.start_seconds)
                idle_rss = server.rss_mb()
        figures.append(
            {
                "figure": "start-up (first start, calibrates the simulated tray)",
                "value": round(starts[0], 2),
                "unit": "s",
                "target": f"< {START_TARGET_S:g}",
            }
        )
        if len(starts) > 1:
            figures.append(
                {
                    "figure": "start-up (median of later starts)",
                    "value": round(statistics.median(starts[1:]), 2),
                    "unit": "s",
                    "target": f"< {START_TARGET_S:g}",
                }
            )
        figures.append(
            {
                "figure": "memory when idle (RSS)",
                "value": round(idle_rss, 1),
                "unit": "MB",
                "target": f"< {MEMORY_TARGET_MB:g}",
            }
        )
        with ServerProcess(Path(tmp)) as server:
            result = run_load(
                server, sse_clients=args.sse, mjpeg_clients=args.mjpeg, battles=args.battles
            )
        latencies = sorted(result.latencies)
        figures += [
            {
                "figure": "load: clients on /events, /stream.mjpg; battles",
                "value": f"{args.sse}, {args.mjpeg}; {args.battles}",
                "unit": "",
            },
            {
                "figure": "event latency median",
                "value": round(_pct(latencies, 50) * 1000, 1),
                "unit": "ms",
            },
            {
                "figure": "event latency 95th percentile",
                "value": round(_pct(latencies, 95) * 1000, 1),
                "unit": "ms",
            },
            {
                "figure": "event latency max",
                "value": round(latencies[-1] * 1000, 1) if latencies else None,
                "unit": "ms",
            },
            {"figure": "events missed by a client", "value": result.missed, "unit": "events"},
            {
                "figure": "MJPEG frames received (all clients)",
                "value": sum(result.mjpeg_frames),
                "unit": "frames",
            },
            {
                "figure": "memory before load (RSS)",
                "value": round(result.rss_before, 1),
                "unit": "MB",
            },
            {
                "figure": "memory after load (RSS)",
                "value": round(result.rss_after, 1),
                "unit": "MB",
                "target": f"< {MEMORY_TARGET_MB:g}",
            },
            {
                "figure": "memory peak during load (RSS)",
                "value": round(max(result.rss_samples), 1),
                "unit": "MB",
            },
        ]
    for f in figures:
        if args.json:
            print_json(f)
        else:
            target = f"   (target {f['target']} {f['unit']})" if f.get("target") else ""
            print(f"{f['figure']:<52} {f['value']} {f['unit']}{target}")
    return 0


def _pct(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    return values[min(len(values) - 1, round(p / 100 * (len(values) - 1)))]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ServerProcess:
    """`companion serve --demo` as a subprocess on a free loopback port."""

    def __init__(
        self,
        data_dir: Path,
        port: int | None = None,
        seed: int = 1,
        extra_config: str = "",
        timeout: float = 30.0,
    ) -> None:
        self.data_dir = Path(data_dir)
        self.port = port or free_port()
        self.seed = seed
        self.timeout = timeout
        self.config = self.data_dir.parent / f"{self.data_dir.name}-config.toml"
        self.config.write_text(DEMO_CONFIG + extra_config)
        self.process: subprocess.Popen | None = None
        self.start_seconds = float("nan")
        self.url = f"http://127.0.0.1:{self.port}"
        self.output: list[str] = []

    def start(self) -> ServerProcess:
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        command = [
            sys.executable,
            "-m",
            "companion",
            "serve",
            "--demo",
            "--config",
            str(self.config),
            "--data",
            str(self.data_dir),
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--seed",
            str(self.seed),
        ]
        started = time.monotonic()
        self.process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
        )
        threading.Thread(target=self._read_output, daemon=True).start()
        while time.monotonic() - started < self.timeout:
            if self.process.poll() is not None:
                time.sleep(0.2)
                raise CompanionError("the server stopped at start:\n" + "".join(self.output[-30:]))
            try:
                status, _ = self.get("/api/state")
                if status == 200:
                    self.start_seconds = time.monotonic() - started
                    return self
            except OSError:
                pass
            time.sleep(0.02)
        self.kill()
        raise CompanionError(
            f"the server did not answer within {self.timeout:g} s:\n" + "".join(self.output[-30:])
        )

    def _read_output(self) -> None:
        for line in self.process.stdout:
            self.output.append(line)

    def request(self, method: str, path: str, body: dict | None = None, timeout: float = 10.0):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            payload = json.dumps(body).encode() if body is not None else None
            headers = {"Content-Type": "application/json"} if payload is not None else {}
            conn.request(method, path, body=payload, headers=headers)
            response = conn.getresponse()
            data = response.read()
            return response.status, (json.loads(data) if data else None)
        finally:
            conn.close()

    def get(self, path: str):
        return self.request("GET", path)

    def post(self, path: str, body: dict | None = None):
        return self.request("POST", path, body if body is not None else {})

    def wait_for(self, predicate, timeout: float = 20.0, what: str = "state"):
        """Poll /api/state until predicate(state) is true; return that state."""
        deadline = time.monotonic() + timeout
        state = None
        while time.monotonic() < deadline:
            status, state = self.get("/api/state")
            if status == 200 and predicate(state):
                return state
            time.sleep(0.05)
        raise AssertionError(
            f"timed out waiting for {what}; last state: {json.dumps(state)[:2000]}\n"
            + "".join(self.output[-20:])
        )

    def rss_mb(self) -> float:
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return float("nan")

    def kill(self) -> None:
        """SIGKILL: no clean-up at all, as in a crash or a pulled plug."""
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=10)

    def stop(self) -> int:
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                return self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()
        return self.process.returncode if self.process else 0

    def __enter__(self) -> ServerProcess:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def run_battle(server: ServerProcess, body: dict, timeout: float = 30.0) -> dict:
    """Declare a battle, wait until the simulated drop is counted, confirm it; the applied
    record."""
    status, battle = server.post("/api/battles", body)
    if status != 201:
        raise CompanionError(f"declaring a battle failed ({status}): {battle}")
    server.wait_for(
        lambda s: s["battle"] and s["battle"]["status"] == "counted",
        timeout,
        f"battle {battle['id']} to be counted",
    )
    status, applied = server.post(f"/api/battles/{battle['id']}/confirm")
    if status != 200:
        raise CompanionError(f"confirming battle {battle['id']} failed ({status}): {applied}")
    return applied


@dataclass
class LoadResult:
    events: list[list[dict]] = field(default_factory=list)  # per SSE client, in arrival order
    latencies: list[float] = field(default_factory=list)  # seconds, every event at every client
    published: list[int] = field(default_factory=list)  # event ids the server logged meanwhile
    missed: int = 0
    mjpeg_frames: list[int] = field(default_factory=list)
    rss_before: float = 0.0
    rss_after: float = 0.0
    rss_samples: list[float] = field(default_factory=list)
    connections: list = field(default_factory=list, repr=False)


BATTLES = (
    {"attacker": "blue", "defender": "red", "thrown": {"blue": 4, "red": 3}},
    {"attacker": "red", "defender": None, "thrown": {"red": 3}},
    {"attacker": "yellow", "defender": "blue", "thrown": {"yellow": 3, "blue": 2}},
)


def run_load(
    server: ServerProcess, sse_clients: int = 20, mjpeg_clients: int = 5, battles: int = 10
) -> LoadResult:
    """Battles while clients follow /events and /stream.mjpg; every client's events and
    latencies."""
    result = LoadResult(events=[[] for _ in range(sse_clients)], mjpeg_frames=[0] * mjpeg_clients)
    stop = threading.Event()
    ready = threading.Barrier(sse_clients + mjpeg_clients + 1, timeout=30)
    _, before = server.get("/api/events?after=0")
    first_id = max([e["id"] for e in before["events"]], default=0)
    threads = [
        threading.Thread(target=_follow_events, args=(server, result, i, stop, ready), daemon=True)
        for i in range(sse_clients)
    ]
    threads += [
        threading.Thread(target=_watch_stream, args=(server, result, i, stop, ready), daemon=True)
        for i in range(mjpeg_clients)
    ]
    for t in threads:
        t.start()
    ready.wait()
    result.rss_before = server.rss_mb()
    sampler = threading.Thread(target=_sample_rss, args=(server, result, stop), daemon=True)
    sampler.start()
    try:
        for i in range(battles):
            run_battle(server, BATTLES[i % len(BATTLES)])
        time.sleep(0.5)  # the last events reach the clients
    finally:
        _, after = server.get(f"/api/events?after={first_id}")
        result.published = [e["id"] for e in after["events"]]
        result.rss_after = server.rss_mb()
        stop.set()
        for conn in result.connections:  # unblock clients waiting for the next line
            try:
                conn.sock.shutdown(socket.SHUT_RDWR)
            except (OSError, AttributeError):
                pass
        for t in threads:
            t.join(timeout=15)
        sampler.join(timeout=5)
    wanted = set(result.published)
    result.missed = sum(len(wanted - {e["id"] for e in client}) for client in result.events)
    return result


def _sample_rss(server: ServerProcess, result: LoadResult, stop: threading.Event) -> None:
    while not stop.wait(0.25):
        result.rss_samples.append(server.rss_mb())


def _follow_events(
    server: ServerProcess,
    result: LoadResult,
    i: int,
    stop: threading.Event,
    ready: threading.Barrier,
) -> None:
    url = urlsplit(server.url)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    conn.request("GET", "/events")
    result.connections.append(conn)
    response = conn.getresponse()
    response.readline()  # ": connected"
    response.readline()
    ready.wait()
    data = []
    try:
        while not stop.is_set():
            line = response.readline()
            if not line:
                break
            line = line.decode().rstrip("\n")
            if line.startswith("data: "):
                data.append(line[6:])
            elif line == "" and data:
                event = json.loads("\n".join(data))
                data = []
                result.latencies.append(time.time() - event["time"])
                result.events[i].append(event)
    except (OSError, ValueError):
        pass
    finally:
        conn.close()


def _watch_stream(
    server: ServerProcess,
    result: LoadResult,
    i: int,
    stop: threading.Event,
    ready: threading.Barrier,
) -> None:
    url = urlsplit(server.url)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    conn.request("GET", "/stream.mjpg")
    result.connections.append(conn)
    response = conn.getresponse()
    ready.wait()
    try:
        while not stop.is_set():
            line = response.readline()
            if not line:
                break
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
                response.readline()
                if len(response.read(length)) == length:
                    result.mjpeg_frames[i] += 1
    except (OSError, ValueError):
        pass
    finally:
        conn.close()
