"""Errors of calibration profiles."""


class CalibrationError(Exception):
    """A profile cannot be built or loaded; the message says what to fix."""
