"""Synthetic photographs of the tray: table set-ups, cube layouts, frames and drop videos.

Used by the simulated camera, by tests and by the vision benchmark. Every scene
carries its ground truth. See `random_setup`, `layout`, `render`, `drop_video`.
"""
from firmware.scene.layout import KINDS, CubePose, layout
from firmware.scene.paints import DEFAULT_COLOURS, DEFAULT_PAINTS
from firmware.scene.render import CubeTruth, Hand, Scene, counts_of, draw, render
from firmware.scene.setup import TableSetup, drift_light, random_setup
from firmware.scene.video import DropPlan, VideoFrame, drop_video, frames, plan_drop

__all__ = ["DEFAULT_COLOURS", "DEFAULT_PAINTS", "KINDS", "CubePose", "CubeTruth", "Hand", "Scene",
           "TableSetup", "counts_of", "draw", "drift_light", "layout", "random_setup", "render",
           "DropPlan", "VideoFrame", "drop_video", "frames", "plan_drop"]
