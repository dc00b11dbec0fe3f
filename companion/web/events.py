"""`GET /events`: the event bus as server-sent events.

Each event is one `message` whose data is the JSON event ({id, time, kind, text, data}) and
whose SSE id is the stored event id, so a browser that reconnects (Last-Event-ID) gets what
it missed. When that is no longer in the history, or this client fell too far behind, an
`event: resync` tells the page to re-read /api/state.
"""

from __future__ import annotations

import json

from flask import Blueprint, Response, request

from companion.service.bus import Event
from companion.web import service

bp = Blueprint("events", __name__)

# A comment this often keeps proxies from closing the stream and finds clients that left.
KEEPALIVE_SECONDS = 10.0


def _message(event: Event) -> str:
    return f"id: {event.id}\ndata: {json.dumps(event.to_dict(), ensure_ascii=False)}\n\n"


@bp.get("/events")
def events():
    svc = service()
    last = request.headers.get("Last-Event-ID") or request.args.get("after") or ""
    last_id = int(last) if last.isdigit() else None
    # Subscribe before reading the backlog, so nothing falls between the two.
    sub = svc.bus.subscribe()
    backlog = svc.bus.since(last_id) if last_id is not None else []

    def stream():
        try:
            # Sent at once, so the WSGI server sends the headers and the browser sees "open".
            yield ": connected\n\n"
            sent = last_id or 0
            if backlog is None:
                yield "event: resync\ndata: {}\n\n"
            for event in backlog or ():
                sent = event.id
                yield _message(event)
            while True:
                event = sub.get(timeout=KEEPALIVE_SECONDS)
                if sub.closed:
                    return
                if sub.lagged:
                    yield "event: resync\ndata: {}\n\n"
                    return
                if event is None:
                    yield ": keep-alive\n\n"
                elif event.id > sent:
                    sent = event.id
                    yield _message(event)
        finally:
            sub.close()

    return Response(
        stream(),
        mimetype="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
