"""Variants of the default energy fit tried on the real PaScal campaigns:
how far the default is from what the model family can do, and what the tried changes gave.

Same scoring as ``benchmarks/energy_real.py`` (its helpers): 10 training configurations,
the D-optimal design (deterministic; seed 0) and random designs (seeds 0-4), MPE over the
valid holdout, mean over the 22 campaigns (the real measurements kept beside the checkout,
``energy/pascal_dev``) and the worst campaign. Rows:

- ``default``: ``fit_model``'s defaults (the extended model, robust loss);
- ``oracle``: the default fitted on every valid configuration of the campaign and scored on
  them all: the model family's own floor on these data, no design can beat it;
- parameter variants through ``fit_model``'s keywords (``deviation_penalty``, ``prior``);
- ``OVER_SCALE`` variants: the robust loss's scale for over-predictions (a module constant,
  set for the row and restored);
- ``under soft-L1``: the robust loss with under-predictions (readings above the fit)
  down-weighted by a soft L1 of that scale (the default's is ``UNDER_SCALE``, 0.1);
  ``UNDER_SCALE 10``: those about squared (within 0.2 % for residuals up to 1), the
  earlier default;
- ``average with pt``: the geometric mean of the default's prediction and the thesis model's.

Run: ``python benchmarks/energy_variants.py [--quick]`` (``--quick``: the default and the
oracle only, written nowhere).
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pandas as pd

import _common
from energy_real import DATA, N_TRAIN, valid_runs

SECTION = "energy_variants"
RANDOM_SEEDS = (0, 1, 2, 3, 4)


class _Averaged:
    """The geometric mean of two fitted models' predictions, weight ``w`` on the first."""

    def __init__(self, first: Any, second: Any, w: float) -> None:
        self.first, self.second, self.w = first, second, w

    def predict_energy(self, f: Any, p: Any, n: Any) -> np.ndarray:
        return np.exp(self.w * np.log(self.first.predict_energy(f, p, n))
                      + (1 - self.w) * np.log(self.second.predict_energy(f, p, n)))


@contextmanager
def _constant(name: str, value: float) -> Iterator[None]:
    from phasekit.energy import fit as module

    before = getattr(module, name)
    setattr(module, name, value)
    try:
        yield
    finally:
        setattr(module, name, before)


@contextmanager
def _under_soft_l1(scale: float) -> Iterator[None]:
    from phasekit.energy import fit as module

    before = module.over_cost

    def cost(r: np.ndarray) -> np.ndarray:
        under = np.minimum(r, 0.0)
        soft = under * np.sqrt(2.0 / (np.sqrt(1.0 + (under / scale) ** 2) + 1.0))
        return np.where(r > 0, before(r), soft)

    module.over_cost = cost
    try:
        yield
    finally:
        module.over_cost = before


@contextmanager
def _nothing() -> Iterator[None]:
    yield


def score(fit: Callable[..., Any], context: Callable[[], Any] = _nothing,
          oracle: bool = False) -> dict[str, float]:
    """Mean MPE per campaign of ``fit(f, p, n, e, seed)`` under ``context``, per design."""
    from phasekit.energy.fit import choose_training, configurations, frequencies, mpe

    per: dict[str, dict[str, list[float]]] = {"doptimal": {}, "random": {}}
    with context():
        for path in sorted(DATA.glob("completo_*.csv")):
            name = path.stem.removeprefix("completo_")
            configs = configurations(pd.read_csv(path), source=str(path))
            valid = valid_runs(name, configs)
            f = frequencies(configs)
            p, n, e = (configs[c].to_numpy(float) for c in ("cores", "input", "energy_j"))
            if oracle:
                rows = np.flatnonzero(valid)
                model = fit(f[rows], p[rows], n[rows], e[rows], 0)
                per["doptimal"][name] = [mpe(model.predict_energy(f[rows], p[rows], n[rows]),
                                             e[rows])]
                continue
            for design, seeds in (("doptimal", (0,)), ("random", RANDOM_SEEDS)):
                for seed in seeds:
                    train = choose_training(configs, N_TRAIN, design=design, seed=seed,
                                            model="extended", with_time=False)
                    test = np.setdiff1d(np.arange(len(configs)), train)
                    good = test[valid[test]]
                    model = fit(f[train], p[train], n[train], e[train], seed)
                    per[design].setdefault(name, []).append(
                        mpe(model.predict_energy(f[good], p[good], n[good]), e[good]))
    out: dict[str, float] = {}
    for design, campaigns in per.items():
        if not campaigns:
            continue
        means = {k: float(np.mean(v)) for k, v in campaigns.items()}
        worst = max(means, key=means.__getitem__)
        out[f"{design} mean"] = float(np.mean(list(means.values())))
        out[f"{design} worst"] = means[worst]
        out[f"{design} worst campaign"] = worst  # type: ignore[assignment]
    return out


