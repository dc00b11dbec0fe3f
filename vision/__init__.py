"""Pure image processing on numpy frames: tray geometry, colours, cubes, settling.

No I/O and no hardware; imports none of the other packages of this project.
"""

from vision.annotate import annotate
from vision.counter import Counter, Cube, FrameCount
from vision.settle import SettleDetector, SettleEvent

__all__ = ["Counter", "Cube", "FrameCount", "SettleDetector", "SettleEvent", "annotate"]
