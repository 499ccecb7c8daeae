"""Counter-based power models (issue 7, seed 004 section 4.2): GE fit time on 5 000 samples
against the 60 s target, and test RMSE of linear, PLS and grammatical evolution against the
noise floor, like the thesis's Table 4.6.

Data (phasekit.synth.counters): 5 000 samples of the 14 counters of Table 4.3 with a measured
power equal to a known model plus Gaussian noise (2 W): our non-linear expression inside the
reach of the thesis's Grammar 1 (``12 + 30 C2/C1 + 25 C3/C4``), the thesis's published GE
models (4.20, CPU and memory, Table 4.4 coefficients) and its classical CPU model (4.19).
Every method trains on the same random 70 % and is scored on the other 30 %, with every
counter as candidate: linear = least squares with forward selection, PLS = the thesis's PCA
selection then partial least squares, GE = `fit_ge` with the thesis's settings (Grammar 1, or
"extended" with a linear term), 1 000 generations. The noise floor is the RMSE of the true
model on the same test rows. Co-allocation (4.21 against 4.22): counters of task pairs
predicted from solo counters, then power through the published 4.20 models. Speed-up (2.4):
PLS fit RMSE against the thesis's 0.69 / 0.71.
"""

from __future__ import annotations

import sys
import time
import warnings

import numpy as np

import _common

SECTION = "powermodels"


def datasets(n: int, seed: int, quick: bool):  # type: ignore[no-untyped-def]
    from phasekit.synth.counters import ge_power_data, linear_power_data, nonlinear_power_data

    yield "known non-linear (ratios)", nonlinear_power_data(n, seed=seed, noise_w=2.0)
    yield "published GE CPU (4.20)", ge_power_data(n, seed=seed, noise_w=2.0, which="cpu")
    if not quick:
        yield "published GE memory (4.20)", ge_power_data(n, seed=seed, noise_w=2.0,
                                                          which="mem")
        yield "classical CPU (4.19)", linear_power_data(n, seed=seed, noise_w=2.0)


