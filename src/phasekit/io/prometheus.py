"""Node profiles from a Prometheus server: range queries over its HTTP API.

``read_prometheus("prometheus://host:9090", ["ipc=...", "node_load1"], start=..., end=...)``
runs each PromQL query over [start, end] at ``step`` seconds
(``GET /api/v1/query_range``) and returns one :class:`~phasekit.profile.Profile` per node:
the series are grouped by a label (``instance`` by default), one column per query.

- **Queries** are ``NAME=PROMQL`` or bare PromQL (named after its metric when it is a plain
  selector such as ``node_load1`` or ``up{job="x"}``, else after the query text). A query must
  give at most one series per node: aggregate in PromQL (``sum by (instance) (...)``), the
  error says so.
- **Counters** are read as stored: turning them into rates is PromQL's job
  (``rate(node_cpu_seconds_total[30s])``), which phasekit does not second-guess.
- **Long ranges** are fetched in chunks of at most :data:`MAX_POINTS` points per series
  (Prometheus refuses more than 11 000), with ``progress(fraction)`` told after each chunk.
  Timestamps are the regular grid start, start + step, ...; a grid point without a sample
  (a gap in the scrapes) stays NaN.
- **Units** come from the server's metadata (``/api/v1/metadata``) when the exporter gives
  one, else from the metric name's suffix (``_bytes``, ``_seconds``, ``_joules``...).
- **Errors** are one line naming the server: unreachable or refused (UnsupportedError, exit
  code 4), authentication refused (exit 4), a bad query or an empty result (InputError with
  the server's own message, exit 3).
- **Authentication**: ``prometheus://user:password@host:port`` (basic) or a bearer token in
  the environment variable :data:`TOKEN_VARIABLE`. ``prometheus+https://`` uses TLS.
"""

from __future__ import annotations

import base64
import datetime as _dt
import json
import math
import os
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from phasekit.errors import InputError, UnsupportedError, UsageError
from phasekit.io import PROMETHEUS_SCHEMES, is_prometheus_url
from phasekit.profile import Profile

__all__ = ["MAX_POINTS", "TOKEN_VARIABLE", "Query", "is_prometheus_url", "node_source",
           "parse_time", "read_prometheus"]

#: Grid points per series and request (Prometheus refuses more than 11 000).
MAX_POINTS = 10_000
#: Environment variable holding a bearer token sent to the server, if set.
TOKEN_VARIABLE = "PHASEKIT_PROMETHEUS_TOKEN"
#: Seconds one HTTP request may take.
TIMEOUT_S = 60.0
_NAMED = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_.:-]*)\s*=(?!=)\s*(.+)$", re.DOTALL)
_SELECTOR = re.compile(r"^\s*([A-Za-z_:][A-Za-z0-9_:]*)\s*(\{[^{}]*\})?\s*$")
_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d|w|y)")
_DURATION_S = {"ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 604800.0,
               "y": 31536000.0}
_SUFFIX_UNITS = (("_bytes_total", "B"), ("_bytes", "B"), ("_seconds_total", "s"),
                 ("_seconds", "s"), ("_joules_total", "J"), ("_joules", "J"), ("_watts", "W"),
                 ("_celsius", "°C"), ("_hertz", "Hz"), ("_ratio", ""), ("_percent", "%"))


@dataclass(frozen=True)
class Query:
    """One PromQL query and the metric name its values get."""

    name: str
    promql: str

    @classmethod
    def parse(cls, text: str) -> Query:
        """``NAME=PROMQL`` or bare PromQL (named after its metric, or its text)."""
        named = _NAMED.match(text)
        if named and not _SELECTOR.match(text):
            return cls(named.group(1), named.group(2).strip())
        promql = text.strip()
        if not promql:
            raise UsageError("expected a PromQL query (or NAME=PROMQL)", parameter="queries",
                             value="", option="--query")
        selector = _SELECTOR.match(promql)
        return cls(selector.group(1) if selector else promql, promql)


