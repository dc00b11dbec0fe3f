"""Calibration profiles: file format and versions, building from clicks, quality report."""

from calibration.build import build_profile, make_counter
from calibration.profile import Profile, load_profile, save_profile
from calibration.quality import QualityReport

__all__ = [
    "Profile",
    "QualityReport",
    "build_profile",
    "load_profile",
    "make_counter",
    "save_profile",
]
