"""Errors of the image processing."""


class VisionError(Exception):
    """An image or a frame cannot be processed; the message says why."""
