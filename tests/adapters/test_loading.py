"""One reference grammar for scorers and targets: the command line (``scorecore eval SCORERS``,
``--target``) and Ray (``score_dataset(ds, "ref")``) accept the same references and load the
same scorers from them."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from scorecore_adapters._loading import LoadError, load_scorers, load_target
from scorecore_adapters.ray._references import load_scorers as ray_load_scorers
from scorecore_adapters.ray._references import load_target as ray_load_target

MODULE = '''
from scorecore import create_scorer

def _half(ctx):
    return 0.5

exact = create_scorer(id="exact", description="d").generate_score(lambda ctx: 1.0)
half = create_scorer(id="half-score", description="d").generate_score(_half)
scorers = [exact, half]
extra = [create_scorer(id="extra-a", description="d").generate_score(_half),
         create_scorer(id="extra-b", description="d").generate_score(_half)]

def make_one():
    return create_scorer(id="made", description="d").generate_score(_half)

class Targets:
    @staticmethod
    def double(item):
        return item

def target(item):
    return item

skipped_scorers = {"llm-judge": "no API key"}
NOT_SCORERS = "text"
'''


@pytest.fixture
def refmod(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A module ``refmod_scorers`` importable by name and by its file path."""
    path = tmp_path / "refmod_scorers.py"
    path.write_text(MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield path
    for name in [n for n in sys.modules if "refmod_scorers" in n]:
        del sys.modules[name]


@pytest.mark.parametrize(("names", "ids"), [
    ("", ["exact", "half-score"]),  # the module's `scorers` list
    (":exact", ["exact"]),  # an attribute
    (":half-score", ["half-score"]),  # a scorer id
    (":exact,half-score", ["exact", "half-score"]),
    (":extra", ["extra-a", "extra-b"]),  # an attribute holding a list
    (":make_one", ["made"]),  # a zero-argument factory
    (":make_one,exact,exact", ["made", "exact"]),  # each scorer once
])
@pytest.mark.parametrize("by", ["module", "file"])
def test_the_cli_and_ray_load_the_same_scorers_from_a_reference(
    refmod: Path, by: str, names: str, ids: list[str]
) -> None:
    source = "refmod_scorers" if by == "module" else str(refmod)
    spec = source + names
    assert [s.id for s in load_scorers(spec).scorers] == ids
    assert [s.id for s in ray_load_scorers(spec)] == ids


@pytest.mark.parametrize("by", ["module", "file"])
def test_the_cli_and_ray_load_the_same_target(refmod: Path, by: str) -> None:
    source = "refmod_scorers" if by == "module" else str(refmod)
    for attr in ("target", "Targets.double"):
        loaded = load_target(f"{source}:{attr}")
        on_ray = ray_load_target(f"{source}:{attr}")
        assert loaded.__qualname__ == attr
        assert on_ray is not None
        assert (on_ray.__module__, on_ray.__qualname__) == (loaded.__module__, attr)
        assert on_ray(7) == loaded(7) == 7


@pytest.mark.parametrize(("spec", "message"), [
    ("refmod_scorers:nope", "unknown scorer 'nope' in refmod_scorers; available: exact, "
                            "half-score, llm-judge"),
    ("refmod_scorers:NOT_SCORERS", "scorers refmod_scorers:NOT_SCORERS gave str, not a scorer"),
    ("refmod_absent:exact", "scorers module not found: refmod_absent"),
])
def test_both_entry_points_refuse_a_bad_reference_with_one_message(
    refmod: Path, spec: str, message: str
) -> None:
    del refmod
    with pytest.raises(LoadError) as cli:
        load_scorers(spec)
    with pytest.raises(ValueError, match=re.escape(message)) as ray:
        ray_load_scorers(spec)
    assert str(cli.value).startswith(message)
    assert str(ray.value) == str(cli.value)


def test_a_reference_to_skipped_scorers_only_is_refused_by_ray(refmod: Path) -> None:
    """The command line reports a skipped scorer; Ray has no run to skip it in."""
    del refmod
    assert load_scorers("refmod_scorers:llm-judge").skipped == {"llm-judge": "no API key"}
    with pytest.raises(ValueError, match="names no scorer to run"):
        ray_load_scorers("refmod_scorers:llm-judge")


def test_a_malformed_target_reference_says_what_it_must_look_like(refmod: Path) -> None:
    del refmod
    with pytest.raises(LoadError, match="target must look like module:function"):
        load_target("refmod_scorers")
    with pytest.raises(LoadError, match="target 'absent' not found in refmod_scorers"):
        load_target("refmod_scorers:absent")
