"""The server power breakdown (Salinas Hilburg 2020, eqs. 4.15-4.17): :class:`ServerPowerModel` with
polynomial leakage and fan fits (:func:`fit_leakage`, :func:`fit_fan`) and two dynamic parts
fitted with any model kind (:data:`MODELS`, :func:`fit_model`). A server model holds other
models, so the reader of any stored model (:func:`power_model_from_dict`) is here too."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from phasekit.errors import InputError, PhasekitError, UsageError
from phasekit.results import check_version, plain
from phasekit.signature.powermodels.features import as_frame, default_features, numeric_column
from phasekit.signature.powermodels.ge import GEPowerModel, fit_ge
from phasekit.signature.powermodels.linear import LinearPowerModel, fit_linear, fit_pls
from phasekit.signature.powermodels.protocol import MODEL_VERSION

__all__ = [
    "MODELS",
    "ServerPowerModel",
    "fit_fan",
    "fit_leakage",
    "fit_model",
    "fit_polynomial",
    "fit_server",
    "power_model_from_dict",
    "read_power_model",
]

MODELS = ("linear", "pls", "ge")


def fit_polynomial(x: Any, y: Any, degree: int) -> tuple[float, ...]:
    """Least-squares polynomial coefficients in ascending order (c0, c1, ...), fitted on a
    scaled domain and converted back to raw units."""
    xv = np.asarray(x, float)
    yv = np.asarray(y, float)
    if xv.shape != yv.shape or xv.ndim != 1:
        raise UsageError("x and y: expected two 1-D arrays of the same length")
    if not (np.isfinite(xv).all() and np.isfinite(yv).all()):
        raise InputError("missing or non-finite values in the polynomial data")
    if len(np.unique(xv)) <= degree:
        raise InputError(f"{len(np.unique(xv))} distinct x values: too few for degree {degree}")
    poly = np.polynomial.Polynomial.fit(xv, yv, degree).convert()
    coef = np.zeros(degree + 1)
    coef[: len(poly.coef)] = poly.coef
    return tuple(float(c) for c in coef)


def fit_leakage(temperature_c: Any, leakage_w: Any, *, degree: int = 2) -> tuple[float, ...]:
    """Eq. 4.16: ``alpha0 + alpha1 T + alpha2 T^2`` (the second-order Taylor expansion of an
    exponential), T the CPU temperature (degrees C)."""
    return fit_polynomial(temperature_c, leakage_w, degree)


def fit_fan(rpm: Any, fan_w: Any, *, degree: int = 3) -> tuple[float, ...]:
    """Eq. 4.17: ``beta0 + beta1 rpm + beta2 rpm^2 + beta3 rpm^3``."""
    return fit_polynomial(rpm, fan_w, degree)


def _poly(coef: Sequence[float], x: np.ndarray) -> np.ndarray:
    out = np.zeros_like(x)
    for c in reversed(coef):
        out = out * x + c
    return out


@dataclass(frozen=True)
class ServerPowerModel:
    """Eq. 4.15: ``P_total = P_idle + P_leak(T) + P_CPU,dyn + P_fan(rpm) + P_Mem,dyn +
    P_disk`` (defaults: the thesis's P_idle = 50.0 W, P_disk = 16.75 W, section 4.2.1)."""

    cpu: Any
    mem: Any
    leakage: tuple[float, ...]
    fan: tuple[float, ...]
    idle_w: float = 50.0
    disk_w: float = 16.75
    temperature: str = "temp_c"
    rpm: str = "fan_rpm"
    target: str = "power_w"
    meta: Mapping[str, Any] = field(default_factory=dict)

    @property
    def features(self) -> tuple[str, ...]:
        names: list[str] = []
        for name in (*self.cpu.features, *self.mem.features, self.temperature, self.rpm):
            if name not in names:
                names.append(name)
        return tuple(names)

    def components(self, X: pd.DataFrame) -> pd.DataFrame:
        """The breakdown per row: idle, leakage, cpu_dyn, fan, mem_dyn, disk and total (W)."""
        X = as_frame(X)
        temp = numeric_column(X, self.temperature, None)
        rpm = numeric_column(X, self.rpm, None)
        parts = pd.DataFrame({
            "idle_w": np.full(len(X), self.idle_w),
            "leak_w": _poly(self.leakage, temp),
            "cpu_dyn_w": self.cpu.predict(X),
            "fan_w": _poly(self.fan, rpm),
            "mem_dyn_w": self.mem.predict(X),
            "disk_w": np.full(len(X), self.disk_w),
        }, index=X.index)
        parts["total_w"] = parts.sum(axis=1)
        return parts

    def predict(self, X: pd.DataFrame) -> np.ndarray:
        return self.components(X)["total_w"].to_numpy()

    @property
    def expression(self) -> str:
        def poly(coef: Sequence[float], x: str) -> str:
            return " + ".join(f"{c:.4g}" + (f"*{x}" if k else "") + (f"^{k}" if k > 1 else "")
                              for k, c in enumerate(coef))

        def part(model: Any) -> str:
            return model.text.split(" = ", 1)[-1] if isinstance(model, GEPowerModel) \
                else model.expression

        return (f"{self.idle_w:g} (idle) + [{poly(self.leakage, self.temperature)}] (leakage) "
                f"+ [{part(self.cpu)}] (CPU dynamic) + [{poly(self.fan, self.rpm)}] (fan) + "
                f"[{part(self.mem)}] (memory dynamic) + {self.disk_w:g} (disk)")

    def to_dict(self) -> dict[str, Any]:
        return plain({"kind": "power_model", "version": MODEL_VERSION, "model": "server",
                      "target": self.target, "features": list(self.features),
                      "cpu": self.cpu.to_dict(), "mem": self.mem.to_dict(),
                      "leakage": list(self.leakage), "fan": list(self.fan),
                      "idle_w": self.idle_w, "disk_w": self.disk_w,
                      "temperature": self.temperature, "rpm": self.rpm,
                      "meta": dict(self.meta)})

    @staticmethod
    def from_dict(data: dict[str, Any], source: str | None = None) -> ServerPowerModel:
        check_version(data, "power_model", MODEL_VERSION, source)
        try:
            return ServerPowerModel(
                cpu=power_model_from_dict(data["cpu"], source),
                mem=power_model_from_dict(data["mem"], source),
                leakage=tuple(float(c) for c in data["leakage"]),
                fan=tuple(float(c) for c in data["fan"]),
                idle_w=float(data.get("idle_w", 50.0)), disk_w=float(data.get("disk_w", 16.75)),
                temperature=str(data.get("temperature", "temp_c")),
                rpm=str(data.get("rpm", "fan_rpm")), target=str(data.get("target", "power_w")),
                meta=dict(data.get("meta") or {}))
        except PhasekitError:  # a nested part's own message (an InputError is a ValueError)
            raise
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"malformed server power model: {exc}", path=source) from None


