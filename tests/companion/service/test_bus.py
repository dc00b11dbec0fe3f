"""The event bus: every subscriber gets every event; reconnecting clients catch up."""

from __future__ import annotations

from companion.service.bus import Event, EventBus


def event(i: int) -> Event:
    return Event(i, float(i), "x", f"event {i}")


def test_every_subscriber_gets_every_event_and_listeners_run():
    bus = EventBus()
    subs = [bus.subscribe() for _ in range(3)]
    heard = []
    bus.add_listener(lambda e: heard.append(e.id))
    bus.add_listener(lambda e: 1 / 0)  # a failing listener does not stop the others
    for i in range(1, 6):
        bus.publish(event(i))
    for sub in subs:
        assert [sub.get(0.1).id for _ in range(5)] == [1, 2, 3, 4, 5]
        assert sub.get(0.01) is None
    assert heard == [1, 2, 3, 4, 5]
    subs[0].close()
    assert bus.subscriber_count == 2


def test_a_reconnecting_client_gets_what_it_missed_or_a_resync():
    bus = EventBus(history=3)
    for i in range(1, 6):
        bus.publish(event(i))
    assert [e.id for e in bus.since(3)] == [4, 5]
    assert bus.since(5) == []
    assert bus.since(1) is None  # event 2 is no longer held: the page must re-read the state


def test_a_subscriber_that_falls_behind_is_told():
    bus = EventBus()
    sub = bus.subscribe(maxsize=2)
    for i in range(1, 4):
        bus.publish(event(i))
    assert sub.lagged
