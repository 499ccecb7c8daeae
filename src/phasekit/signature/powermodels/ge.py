"""Grammatical evolution of a power model (Salinas Hilburg 2020, section 4.2.1.1.2, Appendix A):
:class:`GEPowerModel` and :func:`fit_ge`. 8-bit codons, 100 codons per chromosome, 200
individuals, crossover probability 0.9, per-codon mutation probability 1 / (number of grammar
rules), 3 wraps, RMSE fitness, the thesis's Grammar 1. Every expression's constants are then
fitted by local least squares (Levenberg-Marquardt) together with an intercept and a scale;
mapping, evaluation and fitting run in numba kernels
(:mod:`~phasekit.signature.powermodels.population`,
:mod:`~phasekit.signature.powermodels.kernels`)."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any

import numpy as np
import pandas as pd

from phasekit.errors import InputError, UsageError
from phasekit.options import Rule
from phasekit.results import check_version, plain
from phasekit.signature.powermodels.expression import Program, compile_expression, merge_numbers
from phasekit.signature.powermodels.features import (
    as_frame,
    candidate_features,
    counter_matrix,
    target_values,
)
from phasekit.signature.powermodels.grammar import build_grammar, map_genome
from phasekit.signature.powermodels.kernels import evaluate_program, fit_constants
from phasekit.signature.powermodels.population import grammar_tables, map_population
from phasekit.signature.powermodels.protocol import MODEL_VERSION
from phasekit.signature.powermodels.split import validation_rows
from phasekit.signature.powermodels.symbolic import NUMPY_FUNCTIONS, equation

__all__ = ["SETTINGS", "GEPowerModel", "fit_ge", "setting_rules"]

#: The chance (one-sided, before the correction for the expressions compared) at which an
#: expression's lower validation error than the training mean's may be luck (ours).
BEAT_LEVEL = 0.05
#: The settings of :func:`fit_ge` (its keywords but the data, ``seed``, ``progress`` and
#: ``validation_split``), as :class:`~phasekit.signature.powermodels.PowerModelOptions`
#: takes them.
SETTINGS = ("grammar", "population", "codons", "generations", "crossover", "mutation",
            "wraps", "tournament", "elite", "fit_samples", "iterations", "max_nodes",
            "restarts", "patience", "validation", "candidates", "margin")
_COUNTS = ("population", "codons", "generations", "tournament", "fit_samples", "max_nodes",
           "restarts", "candidates")


def setting_rules(settings: Mapping[str, Any]) -> list[Rule]:
    """The constraints on the settings of :func:`fit_ge` that ``settings`` gives (a
    :data:`SETTINGS` name -> its value; ``mutation`` None is the grammar's own), each
    ``(parameter, holds, expected)``; ``elite`` is checked against ``population`` when both
    are given."""
    rules: list[Rule] = [(name, settings[name] >= 1, "expected a positive number")
                         for name in _COUNTS if name in settings]
    rules += [(name, settings[name] >= 0, "expected a value >= 0")
              for name in ("wraps", "patience", "margin") if name in settings]
    rules += [(name, 0 <= settings[name] <= 1, "expected a probability")
              for name in ("crossover", "mutation")
              if name in settings and settings[name] is not None]
    if "validation" in settings:
        rules.append(("validation", 0 <= settings["validation"] < 1,
                      "expected 0 <= share < 1"))
    if "elite" in settings:
        elite, population = settings["elite"], settings.get("population")
        rules.append(("elite", elite >= 0 and (population is None or elite < population),
                      "expected 0 <= elite < population" + (
                          f" (population={population})" if population is not None else "")))
    if "grammar" in settings:
        try:
            build_grammar(settings["grammar"], 1)
        except UsageError as exc:
            rules.append(("grammar", False, exc.detail))
    return rules


@dataclass(frozen=True)
class GEPowerModel:
    """An expression found by grammatical evolution: ``P = intercept + slope * f(X / scales)``
    with ``f`` the evolved ``expression`` over variables ``x0..`` (= ``features[i] /
    scales[i]``) and its fitted ``constants``; :attr:`text` is the readable form in raw
    counter units. Predictions are limited to ``bounds`` (W; None: unlimited) and a
    prediction that is not a number (0/0 on an unseen input) is ``fallback_w``."""

    features: tuple[str, ...]
    scales: tuple[float, ...]
    expression: str
    constants: tuple[float, ...]
    intercept: float
    slope: float
    target: str = "power_w"
    grammar: str = "thesis"
    genome: tuple[int, ...] = ()
    rmse_train: float = math.nan
    generations: int = 0
    seed: int = 0
    history: tuple[float, ...] = ()
    meta: Mapping[str, Any] = field(default_factory=dict)
    bounds: tuple[float, float] | None = None
    fallback_w: float | None = None

    @property
    def program(self) -> Program:
        return compile_expression(self.expression, [f"x{i}" for i in range(len(self.features))])

    def unbounded(self, X: pd.DataFrame) -> np.ndarray:
        """The expression's value, without the output bounds."""
        A = counter_matrix(X, self.features) / np.asarray(self.scales, float)
        program = self.program
        f = evaluate_program(program.ops, program.args, np.asarray(self.constants, float),
                             np.ascontiguousarray(A))
        return self.intercept + self.slope * f

    def predict(self, X: pd.DataFrame) -> np.ndarray:
        return _bounded(self.unbounded(X), self.bounds, self.fallback_w)

    @property
    def text(self) -> str:
        """The model as an equation in raw counter units with its constants folded, e.g.
        ``power_w = 12.1 + 3.1e-10*C2/C1 + ...`` (without the output bounds). Four significant
        digits, more when four would change a prediction by over 1e-3 (relative) at typical
        counter values."""
        tree = self.program.tree
        placeholders = [f"v{i}" for i in range(len(self.features))]
        probe = np.random.default_rng(0).uniform(0.5, 1.5, (16, len(self.features))) \
            * np.asarray(self.scales, float)
        frame = pd.DataFrame(probe, columns=list(self.features))
        with np.errstate(all="ignore"):
            exact = self.unbounded(frame)
        digits = 4
        for digits in (4, 6, 9, 17):
            text = equation(tree, self.constants, self.scales, self.intercept, self.slope,
                            digits, placeholders)
            namespace = {**NUMPY_FUNCTIONS, **{p: probe[:, i] for i, p in enumerate(placeholders)}}
            try:
                with np.errstate(all="ignore"):
                    value = eval(text, {"__builtins__": {}}, namespace)  # our own text
            except (SyntaxError, NameError, ZeroDivisionError, TypeError):
                break
            finite = np.isfinite(exact)
            if np.all(np.abs(np.broadcast_to(value, exact.shape)[finite] - exact[finite])
                      <= 1e-3 * np.maximum(np.abs(exact[finite]), 1e-12)):
                break
        names = [str(f) for f in self.features]
        return f"{self.target} = " + equation(tree, self.constants, self.scales,
                                                self.intercept, self.slope, digits, names)

    def to_dict(self) -> dict[str, Any]:
        return plain({"kind": "power_model", "version": MODEL_VERSION, "model": "ge",
                      "target": self.target, "features": list(self.features),
                      "scales": list(self.scales), "expression": self.expression,
                      "constants": list(self.constants), "intercept": self.intercept,
                      "slope": self.slope, "text": self.text, "grammar": self.grammar,
                      "genome": list(self.genome), "rmse_train": self.rmse_train,
                      "generations": self.generations, "seed": self.seed,
                      "history": list(self.history), "meta": dict(self.meta),
                      "bounds": None if self.bounds is None else list(self.bounds),
                      "fallback_w": self.fallback_w})

    @staticmethod
    def from_dict(data: dict[str, Any], source: str | None = None) -> GEPowerModel:
        check_version(data, "power_model", MODEL_VERSION, source)
        try:
            model = GEPowerModel(
                features=tuple(str(f) for f in data["features"]),
                scales=tuple(float(s) for s in data["scales"]),
                expression=str(data["expression"]),
                constants=tuple(float(c) for c in data["constants"]),
                intercept=float(data["intercept"]), slope=float(data["slope"]),
                target=str(data.get("target", "power_w")),
                grammar=str(data.get("grammar", "thesis")),
                genome=tuple(int(c) for c in data.get("genome", ())),
                rmse_train=math.nan if data.get("rmse_train") is None
                else float(data["rmse_train"]),
                generations=int(data.get("generations", 0)), seed=int(data.get("seed", 0)),
                history=tuple(math.nan if h is None else float(h)
                              for h in data.get("history", ())),
                meta=dict(data.get("meta") or {}),
                bounds=None if data.get("bounds") is None
                else (float(data["bounds"][0]), float(data["bounds"][1])),
                fallback_w=None if data.get("fallback_w") is None
                else float(data["fallback_w"]))
            if len(model.scales) != len(model.features):
                raise ValueError("features and scales differ in length")
            program = model.program
            if len(program.constants) != len(model.constants):
                raise ValueError("the expression and its constants do not match")
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"malformed GE power model: {exc}", path=source) from None
        return model


