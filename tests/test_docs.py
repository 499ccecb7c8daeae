"""The documentation: the README is a front page that starts with the two
set-up commands and links only to files that exist, and the docs under docs/ build with
``mkdocs build --strict`` (broken links, anchors and pages missing from the nav fail it)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"

#: A Markdown link or image: [text](target) or [text](target "title").
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def _links(text: str) -> list[str]:
    # fenced code blocks hold commands, not links
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    return LINK.findall(text)


def test_readme_starts_with_the_two_commands() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert lines[:8] == [
        "# phasekit",
        "",
        "```bash",
        "pip install . && phasekit demo",
        "```",
        "```bash",
        'pip install -e ".[test]" && python -m pytest -q',
        "```",
    ]


def test_readme_is_a_front_page() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 220, "the detail belongs in docs/"
    for verb in ("pk.periodicity(", "pk.read(", "pk.phases(", "pk.structure(",
                 "pk.energy.fit(", "pk.energy.choose(", ".summary()", ".plot()"):
        assert verb in text, verb


def test_readme_links_point_to_existing_files() -> None:
    links = _links(README.read_text(encoding="utf-8"))
    assert links, "the README links to the docs"
    missing = []
    for target in links:
        if re.match(r"[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            continue  # a URL or an anchor of the README itself
        path = (ROOT / target.split("#", 1)[0]).resolve()
        if not path.exists() or ROOT not in path.parents:
            missing.append(target)
    assert not missing, f"README links to missing files: {missing}"
    linked = {(ROOT / t.split("#", 1)[0]).resolve() for t in links if t.startswith("docs/")}
    unlinked = sorted(p.name for p in DOCS.glob("*.md") if p.resolve() not in linked)
    assert not unlinked, f"the front page maps every docs page; not linked: {unlinked}"


def test_user_facing_text_names_papers_not_seeds() -> None:
    """Pages say "Phase-TA (Stoffel et al., HPCS 2020)", not "Phase-TA"; only the references
    page explains the development tree's file names."""
    for page in [README, *sorted(DOCS.glob("*.md"))]:
        if page.name == "references.md":
            continue
        text = page.read_text(encoding="utf-8")
        found = re.findall(r"seed 0{2}\d|seeds/0{2}\d", text)
        assert not found, f"{page.name}: {found}"


def test_every_page_is_in_the_nav() -> None:
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for page in DOCS.glob("*.md"):
        assert f" {page.name}" in nav, page.name


def test_mkdocs_build_strict(tmp_path: Path) -> None:
    pytest.importorskip("mkdocs")
    site = tmp_path / "site"
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file",
         str(ROOT / "mkdocs.yml"), "--site-dir", str(site)],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (site / "index.html").is_file()
    assert (site / "references.html").is_file()


def test_the_api_reference_documents_every_verb() -> None:
    """docs/api.md (mkdocstrings, built by the strict build above) has an entry for each
    verb, option set and plug-in base."""
    import phasekit
    from test_options import OPTIONS

    reference = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    entries = set(re.findall(r"^::: (\S+)$", reference, flags=re.MULTILINE))
    verbs = {target.replace(":", ".") for target in phasekit.VERBS.values()}
    wanted = verbs | {"phasekit.read", "phasekit.load", "phasekit.powermodel.fit",
                      "phasekit.options.Options",
                      "phasekit.phases.registry.PhaseDetector",
                      "phasekit.schedule.registry.Policy", "phasekit.io.formats.Format"}
    wanted |= {f"{options.__module__}.{options.__qualname__}" for options in OPTIONS
               if not options.__name__.startswith("_")}
    assert wanted <= entries, sorted(wanted - entries)
