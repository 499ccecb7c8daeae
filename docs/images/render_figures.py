"""Draw the figure of each saved result in a folder, as the phasekit on ``PYTHONPATH`` draws it:
the images of docs/figures.md (before and after the figures were reworked).

    python docs/images/render_figures.py RESULTS_DIR PREFIX

Each ``NAME.json`` of RESULTS_DIR that is a phasekit result is read and its ``plot()`` written
to ``PREFIX-NAME.png`` at 50 dpi (small files for the docs). To draw an earlier revision's
figures, put its ``src`` first on ``PYTHONPATH`` (``git archive REV src | tar -x -C DIR``) and
give it the results that revision wrote (``benchmarks/report_size.py --keep DIR`` keeps both
revisions' results).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

NAMES = ("periodicity_real", "phases_real", "structure_real", "energy_choice_real",
         "schedule", "multinode")


def main(argv: list[str]) -> int:
    from phasekit import results

    folder, prefix = Path(argv[0]), argv[1]
    for name in NAMES:
        path = folder / f"{name}.json"
        if not path.exists():
            print(f"{name}: no {path}")
            continue
        fig = results.from_data(json.loads(path.read_text(encoding="utf-8"))).plot()
        target = Path(f"{prefix}-{name}.png")
        fig.savefig(target, dpi=50)
        print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