def parse_duration(text: str | float, parameter: str = "step") -> float:
    """Seconds of ``text``: a number of seconds or a Prometheus duration (``5s``, ``1m30s``).
    ``parameter``: the argument ``text`` was given as, which a UsageError names."""
    if isinstance(text, int | float):
        value = float(text)
    else:
        spec = text.strip()
        try:
            value = float(spec)
        except ValueError:
            parts = _DURATION.findall(spec)
            if not parts or "".join(n + u for n, u in parts) != spec:
                raise UsageError("expected a duration such as 5s, 1m or 1m30s",
                                 parameter=parameter, value=text) from None
            value = sum(float(n) * _DURATION_S[u] for n, u in parts)
    if not (math.isfinite(value) and value > 0):
        raise UsageError("expected a positive duration", parameter=parameter, value=text)
    return value


def parse_time(text: str | float | _dt.datetime, parameter: str = "start",
               now: float | None = None) -> float:
    """Unix seconds of ``text``: a number, an ISO-8601 time (UTC when naive), ``now`` or
    ``now-1h`` / ``-1h`` (a duration before now). ``parameter``: the argument ``text`` was
    given as, which a UsageError names."""
    now = time.time() if now is None else now
    if isinstance(text, _dt.datetime):
        moment = text if text.tzinfo else text.replace(tzinfo=_dt.UTC)
        return moment.timestamp()
    if isinstance(text, int | float):
        return float(text)
    spec = text.strip()
    relative = re.fullmatch(r"(?:now)?\s*-\s*(\S+)", spec)
    if spec == "now":
        return now
    if relative:
        try:
            return now - parse_duration(relative.group(1), parameter)
        except UsageError:
            raise UsageError("expected a positive duration after the minus, such as now-1h or "
                             "now-1m30s", parameter=parameter, value=text) from None
    try:
        return float(spec)
    except ValueError:
        pass
    try:
        moment = _dt.datetime.fromisoformat(spec.replace("Z", "+00:00"))
    except ValueError:
        raise UsageError("expected unix seconds, an ISO-8601 time (2026-11-26T10:00:00Z), "
                         "now or now-1h", parameter=parameter, value=text) from None
    return parse_time(moment, parameter)


class _Server:
    """The HTTP API of one Prometheus server."""

    def __init__(self, url: str, timeout: float) -> None:
        parts = urllib.parse.urlsplit(url)
        scheme = PROMETHEUS_SCHEMES.get(parts.scheme.lower())
        if scheme is None or not parts.hostname:
            raise UsageError(f"{url!r}: expected prometheus://HOST:PORT (or prometheus+https://)")
        host = parts.hostname if ":" not in parts.hostname else f"[{parts.hostname}]"
        port = f":{parts.port}" if parts.port else ""
        self.base = f"{scheme}://{host}{port}{parts.path.rstrip('/')}"
        self.shown = f"prometheus://{host}{port}{parts.path.rstrip('/')}"
        self.headers = {"Accept": "application/json"}
        if parts.username is not None:
            secret = f"{urllib.parse.unquote(parts.username)}:" \
                     f"{urllib.parse.unquote(parts.password or '')}"
            self.headers["Authorization"] = "Basic " + base64.b64encode(secret.encode()).decode()
        elif os.environ.get(TOKEN_VARIABLE):
            self.headers["Authorization"] = "Bearer " + os.environ[TOKEN_VARIABLE].strip()
        self.timeout = timeout

    def get(self, path: str, params: dict[str, str]) -> Any:
        """The ``data`` of the API's answer to ``GET path?params``; one-line errors."""
        request = urllib.request.Request(
            f"{self.base}{path}?{urllib.parse.urlencode(params)}", headers=self.headers)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as answer:
                body = answer.read()
        except urllib.error.HTTPError as exc:
            message = _server_message(exc.read()) or exc.reason
            if exc.code in (401, 403):
                raise UnsupportedError(f"{self.shown}: the server refused the credentials "
                                       f"(HTTP {exc.code}: {message}); give user:password@ in "
                                       f"the URL or a token in ${TOKEN_VARIABLE}") from None
            raise InputError(f"the server answered HTTP {exc.code}: {message}",
                             path=self.shown) from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise UnsupportedError(f"{self.shown}: cannot reach the Prometheus server "
                                   f"({reason})") from None
        try:
            answer_json = json.loads(body)
        except ValueError:
            raise InputError("the answer is not JSON: is this a Prometheus server?",
                             path=self.shown) from None
        if not isinstance(answer_json, dict) or answer_json.get("status") != "success":
            message = answer_json.get("error") if isinstance(answer_json, dict) else None
            raise InputError(f"the server answered: {message or 'an error'}", path=self.shown)
        return answer_json.get("data")


