"""Phase detection on real counter series, against offline Pelt, Binseg and ClaSP.

Sequences: ``phasekit.synth.backtoback`` on the DCSLab perf series (NPB solo runs and
PARSEC/Rodinia co-runs, 200 ms rows; the metrics every file has), seeded 0..N-1, 4-6
applications of up to 300 rows each; truth = the junctions. The series are real measurements
kept beside the checkout (``phases/dcslab``), never copied into it; ``--data DIR`` points
elsewhere.

Scores (phasekit.metrics.segmentation, as TSSB/claspy compute them): F1 with a margin of 5
samples (1 s) and Covering, means over the sequences; true and false positives summed; the
detection delay of the online rows (samples from the true change to the vector at which the
streaming detector reported it).

Rows:
- ``phasekit ev, online``: the streaming detector (``make_detector`` fed one
  ``StreamingVectors.push`` at a time, the default sensors and timing): the changes as
  reported, never revised;
- ``phasekit phases() default``: the library's result (the same changes; consecutive phases
  identified as one merged);
- ``ev-literal``: Tsafack Chetsa et al.'s Algorithm 1 on their sensors;
- ruptures Pelt and Binseg: l2 cost on the z-scored metrics, penalty d log n, offline;
- ClaSP (claspy ``BinaryClaSPSegmentation``, defaults, on the z-scored metrics), offline, in
  its own virtual environment (see segmentation_tssb.py), when one exists.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import _common
from phasekit.metrics.segmentation import score_segmentation
from phasekit.phases import make_detector, phases
from phasekit.phases.vectors import StreamingVectors, choose_sensors, metric_kind
from phasekit.synth.backtoback import back_to_back, read_headed_table

SECTION = "phases_real"
DATA = _common.HERE.parent.parent / "shared" / "data" / "phases" / "dcslab"
MARGIN = 5  # samples: 1 s at 200 ms
CLASPY_VENVS = (Path("/work/claspy-venv"),
                Path.home() / ".cache" / "phasekit-bench" / "claspy-venv")
CLASPY_SCRIPT = """
import json, sys, warnings, numpy as np
from claspy.segmentation import BinaryClaSPSegmentation
out = []
for path in sys.argv[1:]:
    x = np.load(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out.append([int(c) for c in BinaryClaSPSegmentation().fit_predict(x)])
print(json.dumps(out))
"""


def load_runs(root: Path) -> dict[str, tuple[tuple[str, ...], np.ndarray]]:
    return {str(f.relative_to(root)): read_headed_table(f) for f in sorted(root.rglob("*.csv"))}


def online(profile) -> tuple[list[int], list[int]]:
    """The streaming detector's reported changes: (located starts, reporting vectors)."""
    sensors = list(choose_sensors(profile).sensors)
    levels = [s for s in sensors if metric_kind(profile, s) == "level"]
    stream = StreamingVectors(profile.metrics, sensors, profile.period, levels=levels)
    detector = make_detector("ev", len(sensors), sensors=sensors, period=profile.period)
    found, reported = [], []
    for row in profile.values:
        change = detector.update(stream.push(row))
        if change is not None:
            found.append(change.start)
            reported.append(change.detected_at)
    return found, reported


def result_changes(profile, **options) -> tuple[list[int], list[int]]:
    result = phases(profile, **options)
    return ([p.start_index for p in result.phases[1:]],
            [round(p.detected_at_s / profile.period) for p in result.phases[1:]])


def zscored(X: np.ndarray) -> np.ndarray:
    std = X.std(axis=0)
    return (X - X.mean(axis=0)) / np.where(std > 0, std, 1.0)


def ruptures_changes(profile, algorithm: str) -> list[int]:
    import ruptures as rpt

    Z = zscored(profile.values)
    n, d = Z.shape
    model = (rpt.Pelt if algorithm == "pelt" else rpt.Binseg)(model="l2", min_size=2, jump=1)
    return model.fit(Z).predict(pen=d * np.log(n))[:-1]


def claspy_changes(profiles) -> tuple[list[list[int]] | None, str, float]:
    python = next((v / "bin" / "python" for v in CLASPY_VENVS
                   if (v / "bin" / "python").exists()), None)
    if python is None:
        return None, "no claspy environment (run segmentation_tssb.py once to create one)", 0.0
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for k, profile in enumerate(profiles):
            paths.append(str(Path(tmp) / f"{k}.npy"))
            np.save(paths[-1], zscored(profile.values))
        started = time.perf_counter()
        done = subprocess.run([str(python), "-c", CLASPY_SCRIPT, *paths], capture_output=True,
                              text=True, check=False)
        elapsed = time.perf_counter() - started
    if done.returncode != 0:
        return None, f"claspy failed: {done.stderr.strip().splitlines()[-1:]}", elapsed
    return json.loads(done.stdout), f"claspy from {python.parent.parent}", elapsed


def summarize(name: str, sequences, changes, *, online_row: bool) -> list[object]:
    scores = [score_segmentation(s.change_points, found, s.profile.n_samples, margin=MARGIN,
                                 reported=reported)
              for s, (found, reported) in zip(sequences, changes, strict=True)]
    delays = [d for sc in scores for d in sc.delays]
    return [name, f"{np.mean([s.f1 for s in scores]):.3f}",
            f"{np.mean([s.covering for s in scores]):.3f}",
            sum(s.true_positives for s in scores), sum(s.false_positives for s in scores),
            f"{np.mean(delays):+.2f}" if online_row and delays else "offline"]


def main(argv: list[str] | None = None) -> int:
    parser = _common.arg_parser(__doc__, quick="3 sequences, no ClaSP (smoke test)")
    parser.add_argument("--sequences", type=int, default=20)
    parser.add_argument("--data", type=Path, default=DATA,
                        help="folder of the DCSLab series (default: the real measurements "
                             "kept beside the checkout)")
    args = parser.parse_args(argv)
    if not args.data.is_dir():
        print(f"no dcslab data at {args.data}: nothing to measure", file=sys.stderr)
        return 0
    bench = _common.Run()
    runs = load_runs(args.data)
    count = 3 if args.quick else args.sequences
    sequences = [back_to_back(runs, seed=seed) for seed in range(count)]
    n_true = sum(len(s.change_points) for s in sequences)
    rows = [
        summarize("phasekit ev, online (default sensors and timing)", sequences,
                  [online(s.profile) for s in sequences], online_row=True),
        summarize("phasekit phases() default (same changes, merged ids)", sequences,
                  [result_changes(s.profile) for s in sequences], online_row=True),
        summarize("ev-literal (Tsafack Chetsa et al. Algorithm 1 and sensors)", sequences,
                  [result_changes(s.profile, method="ev-literal") for s in sequences],
                  online_row=True),
        summarize("ruptures Pelt (l2, z-scored, pen d log n)", sequences,
                  [(ruptures_changes(s.profile, "pelt"), None) for s in sequences],
                  online_row=False),
        summarize("ruptures Binseg (l2, z-scored, pen d log n)", sequences,
                  [(ruptures_changes(s.profile, "binseg"), None) for s in sequences],
                  online_row=False),
    ]
    clasp_note = "ClaSP skipped (--quick)"
    if not args.quick:
        found, clasp_note, _ = claspy_changes([s.profile for s in sequences])
        if found is not None:
            rows.append(summarize("ClaSP (claspy, defaults, z-scored)", sequences,
                                  [(f, None) for f in found], online_row=False))
    header = ["method", "F1 (1 s margin)", "Covering", "true positives", "false positives",
              "mean detection delay (samples)"]
    print(_common.text_table(header, rows))
    print(clasp_note)
    md = "\n".join([
        "## Phase detection on real counter series (`benchmarks/phases_real.py`)", "",
        *_common.machine_lines(bench),
        f"- {count} seeded back-to-back sequences (seeds 0-{count - 1}) of the dcslab perf "
        f"series ({len(runs)} runs, 200 ms rows; {n_true} true changes); scores as TSSB and "
        "claspy compute them: F1 with a 5-sample (1 s) margin and Covering, means over the "
        "sequences. Delay: from the true change to the vector at which the change was "
        f"reported, over the true positives. {clasp_note}.",
        "- Target: the default method, online, has F1 and Covering >= Pelt's, "
        "mean delay <= 2 samples.", "",
        _common.markdown_table(header, rows, "lrrrrr"),
    ])
    _common.publish(SECTION, md, args.results, quick=args.quick)
    return 0


if __name__ == "__main__":
    sys.exit(main())
