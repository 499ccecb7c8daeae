"""What phasekit itself saves, as :func:`phasekit.io.formats.read_any` reads it back.

- JSON (``.json``, ``.jsonl``, optionally gzip-compressed) whose ``"kind"`` is a saved
  result's (:data:`phasekit.results.REGISTRY`, e.g. ``phasekit analyze -o``), a power model
  (``"power_model"``) or power profiles (``"power_profiles"``, ``phasekit energy
  phasediv``'s input); JSON without a kind, or with ``"campaign"``, is a campaign (ours, JSON
  lines, or PaScal Analyzer JSON: :func:`phasekit.campaign.read_campaign`).
- A signature folder (``phasekit signature build``): :func:`is_signature` recognizes it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from phasekit.errors import InputError
from phasekit.io.inputs import loads, read_text

__all__ = ["is_signature", "json_head", "read_saved"]


def json_head(path: Path) -> Any:
    """The JSON value of ``path`` (or of its first line, for JSON lines); None if neither."""
    text = read_text(path, "a JSON file")
    try:
        return loads(text)
    except json.JSONDecodeError:
        first = next((line for line in text.splitlines() if line.strip()), "")
        try:
            return loads(first)
        except json.JSONDecodeError:
            return None
    except ValueError as exc:  # a number that is not finite
        raise InputError(str(exc), path=str(path)) from None


def read_saved(path: str | os.PathLike[str]) -> Any:
    """The result, power model, power profiles or campaign saved in the JSON file ``path``, by
    its ``"kind"``; InputError for a kind that is none of these."""
    from phasekit.results import REGISTRY, from_data

    path = Path(path)
    data = json_head(path)
    kind = data.get("kind") if isinstance(data, dict) else None
    if kind in REGISTRY:
        return from_data(data, source=str(path))
    if kind == "power_profiles":
        from phasekit.energy.phasediv import power_profiles_from_dict

        return power_profiles_from_dict(data, source=str(path))
    if kind == "power_model":
        from phasekit.signature.reconstruct import load_power_model

        return load_power_model(data, str(path))
    if kind not in (None, "campaign"):
        raise InputError(f"a phasekit {kind!r} result, which read() does not know; it "
                         f"reads {', '.join(sorted(REGISTRY))}, power_model, "
                         "power_profiles and campaign", path=str(path))
    from phasekit.campaign import read_campaign

    return read_campaign(path)


def is_signature(path: str | os.PathLike[str]) -> bool:
    """Whether the folder ``path`` holds an application signature (its ``signature.json``)."""
    from phasekit.signature.paths import SIGNATURE_FILE

    return (Path(path) / SIGNATURE_FILE).is_file()
