"""The end of a run (ev method): a change in the last vectors is not a phase unless the last
phase meets the detector's minimum phase length, as every other phase does."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from phasekit.phases import detect, execution_vectors, phases
from phasekit.phases.detect import timing
from phasekit.phases.vectors import LOAD_SENSOR
from phasekit.profile import Profile

METRICS = ("cycles", "instructions", "cache_misses", "branches")


def run_then_exit(seed: int, n_run: int, n_end: int, period: float = 1.0) -> Profile:
    """A steady program for ``n_run`` samples, then ``n_end`` samples of something else on
    every sensor (the program exiting within its last interval: few cycles, another mix)."""
    rng = np.random.default_rng(seed)
    parts = [(4e10, [1.8, 0.003, 0.04], n_run), (3e9, [0.6, 0.05, 0.2], n_end)]
    blocks = []
    for cycles, mix, k in parts:
        c = cycles * rng.lognormal(0, 0.02, (k, 1))
        blocks.append(np.hstack([c, np.asarray(mix) * rng.lognormal(0, 0.03, (k, 3)) * c]))
    return Profile(values=np.vstack(blocks), period=period, metrics=METRICS)


def naive_settled(starts: list[int], valid: np.ndarray, min_length: int) -> list[int]:
    """The rule, by plain counting: drop the last start while its phase has fewer than
    ``min_length`` valid vectors."""
    kept = list(starts)
    while len(kept) > 1 and int(valid[kept[-1]:].sum()) < min_length:
        kept.pop()
    return kept


@pytest.mark.parametrize("period", [1.0, 0.2])
def test_a_change_in_the_last_samples_is_not_a_phase(period: float) -> None:
    _, min_length = timing(period)
    for n_end in (1, 2, min_length - 1):
        profile = run_then_exit(n_end, 150, n_end, period)
        # the detector does report the exit (the online view) ...
        vectors = execution_vectors(profile, sensors=["instructions", "cache_misses",
                                                      "branches", "cycles_per_s"])
        found = detect(vectors.values, period=period, load_column=3)
        assert list(found.starts) == [0, 150]
        # ... but it is shorter than the minimum phase length: one phase to the end
        result = phases(profile)
        assert [(p.start_index, p.end_index) for p in result.phases] == [(0, 150 + n_end)]
        assert result.phases[0].end_s == profile.duration
        assert result.params["unsettled_changes"] == 1
        assert result.params["merged_changes"] == 0
        assert "minimum phase length" in result.explanation


@pytest.mark.parametrize("period", [1.0, 0.2])
def test_a_last_phase_of_the_minimum_length_is_kept(period: float) -> None:
    _, min_length = timing(period)
    profile = run_then_exit(3, 150, min_length, period)
    result = phases(profile)
    assert [p.start_index for p in result.phases] == [0, 150]
    assert result.phases[1].end_index - result.phases[1].start_index == min_length
    assert result.phases[0].id != result.phases[1].id
    assert result.params["unsettled_changes"] == 0


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 4), st.integers(1, 12))
def test_the_last_phase_meets_the_minimum_length(seed: int, n_changes: int, n_end: int) -> None:
    # random steps, gaps, and a last step of 1-12 vectors: the last phase of the result has
    # at least min_length valid vectors; the result keeps the detector's starts but for the
    # unsettled end (naive_settled) and the merges
    rng = np.random.default_rng(seed)
    lengths = [*rng.integers(12, 40, n_changes), n_end]
    cycles = np.concatenate([np.full(k, c) for k, c in
                             zip(lengths, rng.uniform(1e9, 4e10, len(lengths)), strict=True)])
    mixes = np.vstack([np.asarray(m) * rng.lognormal(0, 0.05, (k, 3)) for k, m in
                       zip(lengths, rng.uniform(0.01, 2, (len(lengths), 3)), strict=True)])
    X = np.column_stack([cycles, mixes * cycles[:, None]])
    X[rng.random(len(X)) < 0.05] = np.nan
    profile = Profile(values=X, period=1.0, metrics=METRICS)
    result = phases(profile)
    min_length = result.params["min_length"]
    vectors = result.vectors(profile)
    valid = vectors.valid
    last = result.phases[-1]
    assert valid[last.start_index:last.end_index].sum() >= min_length or \
        len(result.phases) == 1
    load = vectors.sensors.index(LOAD_SENSOR) if LOAD_SENSOR in vectors.sensors else None
    found = detect(vectors.values, period=1.0, load_column=load)  # as phases() calls it
    settled = naive_settled(found.starts.tolist(), valid, min_length)
    assert len(found.starts) - len(settled) == result.params["unsettled_changes"]
    kept = [p.start_index for p in result.phases]
    assert set(kept) <= set(settled)
    assert len(settled) - len(kept) == result.params["merged_changes"]
    assert all(a.id != b.id for a, b in itertools.pairwise(result.phases))


def test_ev_literal_keeps_the_seed_algorithm_at_the_end() -> None:
    # the rule is the ev method's (its minimum phase length); Algorithm 1 has none
    profile = run_then_exit(0, 150, 1)
    literal = phases(profile, method="ev-literal")
    vectors = literal.vectors(profile)
    assert [p.start_index for p in literal.phases] == \
        detect(vectors.values, method="ev-literal").starts.tolist()
    assert "unsettled_changes" in literal.params
    assert literal.params["unsettled_changes"] == 0