@dataclass
class _Evaluator:
    """Fitness of a population: mapping and compiling (numba), fitting the constants (numba),
    RMSE on every row of ``X``; fits are cached by expression structure."""

    tables: tuple[np.ndarray, ...]
    X: np.ndarray
    y: np.ndarray
    X_fit: np.ndarray
    y_fit: np.ndarray
    wraps: int
    max_nodes: int
    iterations: int
    cache: dict[bytes, tuple[float, Any, np.ndarray, np.ndarray]] = field(default_factory=dict)
    fits: int = 0

    def __call__(self, genomes: np.ndarray) -> tuple[np.ndarray, np.ndarray, list[Any]]:
        """Fitness (RMSE; inf when invalid), codons read, and (fitted [a, b, constants], ops,
        args, structure key) of each genome (None when invalid)."""
        ops, args, consts, n_ops, n_consts, used, status = map_population(
            genomes, self.wraps, *self.tables, self.max_nodes)
        fitness = np.full(len(genomes), math.inf)
        found: list[Any] = [None] * len(genomes)
        for g in np.flatnonzero(status == 1):
            n = n_ops[g]
            o, a = ops[g, :n], args[g, :n]
            key = o.tobytes() + a.tobytes()
            entry = self.cache.get(key)
            if entry is None:
                self.fits += 1
                fitted, cost = fit_constants(o, a, consts[g, :n_consts[g]], self.X_fit,
                                             self.y_fit, self.iterations)
                rmse = math.inf
                if math.isfinite(cost):
                    f = evaluate_program(o, a, fitted[2:], self.X)
                    rmse = float(np.sqrt(np.mean((fitted[0] + fitted[1] * f - self.y) ** 2)))
                entry = (rmse if math.isfinite(rmse) else math.inf, fitted, o.copy(), a.copy())
                self.cache[key] = entry
            fitness[g] = entry[0]
            found[g] = (entry[1], entry[2], entry[3], key)
        return fitness, used, found