def _server_message(body: bytes) -> str:
    try:
        data = json.loads(body)
    except ValueError:
        return body.decode("utf-8", errors="replace").strip()[:200]
    return str(data.get("error") or "") if isinstance(data, dict) else ""


def read_prometheus(url: str, queries: Sequence[str | Query], *, start: str | float,
                    end: str | float = "now", step: str | float = 5.0,
                    label: str = "instance",
                    progress: Callable[[float], None] | None = None,
                    timeout: float = TIMEOUT_S) -> list[Profile]:
    """One Profile per value of ``label``, from ``queries`` over [start, end] every ``step``
    (module docstring). Profiles come sorted by node name; each has ``node`` set to it and
    ``meta["prometheus"]`` recording the server (``server`` as given, ``url`` its HTTP
    address), queries and range."""
    server = _Server(url, timeout)
    parsed = [q if isinstance(q, Query) else Query.parse(q) for q in queries]
    if not parsed:
        raise UsageError("give at least one PromQL query", parameter="queries", option="--query")
    names = [q.name for q in parsed]
    duplicate = next((n for n in names if names.count(n) > 1), None)
    if duplicate is not None:
        raise UsageError(f"two queries are named {duplicate!r}; name them NAME=PROMQL")
    # Prometheus keeps times in whole milliseconds: the grid is computed in them, exactly
    step_ms = round(parse_duration(step, "step") * 1000)
    if step_ms < 1:
        raise UsageError("Prometheus's resolution is 1 ms", parameter="step", value=step)
    start_ms = round(parse_time(start, "start") * 1000)
    end_ms = round(parse_time(end, "end") * 1000)
    if end_ms <= start_ms:
        raise UsageError(f"the end must be after the start ({_iso(start_ms / 1000)} .. "
                         f"{_iso(end_ms / 1000)})", parameter="end", value=end)
    n_points = (end_ms - start_ms) // step_ms + 1
    grid_ms = start_ms + step_ms * np.arange(n_points, dtype=np.int64)
    step_s, start_s, end_s = step_ms / 1000, start_ms / 1000, end_ms / 1000
    chunks = [(k, min(k + MAX_POINTS, n_points)) for k in range(0, n_points, MAX_POINTS)]
    columns: dict[str, dict[str, np.ndarray]] = {}
    done, total = 0, len(chunks) * len(parsed)
    for query in parsed:
        for first, stop in chunks:
            data = server.get("/api/v1/query_range", {
                "query": query.promql, "start": _seconds(grid_ms[first]),
                "end": _seconds(grid_ms[stop - 1]), "step": _seconds(step_ms)})
            _merge(data, query, label, grid_ms, first, stop, n_points, columns, server.shown)
            done += 1
            if progress is not None:
                progress(done / total)
    empty = [q.promql for q in parsed if not any(q.name in c for c in columns.values())]
    if not columns or len(empty) == len(parsed):
        raise InputError(f"no series for the queries between {_iso(start_s)} and "
                         f"{_iso(end_s)} (query {parsed[0].promql!r} gave no data)",
                         path=server.shown)
    units = _units(server, parsed)
    meta = {"prometheus": {"server": server.shown, "url": server.base,
                           "queries": {q.name: q.promql for q in parsed},
                           "start": _iso(start_s), "end": _iso(end_s), "step_s": step_s,
                           "label": label}}
    profiles = []
    for node in sorted(columns):
        present = columns[node]
        values = np.column_stack([present.get(name, np.full(n_points, np.nan))
                                  for name in names])
        profiles.append(Profile(values=values, period=step_s, metrics=tuple(names),
                                start=_dt.datetime.fromtimestamp(start_s, _dt.UTC),
                                units={n: u for n, u in units.items() if u}, node=node,
                                meta=meta))
    return profiles