def variants(quick: bool) -> list[tuple[str, Callable[..., Any], Callable[[], Any], bool]]:
    from phasekit.energy.fit import fit_model

    def default(**options: Any) -> Callable[..., Any]:
        return lambda f, p, n, e, seed: fit_model(f, p, n, e, None, seed=seed, **options)

    def averaged(w: float) -> Callable[..., Any]:
        def fit(f: Any, p: Any, n: Any, e: Any, seed: int) -> _Averaged:
            return _Averaged(fit_model(f, p, n, e, None, seed=seed),
                             fit_model(f, p, n, e, None, seed=seed, model="pt"), w)
        return fit

    rows = [("default", default(), _nothing, False), ("oracle (every configuration)",
                                                      default(), _nothing, True)]
    if quick:
        return rows
    rows += [(f"deviation_penalty {v}", default(deviation_penalty=v), _nothing, False)
             for v in (0.03, 0.3)]
    rows += [(f"prior {v}", default(prior=v), _nothing, False) for v in (0.0, 0.3, 1.0)]
    rows += [(f"OVER_SCALE {v}", default(), lambda v=v: _constant("OVER_SCALE", v), False)
             for v in (0.1, 0.3, 0.5)]
    rows += [(f"under soft-L1 {v}", default(), lambda v=v: _under_soft_l1(v), False)
             for v in (0.05, 0.2, 0.4)]
    rows.append(("UNDER_SCALE 10 (about the square)", default(),
                 lambda: _constant("UNDER_SCALE", 10.0), False))
    rows += [(f"average with pt, weight {w}", averaged(w), _nothing, False) for w in (0.5, 0.7)]
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = _common.arg_parser(__doc__, quick="the default and the oracle only")
    args = parser.parse_args(argv)
    if not any(DATA.glob("completo_*.csv")):
        print(f"no PaScal campaigns in {DATA}: nothing to measure", file=sys.stderr)
        return 0
    warnings.simplefilter("ignore")
    bench = _common.Run()
    header = ["variant", "D-optimal mean MPE (%)", "worst campaign (%)",
              "random mean MPE (%)", "worst campaign (%)"]
    rows = []
    for label, fit, context, oracle in variants(args.quick):
        got = score(fit, context, oracle)

        def worst(design: str, got: dict[str, Any] = got) -> str:
            key = f"{design} worst"
            return f"{got[key]:.1f} ({got[key + ' campaign']})" if key in got else "-"

        rows.append([label, f"{got['doptimal mean']:.2f}", worst("doptimal"),
                     f"{got['random mean']:.2f}" if "random mean" in got else "-",
                     worst("random")])
        print(_common.text_table(header, rows[-1:]), flush=True)
    md = [
        "## Variants of the energy fit on the real PaScal campaigns "
        "(`benchmarks/energy_variants.py`)", "",
        *_common.machine_lines(bench),
        f"- Total {_common.seconds(bench.elapsed())}. Scoring as `energy_real` (10 training "
        "configurations; D-optimal seed 0, random seeds 0-4; MPE on the valid holdout; mean "
        "over the 22 pascal_dev campaigns, worst campaign). `oracle`: fitted and scored on every "
        "valid configuration (the D-optimal column holds it).", "",
        _common.markdown_table(header, rows),
    ]
    _common.publish(SECTION, "\n".join(md), args.results, quick=args.quick)
    return 0


if __name__ == "__main__":
    sys.exit(main())
