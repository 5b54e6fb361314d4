"""A package's public names, imported from their modules on first use (PEP 562).

    __getattr__, __dir__ = lazy_exports(__name__, {"SearchSettings": "sog.search.settings", ...})
    __all__ = sorted(...)

so that importing one light module of a package (`sog.config`, `sog.search.settings`,
`sog.agents.api`) does not load the package's whole face (the solvers' numba code, every agent).
"""
import importlib
import sys
from collections.abc import Callable


def lazy_exports(package: str, exports: dict[str, str]) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """(`__getattr__`, `__dir__`) for `package`: `package.NAME` for NAME in `exports` (name -> the
    module defining it) is imported on first use and kept in the package's namespace."""
    namespace = sys.modules[package].__dict__

    def __getattr__(name: str):
        if name not in exports:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(exports[name]), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(exports))

    return __getattr__, __dir__
