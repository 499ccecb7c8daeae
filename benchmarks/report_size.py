"""How tall the HTML report is and whether it reads at 800 px: ``phasekit report`` of the same
results from this checkout and from an earlier revision, opened in headless Chromium.

- Results (about a dozen, one per kind and more): real files kept beside the checkout (never
  copied into it): the NPB SP perf series (``analyze --period 0.2``), the canneal co-run series
  (``phases --period 0.2``), the LULESH Paraver trace (``structure``) and the PaScal vips_3
  campaign (``energy fit``, ``energy choose``, ``energy plot -o view.json``); and generated ones:
  ``phasekit synth`` profiles for ``analyze`` and ``phases``, node profiles for ``analyze
  FOLDER`` (the cross-node view), a campaign (shown as it is), power profiles for ``energy
  phasediv``, fingerprint runs for ``fingerprint``, and ``schedule synth:small --policy all
  --time-limit 5s``. The inputs are made once (this checkout's generators); every result
  JSON and the report are made by the CLI of the revision measured. A command that fails at
  one revision leaves its result out of both reports (the output says so).
- The earlier revision (``--base REV``, default ``b2155f2``, the last commit before the report
  was reworked) runs as in cli_latency.py: its ``src`` from ``git archive`` (the repository is
  left as it is) with this checkout's compiled extensions, first on ``PYTHONPATH``; ``--base
  DIR`` takes a folder of sources.
- Measured in headless Chromium (the DevTools protocol, :mod:`phasekit.report.browser`) at
  1400 and 800 px wide (900 px high): the document height, where the summary (``nav.summary``)
  starts and whether that is within the first screen, the tables wider than their container
  (shown ones; folded rows are not laid out), the page's horizontal overflow and the smallest
  text of a figure in CSS px (its font size times the SVG's scale); below the table, the
  height of each result's section and, at 800 px, which tables overflow and which figures have
  text under 7 px.

Run: ``python benchmarks/report_size.py [--quick] [--base REV]`` (``--quick``: 4 results, a
smoke test; written nowhere unless ``--results``). Without Chromium it prints ``skipped: ...``
and exits 0.
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
from typing import Any

import _common
from cli_latency import base_sources
from phasekit.report.browser import HeadlessChromium, find_chromium

SECTION = "report_size"
ROOT = _common.HERE.parent
SHARED = ROOT.parent / "shared" / "data"
BASE = "b2155f2"
WIDTHS = (1400, 800)
HEIGHT = 900
TIMEOUT = 60.0
#: Figure text smaller than this (CSS px as displayed) is hard to read (the browser test's
#: limit, at its 1280 px window).
MIN_TEXT_PX = 7.0

MEASURE_JS = """
(() => {
  const doc = document.documentElement;
  const top = el => el.getBoundingClientRect().top + window.scrollY;
  const nav = document.querySelector('nav.summary');
  const label = el => {
    const s = el.closest('section');
    return s ? s.id : (el.closest('nav') ? 'summary' : 'page');
  };
  const tables = [];
  let shown = 0;
  for (const t of document.querySelectorAll('table')) {
    const r = t.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;  // not displayed
    const folded = t.closest('details:not([open])') !== null;  // shown on a click
    if (!folded) shown++;
    const box = t.parentElement;
    const over = Math.max(r.width - box.clientWidth,
                          r.right - box.getBoundingClientRect().right);
    if (over > 1) {
      const cap = t.caption ? t.caption.textContent
                            : (t.querySelector('th') || {textContent: ''}).textContent;
      tables.push({section: label(t), caption: cap.trim().slice(0, 60),
                   width: Math.round(r.width), container: Math.round(box.clientWidth),
                   columns: t.rows.length ? t.rows[0].cells.length : 0, folded: folded});
    }
  }
  const figures = Array.from(document.querySelectorAll('figure svg')).filter(
      svg => svg.closest('details:not([open])') === null).map(svg => {
    const r = svg.getBoundingClientRect();
    const box = svg.viewBox.baseVal;
    const scale = box && box.width ? r.width / box.width : 1;
    const sizes = Array.from(svg.querySelectorAll('text')).map(
        t => parseFloat(getComputedStyle(t).fontSize) * scale).filter(s => s > 0);
    const fig = svg.closest('figure');
    const cap = fig && fig.querySelector('figcaption');
    return {section: label(svg), width: Math.round(r.width), height: Math.round(r.height),
            drawn: box && box.width ? Math.round(box.width) : null,
            text: sizes.length ? Math.min(...sizes) : null,
            caption: cap ? cap.textContent.trim().slice(0, 60) : ''};
  });
  const sections = Array.from(document.querySelectorAll('section')).map(s => {
    const code = s.querySelector('.meta code');
    return {id: s.id, source: code ? code.textContent : '', top: Math.round(top(s)),
            height: Math.round(s.getBoundingClientRect().height)};
  });
  return {height: doc.scrollHeight, overflow: doc.scrollWidth - window.innerWidth,
          summary: nav ? Math.round(top(nav)) : null,
          summary_height: nav ? Math.round(nav.getBoundingClientRect().height) : null,
          tables_shown: shown, tables: tables,
          figures: figures, sections: sections};
})()
"""


# --- the results -------------------------------------------------------------------------------
def make_inputs(folder: Path, quick: bool) -> dict[str, Path]:
    """The generated inputs, made once with this checkout's ``phasekit synth``."""
    made = {"nemo": ("nemo", "--minutes", "1" if quick else "2", "--seed", "1"),
            "bench": ("bench_1", "--repetitions", "1", "--seed", "0")}
    if not quick:
        made.update({"nodes": ("nodes", "--nodes", "6", "--minutes", "1", "--seed", "1"),
                     "campaign": ("campaign", "--seed", "1"),
                     "power": ("power", "--seed", "1"),
                     "runs": ("fingerprints", "--seed", "1")})
    names = {"nemo": "nemo.parquet", "bench": "bench.parquet", "nodes": "nodes",
             "campaign": "campaign.json", "power": "profiles.json", "runs": "runs"}
    folder.mkdir()
    out = {}
    for key, argv in made.items():
        out[key] = folder / names[key]
        subprocess.run([sys.executable, "-m", "phasekit.cli", "synth", *argv, "-o",
                        str(out[key])], check=True, capture_output=True)
    return out