def split(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    order = np.random.default_rng([seed, 99]).permutation(n)
    cut = int(0.7 * n)
    return np.sort(order[:cut]), np.sort(order[cut:])


def rmse(model, frame) -> float:  # type: ignore[no-untyped-def]
    from phasekit.signature.powermodels import errors

    return errors(model.predict(frame), frame["power_w"])["rmse"]


def methods(generations: int):  # type: ignore[no-untyped-def]
    from phasekit.signature.powermodels import fit_ge, fit_linear, fit_pls

    return {
        "linear": lambda f, s: fit_linear(f, "power_w", features=COUNTERS, seed=s),
        "PLS": lambda f, s: fit_pls(f, "power_w", features=COUNTERS, seed=s),
        "GE": lambda f, s: fit_ge(f, "power_w", features=COUNTERS, seed=s,
                                  generations=generations),
        "GE extended": lambda f, s: fit_ge(f, "power_w", features=COUNTERS, seed=s,
                                           generations=generations, grammar="extended"),
    }


def coallocation(quick: bool, generations: int) -> tuple[list[list[str]], str]:
    from phasekit.signature.coalloc import fit_coalloc
    from phasekit.signature.powermodels import errors
    from phasekit.synth.counters import (
        THESIS,
        coallocation_data,
        cpu_dyn_ge_w,
        fan_w,
        leakage_w,
        mem_dyn_ge_w,
    )

    n = 200 if quick else 600
    data = coallocation_data(n, seed=0)
    cut = int(0.7 * n)

    def part(frame, lo, hi):  # type: ignore[no-untyped-def]
        return frame.iloc[lo:hi].reset_index(drop=True)

    t1, t2, both = (part(f, 0, cut) for f in (data.task1, data.task2, data.together))
    u1, u2, measured = (part(f, cut, n) for f in (data.task1, data.task2, data.together))
    counters = ("C2", "C3", "C4", "C5", "C10", "C11", "C14")

    def power(frame):  # type: ignore[no-untyped-def]
        return (THESIS["p_idle_w"] + leakage_w(60.0) + cpu_dyn_ge_w(frame) + fan_w(3000.0)
                + mem_dyn_ge_w(frame) + THESIS["p_disk_w"])

    floor = errors(data.clean_power[cut:], measured["power_w"])["rmse"]
    rows = []
    naive = u1[list(counters)] + u2[list(counters)]
    rows.append(["sum of solo counters", "-",
                 f"{np.mean([errors(naive[c], measured[c])['mpe'] for c in counters]):.1f}",
                 f"{errors(power(naive), measured['power_w'])['rmse']:.2f}"])
    for method in ("linear", "ge"):
        started = time.perf_counter()
        model = fit_coalloc(t1, t2, both, counters=counters, method=method,
                            generations=generations) if method == "ge" else \
            fit_coalloc(t1, t2, both, counters=counters, method=method)
        elapsed = time.perf_counter() - started
        predicted = model.predict_counters(u1, u2)
        mpe = np.mean([errors(predicted[c], measured[c])["mpe"] for c in counters])
        rows.append([f"{method} ({'4.21' if method == 'linear' else '4.22'})",
                     _common.seconds(elapsed), f"{mpe:.1f}",
                     f"{errors(power(predicted), measured['power_w'])['rmse']:.2f}"])
        print(_common.text_table(["co-allocation", "fit", "counter MPE %", "power RMSE W"],
                                 rows[-1:]), flush=True)
    return rows, f"{floor:.2f}"


def speedup(quick: bool) -> list[str]:
    from phasekit.signature.speedup import fit_speedup
    from phasekit.synth.counters import speedup_data

    table = speedup_data(300 if quick else 2000, seed=0, noise=0.7)
    test = speedup_data(300 if quick else 2000, seed=1, noise=0.7)
    model = fit_speedup(table, cores=6, hw_threads=12)
    above = test["threads"] > 6
    error = model.predict(test)[above] - test["speedup"].to_numpy()[above]
    return [f"{model.meta['rmse']:.2f}", f"{np.sqrt(np.mean(error**2)):.2f}", "0.69 / 0.71",
            ", ".join(f"{c:.3g}" for c in (model.intercept, *model.coefficients,
                                            model.threads_coefficient))]


COUNTERS = [f"C{i}" for i in range(1, 15)]


def main(argv: list[str] | None = None) -> int:
    parser = _common.arg_parser(__doc__, quick="600 samples, 40 generations, one seed")
    parser.add_argument("--seeds", type=int, default=3, help="data/evolution seeds (full run)")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    bench = _common.Run()
    n = 600 if args.quick else 5000
    generations = 40 if args.quick else 1000
    seeds = [0] if args.quick else list(range(args.seeds))
    fit = methods(generations)

    # 1. GE fit time on 5 000 samples (every sample trains) against the 60 s target
    from phasekit.signature.powermodels import fit_ge
    from phasekit.synth.counters import nonlinear_power_data

    warm = nonlinear_power_data(200, seed=0)
    fit_ge(warm.frame, "power_w", features=COUNTERS, generations=2)  # numba compilation
    time_rows = []
    for s in seeds:
        data = nonlinear_power_data(n, seed=s, noise_w=2.0)
        started = time.perf_counter()
        model = fit_ge(data.frame, "power_w", features=COUNTERS, seed=s,
                       generations=generations)
        elapsed = time.perf_counter() - started
        time_rows.append([str(s), str(n), str(generations), _common.seconds(elapsed),
                          "meets" if elapsed <= 60 else "**misses**",
                          f"{model.rmse_train / data.noise_floor():.3f}",
                          str(model.meta["expressions_fitted"])])
        print(_common.text_table(["seed", "samples", "generations", "GE fit", "<= 60 s",
                                  "train RMSE / floor", "expressions fitted"], time_rows[-1:]),
              flush=True)

    # 2. Table 4.6: train / test RMSE of each method against the noise floor
    names = list(fit)
    results: dict[str, dict[str, list[tuple[float, float]]]] = {}
    floors: dict[str, list[float]] = {}
    example: dict[str, str] = {}
    for s in seeds:
        for label, data in datasets(n, s, args.quick):
            train, test = split(n, s)
            frame_train, frame_test = data.frame.iloc[train], data.frame.iloc[test]
            floors.setdefault(label, []).append(data.noise_floor(test))
            for name in names:
                model = fit[name](frame_train, s)
                results.setdefault(label, {}).setdefault(name, []).append(
                    (rmse(model, frame_train), rmse(model, frame_test)))
                if name == "GE" and s == seeds[0]:
                    example[label] = model.text
            line = "; ".join(f"{m} {results[label][m][-1][1]:.2f}" for m in names)
            print(f"seed {s} {label}: floor {floors[label][-1]:.2f} W; test RMSE {line}",
                  flush=True)
    header = ["data", "noise floor", *[f"{m} train / test" for m in names],
              "GE vs best classical"]
    rows = []
    for label, by_method in results.items():
        cells = []
        for name in names:
            tr = np.mean([r[0] for r in by_method[name]])
            te = np.mean([r[1] for r in by_method[name]])
            cells.append(f"{tr:.2f} / {te:.2f}")
        classical = min(np.mean([r[1] for r in by_method[m]]) for m in ("linear", "PLS"))
        ge = np.mean([r[1] for r in by_method["GE"]])
        rows.append([label, f"{np.mean(floors[label]):.2f}", *cells,
                     f"{(classical - ge) / classical * 100:+.0f} %"])
    success = []
    for s_rows in (results.get("known non-linear (ratios)", {}).get("GE", []),):
        floor = floors.get("known non-linear (ratios)", [])
        success = [te <= 1.1 * f for (_, te), f in zip(s_rows, floor, strict=True)]

    # 3. co-allocation and 4. speed-up
    co_rows, co_floor = coallocation(args.quick, 30 if args.quick else 300)
    speed = speedup(args.quick)

    print()
    print(_common.text_table(["seed", "samples", "generations", "GE fit", "<= 60 s",
                              "train RMSE / floor", "expressions fitted"], time_rows))
    print()
    print(_common.text_table(header, rows))
    print()
    print(_common.text_table(["co-allocation", "fit", "counter MPE %", "power RMSE W"],
                             co_rows))
    print(f"co-allocation noise floor {co_floor} W")
    print()
    print(_common.text_table(["speed-up fit RMSE", "test RMSE", "thesis", "beta"], [speed]))
    for label, text in example.items():
        print(f"GE, {label}, seed {seeds[0]}: {text}")

    seed_note = f"mean over seeds {', '.join(map(str, seeds))}" if len(seeds) > 1 else \
        f"seed {seeds[0]}"
    md = [
        "## Power models from counters (`benchmarks/powermodels.py`)", "",
        *_common.machine_lines(bench),
        f"- {_common.cores_used()}; total {_common.seconds(bench.elapsed())}.",
        f"- {n} samples of the 14 counters (phasekit.synth.counters), power = model + "
        "N(0, 2 W); 70 % train / 30 % test, every counter a candidate for every method; "
        f"{seed_note}. GE: the thesis's settings (population 200, 100 8-bit codons, "
        "crossover 0.9, mutation 1/5 per codon, 3 wraps, RMSE fitness), "
        f"{generations} generations, Levenberg-Marquardt fit of each expression's constants.",
        "",
        "GE fit time on every sample (target of issue 7: <= 60 s):", "",
        _common.markdown_table(["seed", "samples", "generations", "GE fit", "<= 60 s",
                                "train RMSE / noise floor", "expressions fitted"],
                               time_rows),
        "",
        "Test RMSE (W) against the noise floor (the true model's RMSE on the same rows), like "
        "Table 4.6 (thesis, real server: GE 7.40, classical 10.90 W test, GE 32 % better). "
        "`GE vs best classical`: how much lower GE's test RMSE is than the better of linear "
        "and PLS.", "",
        _common.markdown_table(header, rows, "l" + "r" * (len(header) - 1)), "",
    ]
    if success:
        md.append(f"- Known non-linear expression: GE (Grammar 1) within 10 % of the noise "
                  f"floor in {sum(success)} of {len(success)} seeds.")
    for label, text in example.items():
        md.append(f"- GE on {label} (seed {seeds[0]}): `{text}`")
    md += [
        "- Grammar 1 builds every term from a product or ratio of two counters, so it cannot "
        "express a term linear in one counter: on the classical linear data (4.19) and the "
        "near-linear published forms (4.20) the extended grammar (Grammar 1 plus "
        "`<cte>*<var>`, what Grammar 2 and the published models 4.22 contain) is the fairer "
        "GE.", "",
        "Co-allocated pairs (4.21 linear, 4.22 one GE model per counter, extended grammar), "
        f"70 % of {200 if args.quick else 600} pairs train; counters C2, C3, C4, C5, C10, "
        "C11, C14 predicted from the solo counters, power through the published 4.20 models "
        f"(noise floor {co_floor} W):", "",
        _common.markdown_table(["model", "fit", "counter MPE %", "power RMSE W"], co_rows), "",
        "Speed-up model (2.4) refitted by PLS on synthetic runs drawn from the thesis's beta "
        "with N(0, 0.7) noise (7-12 threads on 6 cores):", "",
        _common.markdown_table(["fit RMSE", "test RMSE", "thesis fit / test", "beta fitted"],
                               [speed]), "",
    ]
    _common.publish(SECTION, "\n".join(md), args.results, quick=args.quick)
    return 0


if __name__ == "__main__":
    sys.exit(main())
