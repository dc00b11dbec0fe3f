"""Physically realistic tray photographs, a second scene source unlike firmware.scene's
rasteriser: cubes thrown out of a tower's exit settle as rigid bodies (pybullet) and each
frame is path-traced (Mitsuba 3), then passed through a camera's lens, sensor and JPEG.

    files, truth = build_setup(seed)   # one table set-up: calibration frame, scenes, videos

pybullet and mitsuba are the optional 'scenes' extra: they are imported only when a
simulation or a render starts, never by the service.
"""

from firmware.scene.realistic.build import KINDS, build_setup

__all__ = ["KINDS", "build_setup"]
