"""Path-traced frames of a realistic set-up (Mitsuba 3, scalar_rgb variant: the llvm
variants crash on some machines' LLVM), then what the camera does to them: locked exposure
and a white balance a few hundred kelvin off, lens distortion (OpenCV remap, through
firmware.scene.Lens), sensor noise, JPEG. Focus blur is the thin-lens camera's own.
"""

from __future__ import annotations

import functools
import math
import tempfile
from pathlib import Path

import cv2
import numpy as np

from firmware.scene.lens import Lens
from firmware.scene.paints import kelvin_rgb
from firmware.scene.realistic.materials import mat_texture, wall_texture
from firmware.scene.realistic.physics import Body
from firmware.scene.realistic.setup import RealSetup

SIZE = (640, 480)
SPP = 12  # samples per pixel: a few seconds per frame on one core, grain like a sensor's
MAX_DEPTH = 3  # light bounces: enough for the cubes' colour on the floor and on each other
TABLE_DROP = 10.0  # mm from the tray floor down to the table top
# The camera's highlight constraint (libcamera's AeConstraintMode "Highlight"): the mean light
# of the brightest share of the picture, above this quantile, stays below this share of full
# scale.
HIGHLIGHT_SHARE, HIGHLIGHT_LEVEL = 0.98, 0.8
LUMA = np.array([0.299, 0.587, 0.114], np.float32)  # what auto exposure measures (Rec. 601 Y)


@functools.lru_cache(maxsize=1)
def _mitsuba():
    import drjit as dr
    import mitsuba as mi

    mi.set_variant("scalar_rgb")
    dr.set_thread_count(1)  # one core per process: the builder runs one process per core
    return mi


