"""`GET /stream.mjpg`: the annotated camera preview as multipart MJPEG.

The service encodes one preview at most PREVIEW_FPS times a second however many
clients watch; each client is sent every new preview once.
"""

from __future__ import annotations

from flask import Blueprint, Response, jsonify

from companion.web import service

bp = Blueprint("stream", __name__)

BOUNDARY = "frame"
# A client waits this long for a new preview before the last one is sent again
# (a still camera still shows a picture, and a client that left is noticed).
RESEND_SECONDS = 2.0


@bp.get("/stream.mjpg")
def stream():
    svc = service()
    if svc is None or svc.source is None:
        return jsonify(error="no camera: the preview needs a camera or the simulated tray"), 503

    def parts():
        svc.add_viewer(+1)
        try:
            seq = -1
            while not svc.stopped:
                seq, jpeg = svc.wait_preview(seq, RESEND_SECONDS)
                if jpeg is None:
                    continue
                yield (
                    (
                        f"--{BOUNDARY}\r\nContent-Type: image/jpeg\r\n"
                        f"Content-Length: {len(jpeg)}\r\n\r\n"
                    ).encode()
                    + jpeg
                    + b"\r\n"
                )
        finally:
            svc.add_viewer(-1)

    return Response(
        parts(),
        mimetype=f"multipart/x-mixed-replace; boundary={BOUNDARY}",
        headers={"Cache-Control": "no-cache, no-store", "X-Accel-Buffering": "no"},
    )