def fit_model(model: str, X: pd.DataFrame, y: Any, features: Sequence[str] | None, seed: int,
              options: Mapping[str, Any]) -> Any:
    """A model of kind ``model`` (:data:`MODELS`) fitted with ``options``: what
    :func:`fit_server` and :func:`~phasekit.signature.powermodels.fit.fit_power_model` run."""
    if model == "linear":
        return fit_linear(X, y, features=features, seed=seed, **options)
    if model == "pls":
        return fit_pls(X, y, features=features, seed=seed, **options)
    if model == "ge":
        return fit_ge(X, y, features=features, seed=seed, **options)
    raise UsageError(f"expected one of {', '.join(MODELS)}", parameter="model", value=model)


def fit_server(frame: pd.DataFrame, *, leakage: Sequence[float], fan: Sequence[float],
               total: str = "power_w", mem: str = "mem_dyn_w", temperature: str = "temp_c",
               rpm: str = "fan_rpm", idle_w: float = 50.0, disk_w: float = 16.75,
               model: str = "linear", features: Sequence[str] | None = None, seed: int = 0,
               **options: Any) -> ServerPowerModel:
    """The whole-server model of 4.15 the thesis's way (section 4.2.1): leakage and fan
    polynomials from their own experiments (:func:`fit_leakage`, :func:`fit_fan`), memory
    dynamic power from the DIMM sensor column ``mem``, and the CPU dynamic power as what is
    left of the measured ``total`` (``total - idle - leak(T) - fan(rpm) - mem - disk``);
    both dynamic parts are fitted with ``model`` on the counters ``features`` (default: the
    numeric columns other than the power, temperature and fan columns)."""
    frame = as_frame(frame)
    temp = numeric_column(frame, temperature, None)
    speed = numeric_column(frame, rpm, None)
    measured = numeric_column(frame, total, None)
    memory = numeric_column(frame, mem, None)
    if features is None:
        skip = {total, mem, temperature, rpm}
        features = [f for f in default_features(frame, total) if f not in skip
                    and not str(f).endswith("_w")]
    cpu_dyn = measured - idle_w - _poly(tuple(leakage), temp) - _poly(tuple(fan), speed) \
        - memory - disk_w
    cpu_model = fit_model(model, frame, cpu_dyn, features, seed, options)
    mem_model = fit_model(model, frame, memory, features, seed, options)
    return ServerPowerModel(cpu=cpu_model, mem=mem_model, leakage=tuple(leakage),
                            fan=tuple(fan), idle_w=idle_w, disk_w=disk_w,
                            temperature=temperature, rpm=rpm, target=total)


def power_model_from_dict(data: Mapping[str, Any], source: str | None = None) -> Any:
    """Any power model stored by ``to_dict()`` (kind ``"power_model"``), or the model of a
    saved power-model fit (kind ``"power_model_fit"``, ``phasekit powermodel fit -o``)."""
    if (isinstance(data, Mapping) and data.get("kind") == "power_model_fit"
            and isinstance(data.get("model"), Mapping)):
        data = data["model"]
    data = dict(data) if isinstance(data, Mapping) else data
    check_version(data, "power_model", MODEL_VERSION, source)
    kind = data.get("model")
    if kind in ("linear", "pls"):
        return LinearPowerModel.from_dict(data, source)
    if kind == "ge":
        return GEPowerModel.from_dict(data, source)
    if kind == "server":
        return ServerPowerModel.from_dict(data, source)
    if kind == "boosting":
        from phasekit.signature.powermodels.boosting import BoostedPowerModel

        return BoostedPowerModel.from_dict(data, source)
    if kind == "average":
        from phasekit.signature.powermodels.average import AveragePowerModel

        members = data.get("members")
        if not isinstance(members, list) or len(members) < 2:
            raise InputError("malformed average power model: expected a list of at least two "
                             "'members'", path=source)
        return AveragePowerModel.of([power_model_from_dict(m, source) for m in members])
    raise InputError(f"unknown power model {kind!r} (expected linear, pls, ge, boosting, "
                     "average or server)", path=source)


def read_power_model(path: str | os.PathLike[str]) -> Any:
    """The power model in a JSON file: a stored model or a saved power-model fit (its model);
    InputError naming the file otherwise (a FIFO is refused, not waited on)."""
    from phasekit.io.inputs import read_json

    return power_model_from_dict(read_json(path, "a power model (JSON)"), os.fspath(path))
