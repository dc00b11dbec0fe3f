"""Synthetic photographs of the tray: table set-ups, cube layouts, frames and drop videos.

Used by the simulated camera, by tests and by the vision benchmark. Every scene carries
its ground truth. Same seed (numpy Generator) -> identical output.

    setup = random_setup(rng, colours=DEFAULT_COLOURS, paints=None)   # TableSetup
    drifted = drift_light(setup, rng)                                 # same table, other light
    poses = layout(setup, {"red": 3, "blue": 2}, "touching", rng)     # list[CubePose]
    scene = render(setup, poses, rng, size=(640, 480))                # Scene with truth
    frames = drop_video(setup, poses, {"green": 2}, rng, fps=15)      # list[VideoFrame]

A real camera's lens (bent lines, out of focus), which the renderer does not draw:
`Lens(bend=-0.2, blur=2.0).scene(scene)` gives the scene as that lens shows it.

For a live camera: `plan_drop(...)` gives a DropPlan (poses/moving/counts/hand at time t)
and `draw(setup, poses, rng, size, gain, hand)` renders one frame without the truth.
"""

from firmware.scene.layout import KINDS, CubePose, layout
from firmware.scene.lens import Lens
from firmware.scene.paints import DEFAULT_COLOURS, DEFAULT_PAINTS
from firmware.scene.render import CubeTruth, Hand, Scene, counts_of, draw, render
from firmware.scene.setup import TableSetup, drift_light, random_setup
from firmware.scene.video import DropPlan, VideoFrame, drop_video, frames, plan_drop

__all__ = [
    "DEFAULT_COLOURS",
    "DEFAULT_PAINTS",
    "KINDS",
    "CubePose",
    "CubeTruth",
    "DropPlan",
    "Hand",
    "Lens",
    "Scene",
    "TableSetup",
    "VideoFrame",
    "counts_of",
    "draw",
    "drift_light",
    "drop_video",
    "frames",
    "layout",
    "plan_drop",
    "random_setup",
    "render",
]
