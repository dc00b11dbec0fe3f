"""The dependency arrows of DESIGN.md, checked on the source itself."""
import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("firmware", "vision", "calibration", "companion")
# What each package may import of this project.
ALLOWED = {
    "firmware": set(),
    "vision": set(),
    "calibration": {"vision"},
    "companion": {"firmware", "vision", "calibration"},
}
HARDWARE = {"picamera2", "gpiozero", "lgpio", "RPi", "libcamera"}


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def sources(package):
    return sorted((ROOT / package).rglob("*.py"))


# Temporary (issue 43): firmware/simtray.py imports the tower model from its new place in
# companion.rules until the tower move's own branch is merged; strict, so it fails once fixed.
MOVED_TOWER = pytest.mark.xfail(strict=True, reason="simtray imports companion.rules.tower")


@pytest.mark.parametrize("package", [pytest.param(p, marks=MOVED_TOWER) if p == "firmware" else p
                                     for p in PACKAGES])
def test_imports_point_one_way(package):
    forbidden = set(PACKAGES) - ALLOWED[package] - {package}
    wrong = {str(p.relative_to(ROOT)): sorted(imported_modules(p) & forbidden)
             for p in sources(package) if imported_modules(p) & forbidden}
    assert wrong == {}


@pytest.mark.parametrize("package", ("vision", "calibration", "companion"))
def test_hardware_libraries_only_in_firmware(package):
    wrong = {str(p.relative_to(ROOT)): sorted(imported_modules(p) & HARDWARE)
             for p in sources(package) if imported_modules(p) & HARDWARE}
    assert wrong == {}
    capture = [str(p.relative_to(ROOT)) for p in sources(package) if "VideoCapture" in p.read_text()]
    assert capture == []


def test_picamera2_is_imported_lazily():
    """The package must import on machines without picamera2: no module-level import of it."""
    eager = []
    for path in sources("firmware"):
        tree = ast.parse(path.read_text())
        for node in tree.body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                if any(n.split(".")[0] in {"picamera2", "lgpio", "libcamera"} for n in names):
                    eager.append(str(path.relative_to(ROOT)))
    assert eager == []
