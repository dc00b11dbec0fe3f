"""Calibration profiles: file format and versions, building from clicks, quality report."""

from calibration.build import LEARNED, build_profile, make_counter
from calibration.profile import Profile, load_profile, save_profile
from calibration.quality import QualityReport

__all__ = [
    "LEARNED",
    "Profile",
    "QualityReport",
    "build_profile",
    "load_profile",
    "make_counter",
    "save_profile",
]
