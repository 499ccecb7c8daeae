"""Server power models from hardware counters (Salinas Hilburg 2020, section 4.2 and Appendix A).

Three kinds of model share one small protocol (:class:`PowerModel`) that the signature
pipeline uses: ``model.predict(X)`` gives watts for a :class:`pandas.DataFrame` ``X`` whose
columns are counters by name, ``model.features`` names the columns it reads, and
``to_dict()`` / :func:`power_model_from_dict` store it as versioned JSON (kind
``"power_model"``).

- Classical (section 4.2.1.1.1): ordinary least squares (:func:`fit_linear`) or partial least
  squares (:func:`fit_pls`) on selected counters (:func:`select_features`: greedy forward
  selection by cross-validated RMSE, or the thesis's PCA reading).
- Grammatical evolution (section 4.2.1.1.2, Appendix A; :func:`fit_ge`): 8-bit codons, 100
  codons per chromosome, 200 individuals, crossover probability 0.9, per-codon mutation
  probability 1 / (number of grammar rules), 3 wraps, RMSE fitness, the thesis's Grammar 1.
  Every expression's constants are then fitted by local least squares (Levenberg-Marquardt)
  together with an intercept and a scale; evaluation and fitting run in numba kernels.
- Server breakdown (4.15-4.17; :class:`ServerPowerModel`): ``P_total = P_idle + P_leak(T) +
  P_CPU,dyn + P_fan(rpm) + P_Mem,dyn + P_disk`` with polynomial leakage and fan fits.

Where the thesis is silent (generations, selection, replacement, codons of single-choice
rules, how the constants are tuned, how ``<expr><op><expr>`` nests) the choice is ours and
named where it is made.

The package, one module a concept (each imports only those above it in this list):
:mod:`.protocol` (the protocol, the stored version, the error scores), :mod:`.features` (input
checks, default counters), :mod:`.linear` (OLS, PLS, feature selection), :mod:`.grammar` (BNF,
genotype-to-phenotype mapping), :mod:`.expression` (the expression compiler), :mod:`.kernels`
(numba interpreter and Levenberg-Marquardt), :mod:`.population` (a population mapped and
compiled in numba), :mod:`.symbolic` (printing in raw units), :mod:`.split` (train, test and
validation rows), :mod:`.ge` (grammatical evolution), :mod:`.average` (the average of
models), :mod:`.server` (the server breakdown and
the reader of any stored model), :mod:`.fit` (fit and evaluate on a table, with
:class:`PowerModelOptions`: what the CLI runs).
"""

from __future__ import annotations

from phasekit.signature.powermodels.average import AveragePowerModel
from phasekit.signature.powermodels.expression import compile_expression
from phasekit.signature.powermodels.features import (
    default_features,
    describe_excluded,
    is_power_column,
    screen_features,
)
from phasekit.signature.powermodels.fit import (
    FIT_VERSION,
    PowerModelEval,
    PowerModelFit,
    PowerModelOptions,
    evaluate_power_model,
    fit_power_model,
)
from phasekit.signature.powermodels.ge import GEPowerModel, fit_ge
from phasekit.signature.powermodels.grammar import (
    GRAMMARS,
    Grammar,
    build_grammar,
    map_genome,
    parse_bnf,
)
from phasekit.signature.powermodels.linear import (
    LinearPowerModel,
    fit_linear,
    fit_pls,
    select_features,
)
from phasekit.signature.powermodels.protocol import MODEL_VERSION, PowerModel, errors
from phasekit.signature.powermodels.server import (
    MODELS,
    ServerPowerModel,
    fit_fan,
    fit_leakage,
    fit_polynomial,
    fit_server,
    power_model_from_dict,
    read_power_model,
)
from phasekit.signature.powermodels.split import SPLITS, split_rows, time_order

__all__ = [
    "FIT_VERSION",
    "GRAMMARS",
    "MODELS",
    "MODEL_VERSION",
    "SPLITS",
    "AveragePowerModel",
    "GEPowerModel",
    "Grammar",
    "LinearPowerModel",
    "PowerModel",
    "PowerModelEval",
    "PowerModelFit",
    "PowerModelOptions",
    "ServerPowerModel",
    "build_grammar",
    "compile_expression",
    "default_features",
    "describe_excluded",
    "errors",
    "evaluate_power_model",
    "fit_fan",
    "fit_ge",
    "fit_leakage",
    "fit_linear",
    "fit_pls",
    "fit_polynomial",
    "fit_power_model",
    "fit_server",
    "is_power_column",
    "map_genome",
    "parse_bnf",
    "power_model_from_dict",
    "read_power_model",
    "screen_features",
    "select_features",
    "split_rows",
    "time_order",
]
