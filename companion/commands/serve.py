"""`companion serve`: run the table service (camera, counting, rules, web page, panel, speech)."""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
import time
from pathlib import Path

from waitress import wasyncore

from companion.commands.common import add_config_option, load
from companion.config import Config

log = logging.getLogger("companion.serve")

# Waitress worker threads: every page holds one for /events and a phone may watch the
# preview too, so 30 streaming clients plus ordinary requests must fit.
THREADS = 48
# Waitress keeps a streaming response's sent bytes until its buffer reaches this size, then
# starts a new one (its default, 16 MB, would hold ~16 MB per /stream.mjpg client and spill
# past 1 MB into temporary files on the SD card); a client this far behind waits.
OUTBUF_HIGH_WATERMARK = 256 * 1024
# The simulated tray's table; a fixed default keeps the saved calibration valid across starts.
DEMO_SEED = 1


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "serve",
        help="run the table service (camera, counting, rules, web page, panel, speech)",
        description="Run the table service. With --demo, or when no camera is found, it "
        "runs on the simulated tray, which drops each declared battle itself.",
    )
    add_config_option(p)
    p.add_argument(
        "--demo",
        action="store_true",
        help="use the simulated tray (calibrated automatically) instead of a camera",
    )
    p.add_argument("--data", metavar="DIR", help="data directory (game database, calibration, PIN)")
    p.add_argument(
        "--host", metavar="H", help="address to listen on (default from config: 127.0.0.1)"
    )
    p.add_argument(
        "--port", metavar="P", type=int, help="port to listen on (default from config: 8080)"
    )
    p.add_argument(
        "--seed",
        type=int,
        default=DEMO_SEED,
        help=f"the simulated tray's table (camera, light, paint; default {DEMO_SEED}); its "
        "calibration is saved in the data directory, so keep one seed per data directory",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    config, _ = load(args, **{"data_dir": args.data, "web.host": args.host, "web.port": args.port})
    logging.basicConfig(
        level=logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    server = Server(config, demo=args.demo, seed=args.seed, config_path=args.config)
    # systemd stops the service with SIGTERM, a person with Ctrl-C: shut down in order while the
    # server loop still sends the streams' last bytes (everything is committed anyway).
    for number in (signal.SIGTERM, signal.SIGINT):
        signal.signal(number, lambda *_: threading.Thread(target=server.close, name="stop").start())
    try:
        server.start()
        print(
            f"Tower Companion on {server.url} (camera: {server.service.camera_status['source']}; "
            f"data: {config.data_dir})",
            flush=True,
        )
        if server.new_pin:
            print(
                f"The table's PIN is {server.new_pin} "
                "(needed on other devices; change it in Settings)",
                flush=True,
            )
        server.serve()
    finally:
        server.close()
    return 0


class Server:
    """The parts of a running companion, in start order; `close()` stops them in reverse."""

    def __init__(
        self,
        config: Config,
        demo: bool = False,
        seed: int = DEMO_SEED,
        config_path: str | None = None,
    ) -> None:
        self.config = config
        self.config_path = config_path
        self.demo = demo
        self.seed = seed
        self.service = None
        self.wsgi = None
        self.new_pin = None
        self._closed = threading.Event()
        self._closing = threading.Lock()  # a second close() waits until the first is done
        self._parts: list = []

    def start(self) -> None:
        from waitress import create_server

        from companion.service.table import TableService
        from companion.store import Store
        from companion.web import create_app
        from firmware.speech import Speaker

        started = time.monotonic()
        # The pin map is checked first: a wrong pin stops the start before anything is opened.
        panel = self._panel()
        store = Store.in_dir(self.config.data_dir)
        self._parts.append(store.close)
        profile = self._saved_profile()
        # A Pi camera gets the exposure and colour gains locked at calibration back at once.
        source = self._open_source(profile.camera_controls if profile is not None else None)
        self._parts.append(source.close)
        if profile is None:
            profile = self._calibrate_simulated_tray(source)
        speech = self.config.speech
        speaker = Speaker(speech.enabled, speech.voice, speech.words_per_minute)
        self._parts.append(speaker.close)
        self.service = TableService(
            self.config, store, source, speaker=speaker, panel=panel, profile=profile
        )
        self.service.start()
        app = create_app(
            self.service, self.config, self.config.web.host, config_path=self.config_path
        )
        self.new_pin = app.config.get("NEW_PIN")
        if self.new_pin:
            log.info("new table PIN created: %s", self.new_pin)
        self.wsgi = create_server(
            app,
            host=self.config.web.host,
            port=self.config.web.port,
            threads=THREADS,
            channel_timeout=60,
            ident="tower-companion",
            outbuf_high_watermark=OUTBUF_HIGH_WATERMARK,
        )
        log.info("started in %.2f s", time.monotonic() - started)

    @property
    def url(self) -> str:
        host = self.config.web.host
        shown = "127.0.0.1" if host in ("0.0.0.0", "") else host
        return f"http://{'[' + shown + ']' if ':' in shown else shown}:{self.wsgi.effective_port}/"

    def serve(self) -> None:
        from firmware import notify

        notify.ready(f"serving {self.url}")
        interval = notify.watchdog_interval()
        if interval:
            threading.Thread(
                target=self._watchdog, args=(interval,), name="watchdog", daemon=True
            ).start()
        try:
            self.wsgi.run()
        except OSError:
            if not self._closed.is_set():
                raise

    def _watchdog(self, interval: float) -> None:
        from firmware import notify

        while not self._closed.wait(interval):
            # Pinged only while the camera loop lives: a hung service is restarted by systemd.
            if self.service.alive:
                notify.ping()

    def close(self) -> None:
        with self._closing:
            if self._closed.is_set():
                return
            self._closed.set()
            from firmware import notify

            notify.stopping()
            if self.service is not None:
                # ends the camera loop, the preview streams and the event streams
                self.service.stop()
            if self.wsgi is not None:
                # The workers finish their last responses, then every socket closes and the
                # server loop, left with nothing to watch, returns.
                self.wsgi.task_dispatcher.shutdown(timeout=2)
                wasyncore.close_all(self.wsgi._map)
            for close in reversed(self._parts):
                try:
                    close()
                except Exception:
                    log.exception("while stopping")

    def _open_source(self, controls):
        from firmware.camera import open_source

        cam = self.config.camera
        spec = "sim" if self.demo else cam.source
        return open_source(
            spec, cam.width, cam.height, cam.fps, seed=self.seed, controls=controls or None
        )

    def _profile_path(self) -> Path:
        from companion.service.table import PROFILE_FILE

        return Path(self.config.data_dir) / PROFILE_FILE

    def _saved_profile(self):
        from calibration import load_profile

        path = self._profile_path()
        return load_profile(path) if path.exists() else None

    def _calibrate_simulated_tray(self, source):
        """On the simulated tray, a profile made from its own clicks, as a user would."""
        from calibration import build_profile, save_profile

        path = self._profile_path()
        if not hasattr(source, "calibration_clicks"):
            log.warning(
                "no calibration profile at %s: calibrate on the page (/calibrate) before counting",
                path,
            )
            return None
        # The clicks lay out one cube of each colour; the frame after that shows them.
        corners, samples = source.calibration_clicks()
        frame = source.read(timeout=self.config.camera.timeout)
        profile, _ = build_profile(frame.image, corners, samples)
        source.clear()
        save_profile(profile, path)
        log.info("calibrated the simulated tray: %s", path)
        return profile

    def _panel(self):
        from firmware.panel import make_panel

        if self.config.panel.mode == "off":
            return None
        panel = make_panel(
            self.config.panel.mode, self.config.panel.pins, self.config.panel.long_press
        )
        self._parts.append(panel.close)
        return panel
