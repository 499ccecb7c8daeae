"""HiGHS from a MIP start, in this process or in a process of its own that a deadline can stop.

HiGHS checks its time limit only between the steps of its solve, and some steps take
seconds: on the 66-task scenario's MILP (114 000 nonzeros) a limit of 0.3-1 s ends after
1.1-1.2 s, on a 150-task one (700 000 nonzeros) a limit of 2 s after 7 s. A command that must
end by its time limit runs the solve here, as a script in a child process
(:func:`phasekit.schedule.policies.milp_schedule` with a deadline): it imports numpy and the
binding only, reads the model (pickled) on its standard input, sends HiGHS's own printing
to its standard error and writes the result (pickled) to its standard output; the parent
kills it when the deadline comes first.

This file imports nothing of phasekit, so that the child starts in a few tenths of a second.
"""

from __future__ import annotations

import os
import pickle
import sys
import time
from typing import Any

import numpy as np

__all__ = ["binding", "highs_started", "main"]


def binding() -> Any:
    """HiGHS's own Python binding, ``highspy`` (a dependency), else the copy scipy bundles
    (``scipy.optimize._highspy._core``, private), else None."""
    try:
        import highspy
    except ImportError:
        try:
            from scipy.optimize._highspy import _core  # private: guarded
        except ImportError:
            return None
        return _core
    return highspy


def highs_started(h: Any, cost: np.ndarray, indptr: np.ndarray, indices: np.ndarray,
                  values: np.ndarray, lo: np.ndarray, hi: np.ndarray, lb: np.ndarray,
                  ub: np.ndarray, integrality: np.ndarray, time_limit_s: float,
                  start: np.ndarray, heuristic_effort: float = 0.05) -> dict[str, Any]:
    """Solve the MILP (the constraint matrix column-wise: ``indptr``, ``indices``,
    ``values``) with HiGHS through the binding ``h``, from the feasible point ``start``."""
    lp = h.HighsLp()
    lp.num_col_ = cost.size
    lp.num_row_ = lo.size
    lp.a_matrix_.num_col_ = cost.size
    lp.a_matrix_.num_row_ = lo.size
    lp.a_matrix_.format_ = h.MatrixFormat.kColwise
    lp.col_cost_ = cost
    lp.col_lower_ = lb
    lp.col_upper_ = ub
    lp.row_lower_ = lo
    lp.row_upper_ = hi
    lp.a_matrix_.start_ = indptr
    lp.a_matrix_.index_ = indices
    lp.a_matrix_.value_ = values
    lp.integrality_ = [h.HighsVarType(int(i)) for i in integrality]
    highs = h.Highs() if hasattr(h, "Highs") else h._Highs()
    options = h.HighsOptions()
    options.time_limit = float(time_limit_s)
    options.mip_heuristic_effort = float(heuristic_effort)
    options.output_flag = False
    options.log_to_console = False
    highs.passOptions(options)
    highs.passModel(lp)
    solution = h.HighsSolution()
    solution.col_value = list(start)
    solution.value_valid = True
    highs.setSolution(solution)
    highs.run()
    status = highs.getModelStatus()
    info = highs.getInfo()
    has_x = info.objective_function_value != h.kHighsInf and status in (
        h.HighsModelStatus.kOptimal, h.HighsModelStatus.kTimeLimit,
        h.HighsModelStatus.kIterationLimit, h.HighsModelStatus.kSolutionLimit,
        h.HighsModelStatus.kInterrupt)
    x = np.array(highs.getSolution().col_value) if has_x else None
    names = {h.HighsModelStatus.kOptimal: "optimal",
             h.HighsModelStatus.kTimeLimit: "time limit reached",
             h.HighsModelStatus.kInfeasible: "infeasible"}
    return {"x": x, "status": names.get(status, highs.modelStatusToString(status)),
            "dual_bound": info.mip_dual_bound, "gap": info.mip_gap, "started": True,
            "api": f"HiGHS ({h.__name__}, with a MIP start)"}


def main() -> None:
    """The child: model in (pickle on stdin), result out (pickle on stdout).

    The model's ``end_epoch`` (``time.time()``) is when the parent stops waiting; HiGHS's
    limit is what is left of it once the model is read, less ``margin_s`` to write back.
    """
    result_out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # HiGHS prints to file descriptor 1 from C++: to stderr, not the result
    model = pickle.load(sys.stdin.buffer)
    h = binding()
    if h is None:
        result: dict[str, Any] = {"error": "no HiGHS binding (highspy or scipy's copy)"}
    else:
        limit = min(model["time_limit_s"],
                    model["end_epoch"] - time.time() - model["margin_s"])
        try:
            result = highs_started(h, model["cost"], model["indptr"], model["indices"],
                                   model["values"], model["lo"], model["hi"], model["lb"],
                                   model["ub"], model["integrality"], max(limit, 0.0),
                                   model["start"], model["heuristic_effort"])
        except (AttributeError, TypeError) as exc:  # another binding layout
            result = {"error": f"{type(exc).__name__}: {exc}"}
    sys.stdout.flush()
    pickle.dump(result, result_out)
    result_out.flush()


if __name__ == "__main__":
    main()
