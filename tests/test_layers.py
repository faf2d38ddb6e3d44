"""The packages stand in layers and every import of project code sits at a module's top.

scoring (the rules, pure) <- calibration (the board template, a user's calibration) <- vision (photo to
claimed tracks) <- models (the recipe that makes the weights) <- app (the page and the `ttr` commands):
a package imports only those left of it, so no two packages import each other. Imports inside a
function are kept for the training extra alone (torch, Ultralytics, ONNX), which a reader never needs.
"""
import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("scoring", "calibration", "vision", "models", "app")
# The training extra's packages, and onnxruntime's quantization (it needs onnx, of that extra).
OPTIONAL = {"torch", "torchvision", "ultralytics", "onnx", "onnxslim", "onnxruntime.quantization"}


def _modules():
    for pkg in LAYERS:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            yield pkg, path


def _imports(tree):
    """(node, top-level module name, inside a function) for every import statement."""
    inside = set()
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            inside.update(id(n) for n in ast.walk(fn) if n is not fn)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node, alias.name, id(node) in inside
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node, node.module, id(node) in inside


def test_the_layers_are_found():
    found = {pkg for pkg, _ in _modules()}
    assert found == set(LAYERS)


@pytest.mark.parametrize("pkg", LAYERS)
def test_a_package_imports_only_the_layers_below_it(pkg):
    allowed = set(LAYERS[:LAYERS.index(pkg) + 1])
    bad = []
    for p, path in _modules():
        if p != pkg:
            continue
        for node, name, _ in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            top = name.split(".")[0]
            if top in LAYERS and top not in allowed:
                bad.append(f"{path.relative_to(ROOT)}:{node.lineno} imports {name}")
    assert not bad, "\n".join(bad)


def test_no_import_inside_a_function_but_the_training_extra():
    bad = []
    for _, path in _modules():
        for node, name, inside in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            if inside and not any(name == o or name.startswith(o + ".") for o in OPTIONAL):
                bad.append(f"{path.relative_to(ROOT)}:{node.lineno} imports {name} inside a function")
    assert not bad, "\n".join(bad)


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_no_import_cycle_between_modules():
    names = {_module_name(path): path for _, path in _modules()}
    graph = {}
    for name, path in names.items():
        deps = set()
        for _, imported, inside in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            # `from a.b import c` may name the module a.b.c or a name in a.b
            for cand in (imported, imported.rsplit(".", 1)[0]):
                if cand in names and cand != name:
                    deps.add(cand)
                    break
        graph[name] = deps
    state, stack = {}, []

    def visit(n):
        state[n] = "open"
        stack.append(n)
        for d in sorted(graph[n]):
            if state.get(d) == "open":
                raise AssertionError("import cycle: " + " -> ".join(stack[stack.index(d):] + [d]))
            if d not in state:
                visit(d)
        stack.pop()
        state[n] = "done"

    for n in sorted(graph):
        if n not in state:
            visit(n)


def test_the_checks_can_fail(tmp_path):
    """The walkers see a function-level import and a backwards package import."""
    tree = ast.parse("import os\nfrom app.cli import main\ndef f():\n    from vision.read import Reader\n")
    found = [(name, inside) for _, name, inside in _imports(tree)]
    assert found == [("os", False), ("app.cli", False), ("vision.read", True)]