def _bounded(predicted: np.ndarray, bounds: tuple[float, float] | None,
             fallback: float | None) -> np.ndarray:
    """Predictions limited to ``bounds``; NaN (0/0) replaced by ``fallback``."""
    out = np.asarray(predicted, float)
    if fallback is not None:
        out = np.where(np.isnan(out), fallback, out)
    if bounds is not None:
        out = np.clip(out, bounds[0], bounds[1])
    return out


def _output_bounds(y: np.ndarray, margin: float) -> tuple[float, float]:
    low, high = float(np.min(y)), float(np.max(y))
    extra = margin * (high - low)
    return low - extra, high + extra


def _evolve(evaluate: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
            rng: np.random.Generator, *, population: int, codons: int, generations: int,
            crossover: float, p_mut: float, tournament: int, elite: int, patience: int,
            report: Callable[[int, float], None]) -> tuple[np.ndarray, np.ndarray, list[float]]:
    """One run of the evolution: the final population, its fitness and the best fitness of
    every generation. Stops early after ``patience`` generations without a 1e-4 (relative)
    improvement of the best fitness (0: never)."""
    pop = rng.integers(0, 256, size=(population, codons), dtype=np.uint8)
    fitness, used = evaluate(pop)
    for _ in range(10):  # redraw individuals that do not map at all
        invalid = ~np.isfinite(fitness)
        if not invalid.any():
            break
        pop[invalid] = rng.integers(0, 256, size=(int(invalid.sum()), codons), dtype=np.uint8)
        fitness[invalid], used[invalid] = evaluate(pop[invalid])
    history = [float(np.min(fitness))]
    n_children = population - elite
    n_pairs = (n_children + 1) // 2
    last_gain = 0
    for generation in range(generations):
        order = np.argsort(fitness, kind="stable")
        contenders = rng.integers(0, population, size=(n_pairs, 2, tournament))
        winners = np.take_along_axis(
            contenders, np.argmin(fitness[contenders], axis=2)[..., None], axis=2)[..., 0]
        first, second = winners[:, 0], winners[:, 1]
        cross = rng.random(n_pairs) < crossover
        reach = np.maximum(np.minimum(used[first], used[second]), 2)
        points = (rng.random(n_pairs) * (reach - 1)).astype(np.int64) + 1
        swap = (np.arange(codons)[None, :] >= points[:, None]) & cross[:, None]
        offspring = np.concatenate([np.where(swap, pop[second], pop[first]),
                                    np.where(swap, pop[first], pop[second])])[:n_children]
        flips = rng.random(offspring.shape) < p_mut
        offspring[flips] = rng.integers(0, 256, size=int(flips.sum()), dtype=np.uint8)
        child_fitness, child_used = evaluate(offspring)
        keep = order[:elite]
        pop = np.concatenate([pop[keep], offspring])
        fitness = np.concatenate([fitness[keep], child_fitness])
        used = np.concatenate([used[keep], child_used])
        best = float(np.min(fitness))
        if best < history[last_gain] * (1 - 1e-4):
            last_gain = len(history)
        history.append(best)
        report(generation + 1, best)
        if patience and len(history) - 1 - last_gain >= patience:
            break
    return pop, fitness, history


