"""The dependency arrows of docs/design.md, checked on the source itself."""

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
# Arrows inside `companion`: modules under a folder (or the module) on the left may not import
# the modules on the right. The rules are pure: of the project they import only themselves
# and companion.errors.
INSIDE = {
    "companion/rules": (
        "firmware",
        "vision",
        "calibration",
        "companion.service",
        "companion.web",
        "companion.commands",
        "companion.store",
        "companion.benchmarks",
        "companion.config",
        "companion.training",
        "companion.tables",
        "companion.output",
    ),
    "companion/service": ("companion.web", "companion.commands", "companion.benchmarks"),
    "companion/benchmarks": ("companion.commands", "companion.web"),
    "companion/training.py": ("companion.benchmarks", "companion.commands"),
    "companion/tables.py": ("companion.benchmarks", "companion.commands"),
    "companion/output.py": ("companion.benchmarks", "companion.commands"),
    "companion/web": ("companion.commands", "companion.benchmarks"),
}


def imported_names(path: Path) -> set[str]:
    """Every module `path` imports, dotted in full."""
    tree = ast.parse(path.read_text(), filename=str(path))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return names


def imported_modules(path: Path) -> set[str]:
    return {name.split(".")[0] for name in imported_names(path)}


def sources(package):
    return sorted((ROOT / package).rglob("*.py"))


@pytest.mark.parametrize("package", PACKAGES)
def test_imports_point_one_way(package):
    forbidden = set(PACKAGES) - ALLOWED[package] - {package}
    wrong = {
        str(p.relative_to(ROOT)): sorted(imported_modules(p) & forbidden)
        for p in sources(package)
        if imported_modules(p) & forbidden
    }
    assert wrong == {}


@pytest.mark.parametrize("where", sorted(INSIDE))
def test_imports_inside_companion_point_one_way(where):
    paths = [ROOT / where] if where.endswith(".py") else sorted((ROOT / where).rglob("*.py"))
    assert paths, f"{where} holds no module"
    forbidden = INSIDE[where]
    wrong = {}
    for path in paths:
        bad = sorted(
            name
            for name in imported_names(path)
            if any(name == f or name.startswith(f + ".") for f in forbidden)
        )
        if bad:
            wrong[str(path.relative_to(ROOT))] = bad
    assert wrong == {}


def test_only_the_benchmarks_import_the_benchmarks():
    """The bench command loads them by name (importlib); no other module imports them."""
    wrong = {
        str(p.relative_to(ROOT))
        for p in sources("companion")
        if "benchmarks" not in p.parts
        and any(n.startswith("companion.benchmarks") for n in imported_names(p))
    }
    assert wrong == set()


def test_the_layout_check_sees_a_wrong_arrow(tmp_path):
    module = tmp_path / "m.py"
    module.write_text(
        "import companion.commands.common\nfrom firmware.simtray import X\n"
        "def f():\n    from companion.benchmarks import vision\n"
    )
    assert imported_names(module) == {
        "companion.commands.common",
        "firmware.simtray",
        "companion.benchmarks",
    }


@pytest.mark.parametrize("package", ("vision", "calibration", "companion"))
def test_hardware_libraries_only_in_firmware(package):
    wrong = {
        str(p.relative_to(ROOT)): sorted(imported_modules(p) & HARDWARE)
        for p in sources(package)
        if imported_modules(p) & HARDWARE
    }
    assert wrong == {}
    capture = [
        str(p.relative_to(ROOT)) for p in sources(package) if "VideoCapture" in p.read_text()
    ]
    assert capture == []


def test_picamera2_is_imported_lazily():
    """The package must import on machines without picamera2: no module-level import of it."""
    eager = []
    for path in sources("firmware"):
        tree = ast.parse(path.read_text())
        for node in tree.body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = (
                    [a.name for a in node.names]
                    if isinstance(node, ast.Import)
                    else [node.module or ""]
                )
                if any(n.split(".")[0] in {"picamera2", "lgpio", "libcamera"} for n in names):
                    eager.append(str(path.relative_to(ROOT)))
    assert eager == []
