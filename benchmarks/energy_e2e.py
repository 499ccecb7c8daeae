"""Energy end to end on this machine: a real campaign, a fit, a choice.

A 2-D Jacobi stencil in C with OpenMP (`benchmarks/programs/jacobi.c`, compiled here with
`gcc -O2 -fopenmp`; input k doubles the sequential work of input k - 1) runs over threads
1, 2 and inputs 1-4, 3 repetitions, through the CLI as a user would:
`phasekit campaign run`, `phasekit energy fit`, `phasekit energy choose`. Frequency control is
attempted first and its refusal recorded. This virtual machine has no energy meter (no RAPL,
no IPMI), so energy is the campaign's `--power-estimate 10,6` (10 W static + 6 W per busy
core, from the program's CPU time): an estimate, and the fit's energy error is therefore
mostly its time error. Besides the fit on every configuration, each input is predicted by a
model fitted on the other inputs (leave one input out). Without gcc the program is a Python
worker doing the same split of work (said in the section).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _common

SECTION = "energy_e2e"
HERE = Path(__file__).resolve().parent
STATIC_W, CORE_W = 10.0, 6.0
PY_WORKER = """
import os, sys, time
from multiprocessing import Process
def spin(seconds):
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass
work = 0.2 * 2 ** (float(sys.argv[1]) - 1) * float(sys.argv[2])
threads = int(os.environ.get("OMP_NUM_THREADS", "1"))
spin(0.05 * work)
procs = [Process(target=spin, args=(0.95 * work / threads,)) for _ in range(threads)]
[p.start() for p in procs]
[p.join() for p in procs]
"""


#: The program's OpenMP threads sleep at barriers instead of spinning: on this VM spinning
#: made 2 threads 3-10x slower than 1 (0.65-1.3 s against 0.14 s for input 1; the two vCPUs
#: are not two idle physical cores), which is the machine, not the program.
PROGRAM_ENV = {"OMP_WAIT_POLICY": "passive"}


def phasekit(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", "from phasekit.cli import main; main()",
                           *args], text=True, capture_output=True, check=False,
                          env={**os.environ, **PROGRAM_ENV})


def program(workdir: Path, quick: bool) -> tuple[list[str], str]:
    """The command (with {input}) and its description."""
    scale, steps = ("0.3", "60") if quick else ("1", "500")
    gcc = shutil.which("gcc")
    if gcc:
        exe = workdir / "jacobi"
        built = subprocess.run([gcc, "-O2", "-fopenmp", str(HERE / "programs" / "jacobi.c"),
                                "-o", str(exe), "-lm"], capture_output=True, text=True,
                               check=False)
        if built.returncode == 0:
            return [str(exe), "{input}", scale, steps], (
                f"`jacobi.c` (gcc -O2 -fopenmp), size scale {scale}, {steps} steps")
    script = workdir / "worker.py"
    script.write_text(PY_WORKER)
    return [sys.executable, str(script), "{input}", scale], (
        "the Python worker (no gcc with OpenMP here)")


def leave_one_input_out(configs, model: str) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    """Mean over inputs of the energy and time MPE of a model fitted on the other inputs."""
    from phasekit.energy.fit import fit_model, frequencies, mpe

    energy_err, time_err = [], []
    for level in sorted(configs["input"].unique()):
        train, test = configs[configs["input"] != level], configs[configs["input"] == level]
        fitted = fit_model(frequencies(train), train["cores"], train["input"], train["energy_j"],
                           train["time_s"], model=model)
        args = (frequencies(test), test["cores"].to_numpy(float), test["input"].to_numpy(float))
        energy_err.append(mpe(fitted.predict_energy(*args), test["energy_j"]))
        time_err.append(mpe(fitted.predict_time(*args), test["time_s"]))
    return sum(energy_err) / len(energy_err), sum(time_err) / len(time_err)


def main(argv: list[str] | None = None) -> int:
    parser = _common.arg_parser(__doc__, quick="three small inputs, one repetition")
    parser.add_argument("--keep", type=Path, default=None, metavar="DIR",
                        help="keep the campaign and the fit and choice JSON in DIR")
    args = parser.parse_args(argv)
    from phasekit.campaign import read_campaign
    from phasekit.energy.fit import configurations

    bench = _common.Run()
    inputs, reps = ("1,2,3", 1) if args.quick else ("1,2,3,4", 3)
    with tempfile.TemporaryDirectory(prefix="phasekit-e2e-") as tmp:
        workdir = Path(tmp)
        command, described = program(workdir, args.quick)
        refused = phasekit("campaign", "run", "--freqs", "1.2", "-o", str(workdir / "f.json"),
                           "--", *command)
        refusal = (refused.stderr.strip().splitlines() or ["(no message)"])[-1]
        print(f"frequency: exit {refused.returncode}: {refusal}")
        campaign_path = workdir / "campaign.json"
        started = time.perf_counter()
        ran = phasekit("campaign", "run", "--threads", "1,2", "--inputs", inputs, "--reps",
                       str(reps), "--idle", "0.2s", "--timeout", "120s", "--power-estimate",
                       f"{STATIC_W:g},{CORE_W:g}", "-o", str(campaign_path), "--", *command)
        campaign_s = time.perf_counter() - started
        if ran.returncode:
            print(ran.stderr, file=sys.stderr)
            return 1
        campaign = read_campaign(campaign_path)
        configs = configurations(campaign)
        fits, choices = {}, {}
        for model in ("pt", "extended"):
            fitted = phasekit("energy", "fit", str(campaign_path), "--model", model, "--json")
            chosen = phasekit("energy", "choose", str(campaign_path), "--model", model, "--json")
            if fitted.returncode or chosen.returncode:
                print(fitted.stderr, chosen.stderr, file=sys.stderr)
                return 1
            fits[model], choices[model] = json.loads(fitted.stdout), json.loads(chosen.stdout)
            if args.keep is not None:
                args.keep.mkdir(parents=True, exist_ok=True)
                (args.keep / f"fit-{model}.json").write_text(fitted.stdout)
                (args.keep / f"choice-{model}.json").write_text(chosen.stdout)
        if args.keep is not None:
            shutil.copy(campaign_path, args.keep / "campaign.json")
        fit_rows = []
        for model, fit in fits.items():
            loo_e, loo_t = leave_one_input_out(configs, model)
            fit_rows.append([model, f"{fit['mpe_train']:.2f}%", f"{fit['mpe_time_train']:.2f}%",
                             f"{loo_e:.2f}%", f"{loo_t:.2f}%",
                             _common.seconds(fit["fit_time_s"])])
        fit_header = ["model", "energy MPE (all)", "time MPE (all)",
                      "energy MPE, input left out", "time MPE, input left out", "fit time"]
        print(_common.text_table(fit_header, fit_rows))
        table = configs.sort_values(["input", "cores"])
        measured_rows = [[row.input_label, int(row.cores), int(row.runs), f"{row.time_s:.3f}",
                          f"{row.energy_j:.2f}"] for row in table.itertuples()]
        measured_header = ["input", "threads", "runs", "mean time (s)", "mean energy (J)"]
        choice_rows = []
        for model, result in choices.items():
            for c in result["choices"]:
                saved = c["savings_measured"]
                choice_rows.append([
                    model, c["input_label"], c["best"]["cores"],
                    f"{c['best']['energy_j']:.2f}", f"{c['best']['measured_energy_j']:.2f}",
                    *(f"{saved[k]:+.1f}%" if k in saved else "n/a"
                      for k in ("worst", "random", "best"))])
        choice_header = ["model", "input", "chosen threads", "predicted E (J)",
                         "measured E (J)", "vs worst", "vs random", "vs best"]
        print()
        print(_common.text_table(choice_header, choice_rows))
    failed = sum(not r.ok for r in campaign.runs)
    md = "\n".join([
        "## Energy end to end on this machine (`benchmarks/energy_e2e.py`)", "",
        *_common.machine_lines(bench),
        f"- Program: {described}; threads 1, 2; inputs {inputs}; {reps} repetition(s); "
        f"{len(campaign)} runs ({failed} failed) in {_common.seconds(campaign_s)} "
        "(`phasekit campaign run`, 0.2 s idle between runs), with OMP_WAIT_POLICY=passive: "
        "with libgomp's default spinning at barriers, 2 threads ran 3-10x slower than 1 on "
        "this VM's two vCPUs.",
        f"- Frequency: `phasekit campaign run --freqs 1.2` exits {refused.returncode} before any "
        f"run: \"{refusal}\"",
        f"- Energy: {campaign.meta.get('energy')} (no meter on this VM).",
        "",
        "### Measured (means over repetitions)", "",
        _common.markdown_table(measured_header, measured_rows),
        "",
        "### Fits (`phasekit energy fit --json`; left-out inputs fitted in process)", "",
        "The frequency was not controlled: c2 (and the extended model's m) are held at 0. "
        "\"Input left out\": each input predicted by the model fitted on the other inputs, "
        "the mean over inputs.", "",
        _common.markdown_table(fit_header, fit_rows),
        "",
        "### Choices (`phasekit energy choose --json`)", "",
        "Savings measured: the campaign's energy at the chosen configuration against the worst, "
        "a random (expected) and the best thread count (eq. 4.24; the frequency is not a "
        "choice here).", "",
        _common.markdown_table(choice_header, choice_rows),
    ])
    _common.publish(SECTION, md, args.results, quick=args.quick)
    return 0


if __name__ == "__main__":
    sys.exit(main())
