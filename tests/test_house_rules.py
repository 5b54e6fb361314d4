"""House rules the whole tree keeps: no module reaches into another's private names, every error
the project raises on purpose derives from `sog.errors.SogError` and is defined once, and every
third-party import is declared in pyproject.toml."""
from __future__ import annotations

import ast
import importlib
import importlib.metadata
import inspect
import pkgutil
import re
import sys
import tomllib
from pathlib import Path

import pytest

from sog.errors import SogError

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("sog", "networks", "actors", "learners", "launch")
# imported where present, each where the code says what it does without it
OPTIONAL = {"LiteEFG": "the second C++ reference of `sog bench cfr` (pins jax < 0.8, so never an extra)"}


def _sources(*tops: str):
    for top in tops:
        yield from sorted((ROOT / top).rglob("*.py"))


def _imports(path: Path):
    """(line, module, names) of every `from module import names` and `import module` in the file."""
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.lineno, node.module, [a.name for a in node.names]
        elif isinstance(node, ast.Import):
            for a in node.names:
                yield node.lineno, a.name, []


def test_no_module_imports_another_modules_private_names():
    found = [f"{p.relative_to(ROOT)}:{line}: from {module} import {name}"
             for p in _sources(*PACKAGES, "tests") for line, module, names in _imports(p)
             if module.split(".")[0] in PACKAGES
             for name in names if name.startswith("_") and not name.startswith("__")]
    assert not found, "\n".join(found)


def _project_modules():
    for top in PACKAGES:
        package = importlib.import_module(top)
        yield package
        for info in pkgutil.walk_packages(package.__path__, top + "."):
            yield importlib.import_module(info.name)


@pytest.mark.slow          # imports every module (JAX, Ray, flax: about 15 CPU s)
def test_every_error_class_derives_from_sog_error_and_is_defined_once():
    defined: dict[str, list[str]] = {}
    outside = []
    for module in _project_modules():
        for name, cls in inspect.getmembers(module, inspect.isclass):
            # errors: Exception's subclasses (a KeyboardInterrupt that carries a summary is a signal)
            if issubclass(cls, Exception) and cls.__module__ == module.__name__:
                defined.setdefault(name, []).append(module.__name__)
                if not issubclass(cls, SogError):
                    outside.append(f"{module.__name__}.{name}")
    assert not outside, f"not derived from SogError: {outside}"
    twice = {name: where for name, where in defined.items() if len(where) > 1}
    assert not twice, twice
    assert len(defined) > 20


def _declared_distributions() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    specs = list(project["dependencies"]) + [s for extra in project["optional-dependencies"].values()
                                             for s in extra]
    return {re.split(r"[\[<>=~! ;]", s, maxsplit=1)[0].lower().replace("_", "-") for s in specs}


def test_every_third_party_import_is_declared():
    """Each module imported from outside the project and the standard library belongs to a
    distribution pyproject.toml names (a dependency or an extra)."""
    owners = importlib.metadata.packages_distributions()
    declared = _declared_distributions()
    missing = []
    for p in _sources(*PACKAGES):
        for line, module, _ in _imports(p):
            top = module.split(".")[0]
            if top in PACKAGES or top in OPTIONAL or top in sys.stdlib_module_names or top == "__future__":
                continue
            dists = {d.lower().replace("_", "-") for d in owners.get(top, [top])}
            if not dists & declared:
                missing.append(f"{p.relative_to(ROOT)}:{line}: {module} ({', '.join(sorted(dists))})")
    assert not missing, "\n".join(missing)