def beats_the_mean(guess: np.ndarray, y: np.ndarray, mean: float, *, compared: int,
                   level: float = BEAT_LEVEL) -> bool:
    """Whether predictions ``guess`` of ``y`` have a lower mean squared error than the
    constant ``mean`` beyond chance: a one-sided paired z test on the rows' differences of
    squared errors at ``level``, Bonferroni-corrected for the ``compared`` expressions the
    best one was picked from (ours: the best of many expressions on a few validation rows
    beats the mean by luck; on power that ignores the counters one did by 0.8 % and lost 8 %
    on the test rows)."""
    d = (guess - y) ** 2 - (y - mean) ** 2
    if d.size < 2 or not np.all(np.isfinite(d)):
        return False
    spread = float(np.std(d, ddof=1))
    if spread == 0:
        return bool(d.mean() < 0)
    z = float(d.mean()) / (spread / math.sqrt(d.size))
    return z < -NormalDist().inv_cdf(1.0 - level / max(1, compared))


def fit_ge(X: pd.DataFrame, y: Any = "power_w", *, features: Sequence[str] | None = None,
           grammar: str = "thesis", population: int = 200, codons: int = 100,
           generations: int = 1000, crossover: float = 0.9, mutation: float | None = None,
           wraps: int = 3, tournament: int = 2, elite: int = 2, fit_samples: int = 300,
           iterations: int = 10, max_nodes: int = 60, restarts: int = 3,
           patience: int = 250, validation: float = 0.2, validation_split: str = "time",
           candidates: int = 5, margin: float = 0.1, seed: int = 0,
           progress: Callable[[str, float], None] | None = None) -> GEPowerModel:
    """Grammatical evolution of a power model (section 4.2.1.1.2, Appendix A).

    The thesis's settings: ``population`` 200, ``codons`` 100 of 8 bits, ``crossover`` 0.9,
    ``mutation`` per codon 1 / number of grammar rules (default; 0.2 for Grammar 1, as the
    authors' JECO library computes it), ``wraps`` 3, RMSE fitness, ``grammar`` "thesis"
    (Grammar 1; "extended" adds a linear term, or give a BNF text with ``{vars}``).

    Our choices where the thesis is silent: binary ``tournament`` selection, integer-flip
    mutation and generational replacement as in JECO, plus the ``elite`` best individuals
    kept; one-point crossover at the same point of both parents, drawn inside the codons
    both parents use (as PonyGE2 does: a cut beyond them changes nothing); up to
    ``generations`` 1000 per run. Each expression's constants, with an intercept and a scale
    (``P = a + b f(X; c)``), are fitted by Levenberg-Marquardt (``iterations`` steps) on a
    fixed random subset of ``fit_samples`` evolution rows; the fitness is the RMSE on every
    evolution row. Expressions longer than ``max_nodes`` or without a variable are invalid
    (infinite fitness), as are those whose codons run out. Counters enter divided by their
    mean absolute value (numerical range; the printed model is in raw units).

    Robustness on real data (our choices): ``restarts`` independent runs (seeds
    ``[seed, r]``), each stopped after ``patience`` generations without improvement;
    ``validation`` (20 %) of the training rows — the last ones as ``X`` orders them
    (``validation_split="time"``) or a random share ("random") — take no part in the
    evolution, and the model is the one of the ``candidates`` best distinct expressions of
    every run with the lowest validation RMSE, or the evolution rows' mean power when no
    expression beats it there beyond chance (:func:`beats_the_mean`; ``meta["selected"]``
    says which); its constants are then
    refitted on every training row. Predictions are limited to the training range of the
    target widened by ``margin`` (10 %) of that range on both sides, and a prediction that
    is not a number (0/0) is the training mean. Mapping, compiling, evaluation and fitting
    run in numba kernels; fits are cached by expression structure. Seeded: the same data and
    ``seed`` give the same model.
    """
    X = as_frame(X)
    target_name = y if isinstance(y, str) else "power_w"
    names = candidate_features(X, features, y if isinstance(y, str) else None)
    values = target_values(X, y)
    A = counter_matrix(X, names)
    if len(values) < 3:
        raise InputError(f"{len(values)} rows: too few to fit a model")
    settings = {"population": population, "codons": codons, "generations": generations,
                "crossover": crossover, "mutation": mutation, "wraps": wraps,
                "tournament": tournament, "elite": elite, "fit_samples": fit_samples,
                "max_nodes": max_nodes, "restarts": restarts, "patience": patience,
                "validation": validation, "candidates": candidates, "margin": margin}
    for name, holds, expected in setting_rules(settings):
        if not holds:
            raise UsageError(expected, parameter=name, value=settings[name])
    gram = build_grammar(grammar, len(names))
    p_mut = 1.0 / gram.n_rules if mutation is None else float(mutation)
    scales = np.mean(np.abs(A), axis=0)
    scales = np.where(scales > 0, scales, 1.0)
    Xs = np.ascontiguousarray(A / scales)
    rng = np.random.default_rng([seed, 17])
    evolve_rows, check_rows = validation_rows(len(values), validation, validation_split, rng)
    X_evo, y_evo = np.ascontiguousarray(Xs[evolve_rows]), values[evolve_rows]
    if len(y_evo) > fit_samples:
        rows = np.sort(rng.choice(len(y_evo), fit_samples, replace=False))
    else:
        rows = np.arange(len(y_evo))
    evaluator = _Evaluator(tables=grammar_tables(gram, tuple(f"x{i}" for i in range(len(names)))),
                           X=X_evo, y=y_evo, X_fit=np.ascontiguousarray(X_evo[rows]),
                           y_fit=y_evo[rows], wraps=wraps, max_nodes=max_nodes,
                           iterations=iterations)

    def evaluate(genomes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        fitness, used, _ = evaluator(genomes)
        return fitness, np.minimum(used, codons)

    started = time.perf_counter()
    evo_bounds = _output_bounds(y_evo, margin)
    X_check, y_check = np.ascontiguousarray(Xs[check_rows]), values[check_rows]
    pool: dict[bytes, tuple[float, int, np.ndarray, Any]] = {}  # key -> (score, run, genome, fit)
    runs: list[dict[str, Any]] = []
    histories: list[list[float]] = []
    for run in range(restarts):
        def report(generation: int, best: float, run: int = run) -> None:
            if progress is not None:
                progress(f"run {run + 1}/{restarts}, generation {generation}/{generations}, "
                         f"best RMSE {best:.4g}", (run + generation / generations) / restarts)

        pop, fitness, history = _evolve(
            evaluate, np.random.default_rng([seed, run]), population=population, codons=codons,
            generations=generations, crossover=crossover, p_mut=p_mut, tournament=tournament,
            elite=elite, patience=patience, report=report)
        histories.append(history)
        order = np.argsort(fitness, kind="stable")
        _, _, found = evaluator(pop[order[: 4 * candidates]])
        taken = 0
        best_check = math.inf
        for genome, entry in zip(pop[order[: 4 * candidates]], found, strict=True):
            if entry is None or taken >= candidates:
                continue
            params, o, a, key = entry
            if key in pool:
                taken += 1
                continue
            taken += 1
            score = float(evaluator.cache[key][0])
            if len(y_check):
                with np.errstate(all="ignore"):
                    guess = params[0] + params[1] * evaluate_program(o, a, params[2:], X_check)
                guess = _bounded(guess, evo_bounds, float(np.mean(y_evo)))
                score = float(np.sqrt(np.mean((guess - y_check) ** 2)))
                score = score if math.isfinite(score) else math.inf
            best_check = min(best_check, score)
            pool[key] = (score, run, genome.copy(), entry)
        runs.append({"generations": len(history) - 1, "train_rmse": history[-1],
                     "validation_rmse": best_check if len(y_check) else None})
    if not pool or not math.isfinite(min(p[0] for p in pool.values())):
        raise InputError("grammatical evolution found no valid expression (are the counters "
                         "all zero or the target constant?)")
    score, run, genome, (params, ops, args, _) = min(pool.values(), key=lambda p: (p[0], p[1]))
    mean_check = float(np.sqrt(np.mean((y_check - np.mean(y_evo)) ** 2))) if len(y_check) \
        else math.inf
    if len(y_check) and score < mean_check:
        with np.errstate(all="ignore"):
            guess = params[0] + params[1] * evaluate_program(ops, args, params[2:], X_check)
        guess = _bounded(guess, evo_bounds, float(np.mean(y_evo)))
        if not beats_the_mean(guess, y_check, float(np.mean(y_evo)), compared=len(pool)):
            score = mean_check
    bounds = _output_bounds(values, margin)
    fallback = float(np.mean(values))
    meta = {"population": population, "codons": codons, "crossover": crossover,
            "mutation": p_mut, "wraps": wraps, "tournament": tournament, "elite": elite,
            "fit_samples": len(rows), "restarts": restarts, "patience": patience,
            "validation_rows": len(check_rows), "validation_split": validation_split,
            "margin": margin, "runs": runs, "validation_rmse": score,
            "validation_rmse_mean": mean_check if len(y_check) else None,
            "expressions_fitted": evaluator.fits}
    if len(y_check) and score >= mean_check:
        meta |= {"selected": "the training mean: no expression beat it on the validation rows "
                             "beyond chance",
                 "fit_time_s": time.perf_counter() - started}
        return GEPowerModel(
            features=names, scales=tuple(float(s) for s in scales), expression="0.0",
            constants=(0.0,), intercept=fallback, slope=0.0, target=target_name,
            grammar=gram.name, rmse_train=float(np.sqrt(np.mean((values - fallback) ** 2))),
            generations=generations, seed=seed, history=tuple(histories[0]), meta=meta,
            bounds=bounds, fallback_w=fallback)
    tokens, _ = map_genome(genome, gram, wraps=wraps)
    program = compile_expression(tokens or [], [f"x{i}" for i in range(len(names))])
    # refit the chosen expression's constants on every training row
    params_all, cost = fit_constants(program.ops, program.args, params[2:].copy(), Xs,
                                     values, 100)
    with np.errstate(all="ignore"):
        before = params[0] + params[1] * evaluate_program(program.ops, program.args, params[2:], Xs)
    rmse = float(np.sqrt(np.mean((before - values) ** 2)))
    if math.isfinite(cost) and not math.sqrt(cost / len(values)) > rmse:
        params, rmse = params_all, math.sqrt(cost / len(values))
    expression = " ".join(merge_numbers(tokens or []))
    meta |= {"selected": f"run {run + 1}: the lowest validation RMSE" if len(y_check)
             else f"run {run + 1}: the lowest training RMSE (too few rows to validate)",
             "fit_time_s": time.perf_counter() - started}
    return GEPowerModel(
        features=names, scales=tuple(float(s) for s in scales), expression=expression,
        constants=tuple(float(c) for c in params[2:]), intercept=float(params[0]),
        slope=float(params[1]), target=target_name, grammar=gram.name,
        genome=tuple(int(c) for c in genome), rmse_train=float(rmse),
        generations=generations, seed=seed, history=tuple(histories[run]), meta=meta,
        bounds=bounds, fallback_w=fallback)