def results_to_make(inputs: dict[str, Path], quick: bool) -> list[tuple[str, str, list[str]]]:
    """(name, what, argv after ``phasekit``, its ``-o`` added by the caller); a name whose argv
    is empty is an input shown as it is (the campaign)."""
    dcslab = SHARED / "phases" / "dcslab"
    vips = SHARED / "energy" / "pascal_dev" / "completo_vips_3.csv"
    i = {k: str(v) for k, v in inputs.items()}
    out = [("periodicity_synth", "analyze, synthetic NEMO-like profile", ["analyze", i["nemo"]]),
           ("phases_synth", "phases, synthetic bench_1", ["phases", i["bench"]])]
    if vips.exists():
        out.append(("energy_choice_real", "energy choose, PaScal vips_3 (real)",
                    ["energy", "choose", str(vips)]))
    out.append(("schedule", "schedule synth:small, "
                + ("heuristic" if quick else "all policies, 5 s"),
                ["schedule", "synth:small", "--policy", "heuristic" if quick else "all",
                 "--time-limit", "5s"]))
    if quick:
        return out
    real = []
    sp = dcslab / "solorun" / "16core" / "NPB_big" / "SP" / "SP.csv"
    canneal = dcslab / "corun" / "8core" / "canneal-sp" / "canneal.csv"
    trace = SHARED / "paraver" / "lulesh_chop8" / "lulesh_7+1_chop8.prv"
    if sp.exists():
        real.append(("periodicity_real", "analyze, NPB SP perf series (real)",
                     ["analyze", str(sp), "--period", "0.2"]))
    if canneal.exists():
        real.append(("phases_real", "phases, canneal co-run perf series (real)",
                     ["phases", str(canneal), "--period", "0.2"]))
    if trace.exists():
        real.append(("structure_real", "structure, LULESH Paraver trace (real)",
                     ["structure", str(trace)]))
    if vips.exists():
        real += [("energy_fit_real", "energy fit, PaScal vips_3 (real)",
                  ["energy", "fit", str(vips)]),
                 ("energy_view_real", "energy plot -o view.json, PaScal vips_3 (real)",
                  ["energy", "plot", str(vips)])]
    return real + out + [
        ("multinode", "analyze FOLDER, 6 synthetic nodes", ["analyze", i["nodes"]]),
        ("campaign", "a synthetic campaign (synth campaign), as it is", []),
        ("phase_division", "energy phasediv, synthetic power profiles",
         ["energy", "phasediv", i["power"]]),
        ("fingerprints", "fingerprint, 12 synthetic runs",
         ["fingerprint", *sorted(str(p) for p in inputs["runs"].glob("*.parquet"))]),
    ]


