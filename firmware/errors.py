"""Errors at the hardware boundary."""


class FirmwareError(Exception):
    """A device or its settings are wrong in a way the user must fix."""
