"""Calibration profiles: file format and versions, building from clicks, quality report."""