def cli(env: dict[str, str], cwd: Path, *argv: str) -> tuple[int, str]:
    done = subprocess.run([sys.executable, "-m", "phasekit.cli", *argv], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=900, check=False)
    last = (done.stderr.strip().splitlines() or [""])[-1]
    return done.returncode, last


# --- the run ---------------------------------------------------------------------------------------
def smallest_text(page: dict[str, Any]) -> float | None:
    sizes = [f["text"] for f in page["figures"] if f["text"] is not None]
    return min(sizes) if sizes else None


def px(value: float | None, digits: int = 0) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def section_heights(page: dict[str, Any], names: list[str]) -> dict[str, int]:
    """Each result's section height, by the file it was read from (its name's stem)."""
    out: dict[str, int] = {}
    for s in page["sections"]:
        stem = Path(s["source"]).name.removesuffix(".json")
        if stem in names:
            out[stem] = out.get(stem, 0) + s["height"]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = _common.arg_parser(__doc__, quick="4 results (a smoke test)")
    parser.add_argument("--base", default=BASE, metavar="REV",
                        help=f"the earlier revision to compare with (default {BASE}), or a "
                             "folder of sources (a src folder)")
    parser.add_argument("--keep", type=Path, default=None, metavar="DIR",
                        help="copy the results, the reports and the measurements (JSON) there")
    args = parser.parse_args(argv)
    binary = find_chromium()
    if binary is None:
        print("skipped: no Chromium (apt-get install chromium, or set PHASEKIT_CHROMIUM)")
        return 0
    try:
        import websocket  # noqa: F401
    except ImportError:
        print("skipped: websocket-client is not installed (pip install -e '.[test]')")
        return 0
    bench = _common.Run()
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "NUMBA_CACHE_DIR", "PYTHONDONTWRITEBYTECODE")}
    env["MPLBACKEND"] = "Agg"
    with tempfile.TemporaryDirectory(prefix="phasekit-report-size-") as scratch:
        folder = Path(scratch)
        given = Path(args.base)
        tree = given if given.is_dir() else base_sources(args.base, folder)
        base_label = given.resolve().parent.name if given.is_dir() else args.base
        revisions = {"now": env, f"base {base_label}": {**env, "PYTHONPATH": str(tree)}}
        inputs = make_inputs(folder / "inputs", args.quick)
        todo = results_to_make(inputs, args.quick)
        failed: dict[str, list[str]] = {}  # result -> "revision: message"
        files: dict[str, dict[str, Path]] = {}
        for label, revision_env in revisions.items():
            out = folder / label.split()[0]
            out.mkdir()
            files[label] = {}
            for name, _what, command in todo:
                target = out / f"{name}.json"
                started = time.perf_counter()
                if not command:  # an input shown as it is
                    shutil.copy2(inputs[name], target)
                    code, message = 0, ""
                else:
                    code, message = cli(revision_env, out, *command, "-o", str(target))
                if code or not target.exists():
                    failed.setdefault(name, []).append(f"{label}: exit {code}, {message}")
                else:
                    files[label][name] = target
                print(f"{label:>14} {name:<20} {'ok' if not code else f'FAILED ({message})'}"
                      f" {time.perf_counter() - started:.1f} s", flush=True)
        names = [name for name, _, _ in todo if name not in failed]
        reports: dict[str, Path] = {}
        for label, revision_env in revisions.items():
            reports[label] = folder / label.split()[0] / "report.html"
            code, message = cli(revision_env, folder, "report",
                                *[str(files[label][n]) for n in names],
                                "-o", str(reports[label]), "--title", "report size")
            if code:
                raise SystemExit(f"phasekit report failed at {label}: {message}")
        pages: dict[tuple[str, int], dict[str, Any]] = {}
        browser = HeadlessChromium(binary, folder, width=WIDTHS[0], height=HEIGHT,
                                   timeout=TIMEOUT)
        try:
            for label, report in reports.items():
                for width in WIDTHS:
                    browser.open(report, width)
                    pages[(label, width)] = browser.evaluate(MEASURE_JS)
        finally:
            browser.close()
        if args.keep is not None:
            for label in revisions:
                shutil.copytree(folder / label.split()[0], args.keep / label.split()[0],
                                dirs_exist_ok=True)
            (args.keep / "measured.json").write_text(json.dumps(
                {f"{label} {width}": page for (label, width), page in pages.items()}, indent=1))
    now_label, base_label_full = list(revisions)
    header = ["revision", "width", "page height px", "summary in first screen",
              "tables overflowing", "page overflow px", "smallest figure text px"]
    rows = []
    for (label, width), page in pages.items():
        where = page["summary"]
        summary = ("no summary" if where is None
                   else f"{'yes' if where < HEIGHT else 'no'} (top at {where} px)")
        rows.append([label, width, f"{page['height']:,}", summary,
                     f"{sum(not t['folded'] for t in page['tables'])} of "
                     f"{page['tables_shown']}",
                     max(0, page["overflow"]), px(smallest_text(page), 1)])
    ratio = pages[(now_label, WIDTHS[0])]["height"] / pages[(base_label_full, WIDTHS[0])]["height"]
    ratio_line = (f"- Height now / base at {WIDTHS[0]} px: {ratio:.2f} "
                  f"({pages[(now_label, WIDTHS[0])]['height']:,} px / "
                  f"{pages[(base_label_full, WIDTHS[0])]['height']:,} px).")
    heights = {key: section_heights(page, names) for key, page in pages.items()}
    by_result = [[name, *[f"{heights[(label, width)].get(name, 0):,}"
                          for label in revisions for width in WIDTHS]] for name in names]
    details: list[str] = []
    for (label, width), page in pages.items():
        first = page["sections"][0]["top"] if page["sections"] else None
        where = ("no summary" if page["summary"] is None else
                 f"the summary from {page['summary']} to "
                 f"{page['summary'] + page['summary_height']} px")
        details.append(f"- {label} at {width} px: {where}; the first result's section starts "
                       f"at {px(first)} px.")
    for label in revisions:
        page = pages[(label, WIDTHS[-1])]
        wide = [f"{t['section']} \"{t['caption']}\" ({t['columns']} columns, {t['width']} px "
                f"in {t['container']} px{', in folded rows' if t['folded'] else ''})"
                for t in page["tables"]]
        tiny = [f"{f['section']} figure {f['width']}x{f['height']} px (viewBox {f['drawn']} wide)"
                f" text {f['text']:.2f} px" for f in page["figures"]
                if f["text"] is not None and f["text"] < MIN_TEXT_PX]
        details.append(f"- {label} at {WIDTHS[-1]} px: tables wider than their container "
                       "(also those in folded rows, shown on a click): "
                       + ("; ".join(wide) if wide else "none") + ".")
        details.append(f"- {label} at {WIDTHS[-1]} px: figures with text under "
                       f"{MIN_TEXT_PX:g} px ({len(tiny)} of {len(page['figures'])}): "
                       + ("; ".join(tiny) if tiny else "none") + ".")
    listed = [f"`{name}` ({what})" for name, what, _ in todo if name in names]
    left_out = [f"`{name}`: " + "; ".join(why) for name, why in failed.items()]
    md = [
        "## Report size and reading at 800 px (`benchmarks/report_size.py`)", "",
        *_common.machine_lines(bench),
        f"- Command: `python benchmarks/report_size.py{' --quick' if args.quick else ''}"
        f"{'' if args.base == BASE else ' --base ' + args.base}` "
        f"({_common.seconds(bench.elapsed())}); Chromium {binary}, headless, viewport "
        f"{' and '.join(str(w) for w in WIDTHS)} x {HEIGHT} px; base: the sources of "
        f"{base_label} (git archive) with this checkout's compiled extensions; now: the "
        "checkout (commit above).",
        f"- {len(names)} results, each made by the revision's own CLI from the same inputs: "
        + ", ".join(listed) + ".",
        *([f"- **Left out of both reports** (a command failed): {'; '.join(left_out)}."]
          if left_out else []),
        "- Tables overflowing: tables on show wider than their container (they scroll "
        "sideways in it), of those on show (rows folded in a closed `<details>` are not "
        "counted; they are listed below). Smallest figure text: the least font size "
        "of a figure's texts times its SVG's scale, in CSS px.",
        "", _common.markdown_table(header, rows, "lrrlrrr"), "",
        ratio_line,
        "", "Height of each result's section (px):", "",
        _common.markdown_table(["result", *[f"{label.split()[0]} {w}" for label in revisions
                                            for w in WIDTHS]], by_result),
        "", *details,
    ]
    print()
    print(_common.text_table(header, rows))
    print(ratio_line[2:])
    print(_common.text_table(["result", *[f"{label.split()[0]} {w}" for label in revisions
                                          for w in WIDTHS]], by_result))
    print("\n".join(line[2:] for line in details))
    if left_out:
        print("left out of both reports: " + "; ".join(left_out))
    _common.publish(SECTION, "\n".join(md), args.results, quick=args.quick)
    now_failed = [n for n, why in failed.items() if any(w.startswith(now_label) for w in why)]
    return 1 if now_failed else 0


if __name__ == "__main__":
    sys.exit(main())
