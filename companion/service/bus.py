"""The in-process event bus: one announcement reaches the page (SSE), the panel and the speaker.

Events carry the id the store gave them, so a page that reconnects with Last-Event-ID
gets exactly what it missed from the bus's recent history. Subscribers read from their
own queue; a subscriber that falls so far behind that its queue fills is told so
(`Subscription.lagged`) and must resync, rather than silently losing events.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger(__name__)

# Events kept for clients that reconnect; a game evening has a few hundred.
HISTORY = 500
# Events one subscriber may have waiting before it counts as lagging.
SUBSCRIBER_QUEUE = 1000


@dataclass(frozen=True)
class Event:
    id: int
    time: float
    kind: str
    text: str
    data: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "time": self.time,
            "kind": self.kind,
            "text": self.text,
            "data": self.data,
        }


class Subscription:
    def __init__(self, bus: EventBus, maxsize: int) -> None:
        self._bus = bus
        self._queue: queue.Queue[Event | None] = queue.Queue(maxsize)
        self.lagged = False
        self.closed = False  # the bus is shutting down: stop reading

    def get(self, timeout: float) -> Event | None:
        """The next event, or None after `timeout` seconds without one (or when closed)."""
        try:
            return self._queue.get(timeout=timeout)
        except queue.Empty:
            return None

    def _close(self) -> None:
        self.closed = True
        try:
            self._queue.put_nowait(None)  # wakes a reader waiting in get()
        except queue.Full:
            pass

    def _offer(self, event: Event) -> None:
        try:
            self._queue.put_nowait(event)
        except queue.Full:
            self.lagged = True

    def close(self) -> None:
        self._bus._unsubscribe(self)


Listener = Callable[[Event], None]


class EventBus:
    def __init__(self, history: int = HISTORY) -> None:
        self._lock = threading.Lock()
        self._history: deque[Event] = deque(maxlen=history)
        self._subscribers: set[Subscription] = set()
        self._listeners: list[Listener] = []

    def publish(self, event: Event) -> None:
        """Hand an (already stored) event to every subscriber and listener."""
        with self._lock:
            self._history.append(event)
            subscribers = list(self._subscribers)
            listeners = list(self._listeners)
        for sub in subscribers:
            sub._offer(event)
        # Listeners (panel, speaker) must return quickly; a failing one does not stop the others.
        for listener in listeners:
            try:
                listener(event)
            except Exception:
                log.exception("event listener %r failed on %s", listener, event.kind)

    def preload(self, events: Iterable[Event]) -> None:
        """Fill the history from the stored log at start, so reconnecting pages miss nothing."""
        with self._lock:
            self._history.extend(events)

    def subscribe(self, maxsize: int = SUBSCRIBER_QUEUE) -> Subscription:
        sub = Subscription(self, maxsize)
        with self._lock:
            self._subscribers.add(sub)
        return sub

    def close(self) -> None:
        """Tell every subscriber to stop (the service is shutting down)."""
        with self._lock:
            subscribers = list(self._subscribers)
        for sub in subscribers:
            sub._close()

    def _unsubscribe(self, sub: Subscription) -> None:
        with self._lock:
            self._subscribers.discard(sub)

    def add_listener(self, listener: Listener) -> None:
        with self._lock:
            self._listeners.append(listener)

    def since(self, last_id: int) -> list[Event] | None:
        """Events after `last_id`, or None when some of them are no longer in the history."""
        with self._lock:
            events = list(self._history)
        if not events or last_id >= events[-1].id:
            return []
        if last_id < events[0].id - 1:
            return None
        return [e for e in events if e.id > last_id]

    def recent(self, n: int) -> list[Event]:
        with self._lock:
            return list(self._history)[-n:]

    @property
    def subscriber_count(self) -> int:
        with self._lock:
            return len(self._subscribers)
