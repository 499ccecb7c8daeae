"""phasekit's build backend: setuptools's, with the package's own dependencies added to a
wheel build's requirements (issue 20).

A wheel build (``pip install .`` builds one) runs :mod:`phasekit.warmup` on the built package
(``setup.py``), so that the wheel carries numba's compiled kernels and the first command
after the install does not compile for a minute; that needs phasekit's dependencies in the
isolated build environment. Editable installs (``pip install -e .``) and sdists need only
setuptools: their kernels compile at first use, into the source tree's ``__pycache__``.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F403 (the backend's other hooks, unchanged)

_PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"


def _dependencies() -> list[str]:
    with _PYPROJECT.open("rb") as file:
        return list(tomllib.load(file)["project"]["dependencies"])


def get_requires_for_build_wheel(config_settings: dict[str, Any] | None = None) -> list[str]:
    return [*_setuptools.get_requires_for_build_wheel(config_settings), *_dependencies()]