def rounded_cube(bevel: float, steps: int = 3) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A unit cube (edge 1, centred) with edges rounded to `bevel` (share of the edge):
    (vertices, normals, triangles). Each face is a grid whose outer rows bend round the
    edges, so the normals are smooth across them."""
    r = bevel
    ring = [-0.5 + r * (1 - math.cos(math.pi / 2 * k / steps)) for k in range(steps + 1)]
    ticks = np.array(ring + [-v for v in reversed(ring)])
    n = len(ticks)
    verts, normals, tris = [], [], []
    for axis in range(3):
        for sign in (-1.0, 1.0):
            u, v = np.meshgrid(ticks, ticks, indexing="ij")
            p = np.zeros((n, n, 3))
            p[..., axis] = sign * 0.5
            p[..., (axis + 1) % 3] = u if sign > 0 else v
            p[..., (axis + 2) % 3] = v if sign > 0 else u
            inner = np.clip(p, -0.5 + r, 0.5 - r)
            d = p - inner
            d /= np.linalg.norm(d, axis=-1, keepdims=True)
            base = len(verts) * n * n
            verts.append((inner + r * d).reshape(-1, 3))
            normals.append(d.reshape(-1, 3))
            idx = np.arange(n * n).reshape(n, n) + base
            a, b, c, e = idx[:-1, :-1], idx[1:, :-1], idx[1:, 1:], idx[:-1, 1:]
            tris.append(np.stack([a, b, c], -1).reshape(-1, 3))
            tris.append(np.stack([a, c, e], -1).reshape(-1, 3))
    return np.concatenate(verts), np.concatenate(normals), np.concatenate(tris)


def _write_ply(path: Path, verts, normals, tris) -> None:
    head = (
        f"ply\nformat ascii 1.0\nelement vertex {len(verts)}\nproperty float x\nproperty float y\n"
        f"property float z\nproperty float nx\nproperty float ny\nproperty float nz\n"
        f"element face {len(tris)}\nproperty list uchar int vertex_indices\nend_header\n"
    )
    rows = [" ".join(f"{v:.6f}" for v in (*p, *q)) for p, q in zip(verts, normals, strict=True)]
    faces = [f"3 {a} {b} {c}" for a, b, c in tris]
    path.write_text(head + "\n".join(rows + faces) + "\n")


def _transform(rotation: np.ndarray, position, scale):
    m = np.eye(4)
    m[:3, :3] = rotation * np.asarray(scale, float)
    m[:3, 3] = position
    return _mitsuba().ScalarTransform4f(m)


class Renderer:
    """Renders bodies on one set-up's table; textures and the cube mesh are made once."""

    def __init__(self, setup: RealSetup, spp: int = SPP) -> None:
        self.setup, self.spp = setup, spp
        self._dir = tempfile.TemporaryDirectory(prefix="realistic-")
        self.mesh = Path(self._dir.name) / "cube.ply"
        _write_ply(self.mesh, *rounded_cube(setup.bevel / setup.cube_size))
        rng = np.random.default_rng(setup.seed)
        self.textures = {}
        for name, (image, rgb) in {
            "mat": (mat_texture(setup.tray, rng), setup.tray.mat_rgb),
            "wall": wall_texture(setup.tray, rng),
            "table": wall_texture(setup.tray, rng, table=True),
        }.items():
            # An 8-bit PNG, which Mitsuba reads as sRGB and turns back into linear reflectance.
            path = str(Path(self._dir.name) / f"{name}.png")
            srgb = (image[..., None] * np.asarray(rgb)[::-1]) ** (1 / 2.2) * 255
            cv2.imwrite(path, np.clip(srgb, 0, 255).astype(np.uint8))
            self.textures[name] = path
        self.exposure: float | None = None

    def close(self) -> None:
        self._dir.cleanup()

    def __enter__(self) -> Renderer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def scene_dict(
        self, bodies: list[Body], setup: RealSetup | None = None, seed: int = 0, spp=None
    ) -> dict:
        setup = setup or self.setup
        tray, cam = setup.tray, setup.camera
        R, C = cam.pose()
        w, h = SIZE
        # Mitsuba's camera looks along its +z with +x to the image's left and +y up.
        look = np.eye(4)
        look[:3, 0], look[:3, 1], look[:3, 2], look[:3, 3] = -R[0], -R[1], R[2], C
        # The room's light is mostly the lamps' bounced off walls and ceiling: their colour.
        room = np.mean([kelvin_rgb(lamp.kelvin) for lamp in setup.lamps], axis=0)
        fov = math.degrees(2 * math.atan(0.5 / cam.focal))
        scene = {
            "type": "scene",
            "integrator": {"type": "path", "max_depth": MAX_DEPTH},
            "sensor": {
                "type": "thinlens",
                "fov": fov,
                "fov_axis": "x",
                "to_world": _mitsuba().ScalarTransform4f(look),
                "aperture_radius": setup.aperture,
                "focus_distance": setup.focus,
                "near_clip": 10.0,
                "far_clip": 10000.0,
                "sampler": {"type": "independent", "sample_count": spp or self.spp, "seed": seed},
                "film": {
                    "type": "hdrfilm",
                    "width": w,
                    "height": h,
                    "rfilter": {"type": "gaussian"},
                    "pixel_format": "rgb",
                },
            },
            "ambient": {
                "type": "constant",
                "radiance": {"type": "rgb", "value": (setup.ambient / math.pi * room).tolist()},
            },
            "floor": {
                "type": "rectangle",
                "to_world": _transform(
                    np.eye(3), (0, 0, 0.01), (tray.width / 2, tray.depth / 2, 1)
                ),
                "bsdf": self._bitmap("mat"),
            },
            "table": {
                "type": "rectangle",
                "to_world": _transform(np.eye(3), (0, 0, -TABLE_DROP), (3000, 3000, 1)),
                "bsdf": self._bitmap("table"),
            },
        }
        for k, (half, centre) in enumerate(tray.boxes()[1:]):
            scene[f"wall{k}"] = {
                "type": "cube",
                "to_world": _transform(np.eye(3), centre, half),
                "bsdf": self._bitmap("wall"),
            }
        for k, lamp in enumerate(setup.lamps):
            pos = lamp.position()
            fwd = -pos / np.linalg.norm(pos)
            side = np.cross(fwd, [0.0, 0.0, 1.0]) if abs(fwd[2]) < 0.99 else np.array([1.0, 0, 0])
            side /= np.linalg.norm(side)
            rot = np.stack([side, np.cross(fwd, side), fwd], 1)
            # Radiance for `power` of irradiance on the floor facing the lamp (E = L A / d^2).
            radiance = (
                lamp.power * lamp.distance**2 / lamp.size**2 * np.array(kelvin_rgb(lamp.kelvin))
            )
            scene[f"lamp{k}"] = {
                "type": "rectangle",
                "to_world": _transform(rot, pos, (lamp.size / 2,) * 2 + (1,)),
                "emitter": {
                    "type": "area",
                    "radiance": {"type": "rgb", "value": radiance.tolist()},
                },
            }
        paints = {name: (albedo, rough) for name, albedo, rough in setup.paints}
        for k, body in enumerate(bodies):
            albedo, rough = paints[body.colour]
            scene[f"cube{k}"] = {
                "type": "ply",
                "filename": str(self.mesh),
                "face_normals": False,
                "to_world": _transform(body.rotation(), body.position, (setup.cube_size,) * 3),
                "bsdf": {
                    "type": "roughplastic",
                    "distribution": "ggx",
                    "alpha": rough,
                    "diffuse_reflectance": {
                        "type": "rgb",
                        "value": np.clip(np.multiply(albedo, body.tint), 0, 1).tolist(),
                    },
                },
            }
        return scene

    def _bitmap(self, name: str) -> dict:
        return {
            "type": "diffuse",
            "reflectance": {"type": "bitmap", "filename": self.textures[name]},
        }

    def linear(
        self, bodies: list[Body], setup: RealSetup | None = None, seed: int = 0, spp=None
    ) -> np.ndarray:
        """The scene's light as the sensor receives it: linear RGB, float32, H x W x 3."""
        mi = _mitsuba()
        scene = mi.load_dict(self.scene_dict(bodies, setup, seed, spp))
        return np.array(mi.render(scene), dtype=np.float32)[..., :3]

    def photograph(self, linear: np.ndarray, rng: np.random.Generator) -> bytes:
        """JPEG bytes of what the camera makes of this light: the first call locks exposure
        (the tray's middle near mid-grey, as auto exposure would), later calls keep it."""
        setup = self.setup
        wb = 1 / np.array(kelvin_rgb(setup.white_balance), np.float32)
        raw = linear * wb
        if self.exposure is None:
            h, w = raw.shape[:2]
            middle = raw[h // 3 : 2 * h // 3, w // 3 : 2 * w // 3].mean(axis=2)
            exposure = 0.18 / max(np.median(middle), 1e-4) * rng.uniform(0.8, 1.25)
            # ... held down by the highlight constraint the companion sets on the Pi camera
            # (firmware.picam): the brightest 2% of the picture stay below 80% of full scale,
            # so on a dark felt the cubes' tops keep their colours instead of clipping white.
            y = raw @ LUMA
            bright = float(y[y >= np.quantile(y, HIGHLIGHT_SHARE)].mean())
            self.exposure = float(min(exposure, HIGHLIGHT_LEVEL / max(bright, 1e-6)))
        raw = raw * self.exposure
        raw = Lens(bend=setup.distortion).image(raw)
        srgb = np.clip(raw, 0, 1) ** (1 / 2.2) * 255
        # Shot noise grows with the signal, read noise does not.
        sigma = setup.noise * np.sqrt(0.25 + srgb / 255)
        out = np.clip(srgb + rng.normal(0, 1, srgb.shape) * sigma, 0, 255).astype(np.uint8)
        _, data = cv2.imencode(
            ".jpg",
            cv2.cvtColor(out, cv2.COLOR_RGB2BGR),
            [cv2.IMWRITE_JPEG_QUALITY, setup.jpeg_quality],
        )
        return data.tobytes()

    def project(self, points) -> np.ndarray:
        """World points (N x 3, mm) -> px of the photograph (lens distortion included)."""
        cam = self.setup.camera
        R, C = cam.pose()
        K = cam.intrinsics(SIZE)
        p = (np.asarray(points, float).reshape(-1, 3) - C) @ R.T
        uv = p[:, :2] / p[:, 2:3] * K[0, 0] + K[:2, 2]
        return Lens(bend=self.setup.distortion).points(uv, SIZE)