def node_source(profile: Profile) -> str | None:
    """Where a node's profile read by :func:`read_prometheus` came from: the server's HTTP
    address and the label selecting the node, ``http://host:9090 instance="node1:9100"``;
    None for a profile from elsewhere."""
    meta = profile.meta.get("prometheus")
    if not isinstance(meta, Mapping) or not meta.get("url") or not profile.node:
        return None
    value = json.dumps(str(profile.node), ensure_ascii=False)  # PromQL's quoting: \" and \\
    return f"{meta['url']} {meta.get('label') or 'instance'}={value}"


def _merge(data: Any, query: Query, label: str, grid_ms: np.ndarray, first: int, stop: int,
           n_points: int, columns: dict[str, dict[str, np.ndarray]], shown: str) -> None:
    """The series of one answer into ``columns[node][query.name]``."""
    if not isinstance(data, dict) or data.get("resultType") != "matrix":
        raise InputError(f"query {query.promql!r}: expected a range vector (matrix) answer, got "
                         f"{data.get('resultType') if isinstance(data, dict) else data!r}",
                         path=shown)
    step_ms = int(grid_ms[1] - grid_ms[0]) if len(grid_ms) > 1 else 1
    seen: set[str] = set()
    for series in data.get("result") or []:
        labels = series.get("metric") or {}
        node = str(labels.get(label, ""))
        if node in seen:
            raise InputError(f"query {query.promql!r} gives several series for {label}="
                             f"{node!r}; expected one per node: aggregate in PromQL, e.g. "
                             f"sum by ({label}) (...)", path=shown)
        seen.add(node)
        column = columns.setdefault(node, {}).setdefault(query.name, np.full(n_points, np.nan))
        samples = series.get("values") or []
        if not samples:
            continue
        stamps_ms = np.rint(np.array([float(s[0]) for s in samples]) * 1000).astype(np.int64)
        values = np.array([_float(s[1]) for s in samples])
        index = (stamps_ms - grid_ms[0]) // step_ms
        keep = (index >= first) & (index < stop)
        column[index[keep]] = values[keep]


def _float(text: str) -> float:
    value = float(text)  # Prometheus writes NaN, +Inf and -Inf as such
    return value if math.isfinite(value) else math.nan


def _units(server: _Server, queries: Sequence[Query]) -> dict[str, str]:
    """Each query's unit: the exporter's metadata for a plain selector, else the suffix."""
    out = {}
    for query in queries:
        selector = _SELECTOR.match(query.promql)
        metric = selector.group(1) if selector else _metric_in(query.promql)
        unit = ""
        if selector:
            try:
                meta = server.get("/api/v1/metadata", {"metric": metric, "limit": "1"})
                entries = (meta or {}).get(metric) or []
                unit = str(entries[0].get("unit") or "") if entries else ""
            except (InputError, UnsupportedError):
                unit = ""
        if not unit and metric:
            unit = next((u for suffix, u in _SUFFIX_UNITS if metric.endswith(suffix)), "")
        if query.promql.lstrip().startswith(("rate(", "irate(")) and unit in ("B", "J"):
            unit += "/s"
        out[query.name] = unit
    return out


def _metric_in(promql: str) -> str | None:
    """The first metric name inside ``promql`` (for ``rate(x_bytes_total[1m])``: x_bytes_total)."""
    functions = {"rate", "irate", "sum", "avg", "max", "min", "by", "without", "increase",
                 "count", "delta", "deriv", "topk", "bottomk", "quantile", "stddev", "on",
                 "ignoring", "group_left", "group_right", "abs", "clamp", "offset"}
    for word in re.findall(r"[A-Za-z_:][A-Za-z0-9_:]*", re.sub(r"\{[^}]*\}|\[[^]]*\]", "",
                                                                promql)):
        if word not in functions:
            return word
    return None


def _seconds(milliseconds: int | np.integer) -> str:
    """Milliseconds as the API's seconds, exactly."""
    whole, rest = divmod(int(milliseconds), 1000)
    return f"{whole}.{rest:03d}"


def _iso(seconds: float) -> str:
    return _dt.datetime.fromtimestamp(seconds, _dt.UTC).isoformat().replace("+00:00", "Z")
