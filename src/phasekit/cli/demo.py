"""``phasekit demo``: the whole job on an embedded default, with the ground truth beside it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import numpy as np
import typer

from phasekit.cli.common import out_console, print_json, print_result, progress_reporter, write_json
from phasekit.errors import UsageError

if TYPE_CHECKING:
    from phasekit.periodicity import PeriodicityResult
    from phasekit.synth import Truth

EPILOG = """\
Example:

\b
    phasekit demo
    phasekit demo --output-dir /tmp/demo
"""


def compare(result: PeriodicityResult, truth: Truth) -> dict[str, float | int]:
    """Coverage, pattern count and adjusted Rand index of the sample labels against the truth."""
    from phasekit.metrics.periodicity import labels_ari, sample_labels

    patterns = result.patterns
    starts = np.concatenate([p.starts for p in patterns]) if patterns else np.empty(0, np.int64)
    lengths = np.concatenate([p.lengths for p in patterns]) if patterns else np.empty(0, np.int64)
    labels = np.repeat(np.arange(len(patterns)), [p.n_instances for p in patterns])
    predicted = sample_labels(result.n_samples, starts, lengths, labels)
    return {
        "coverage": result.coverage, "true_coverage": truth.coverage(),
        "patterns": len(patterns), "true_patterns": len(truth.labels),
        "ari": labels_ari(truth.sample_labels(), predicted),
    }


def demo(
    output_dir: Annotated[Path, typer.Option(
        "--output-dir", "-d", metavar="DIR", help="Where to write the demo's files.")
    ] = Path("phasekit-demo"),
    json_output: Annotated[bool, typer.Option(
        "--json", help="Print the comparison and the files written as JSON.")] = False,
) -> None:
    """Analyze a synthetic HPCG-like profile and compare with its ground truth.

    Generates the 10-minute HPCG-like profile (seed 0, 5 ms sampling: two initialization
    periodicities, then one compute periodicity), writes it as DIR/profile.parquet with its
    truth, analyzes it, prints the summary and the comparison with the truth, and writes
    DIR/result.json and the figure DIR/analysis.png.
    """
    from phasekit.io import write_profile
    from phasekit.periodicity import analyze as run_analysis
    from phasekit.plot import plot_analysis
    from phasekit.synth import generate, truth_path, write_truth

    if output_dir.exists() and not output_dir.is_dir():
        raise UsageError(f"--output-dir {output_dir}: exists and is not a directory")
    try:
        output_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"--output-dir {output_dir}: cannot create it ({exc.strerror})") from None
    profile_file = output_dir / "profile.parquet"
    result_file = output_dir / "result.json"
    figure_file = output_dir / "analysis.png"

    profile, truth = generate("hpcg", minutes=10.0, seed=0)
    write_profile(profile, profile_file)
    truth_file = write_truth(truth, truth_path(profile_file))
    with progress_reporter(not json_output, f"analyzing {profile_file.name}") as progress:
        result = run_analysis(profile, progress=progress)
    write_json(result_file, result.to_dict())
    plot_analysis(profile, result, figure_file)
    scores = compare(result, truth)
    files = {"profile": str(profile_file), "truth": str(truth_file),
             "result": str(result_file), "figure": str(figure_file)}

    if json_output:
        print_json({"comparison": scores, "files": files})
        return
    print_result(result, profile_file.name)
    console = out_console()
    console.print(
        f"vs ground truth: coverage {100 * scores['coverage']:.1f}% (true "
        f"{100 * scores['true_coverage']:.1f}%), patterns {scores['patterns']} (true "
        f"{scores['true_patterns']}), adjusted Rand index {scores['ari']:.3f}", soft_wrap=True)
    for what, path in files.items():
        console.print(f"wrote {what}: {path}", soft_wrap=True)
