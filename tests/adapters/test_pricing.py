"""``load_pricing``: a pricing file in TOML or JSON gives the same prices; a bad one is a
``ValueError`` naming the file (and the model and field)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scorecore_adapters.pricing import load_pricing

PRICES = {"models": {"gpt-4o-mini": {"input": 0.15, "output": 0.6, "cached_input": 0.075}}}
TOML = '[models."gpt-4o-mini"]\ninput = 0.15\noutput = 0.6\ncached_input = 0.075\n'


def test_toml_and_json_files_give_the_same_prices(tmp_path: Path) -> None:
    toml_file, json_file, bare = tmp_path / "p.toml", tmp_path / "p.json", tmp_path / "p.txt"
    toml_file.write_text(TOML, encoding="utf-8")
    json_file.write_text(json.dumps(PRICES), encoding="utf-8")
    # The models level may be left out of a JSON file; a suffix other than .toml reads as JSON.
    bare.write_text(json.dumps(PRICES["models"]), encoding="utf-8")
    prices = [load_pricing(path).price("gpt-4o-mini") for path in (toml_file, json_file, bare)]
    assert prices[0] == prices[1] == prices[2]
    assert prices[0] is not None
    assert (prices[0].input, prices[0].output, prices[0].cached_input) == (0.15, 0.6, 0.075)


@pytest.mark.parametrize(
    ("name", "text", "names"),
    [
        ("p.toml", "[models\n", ["p.toml", "not valid TOML"]),
        ("p.json", "{", ["p.json", "not valid JSON"]),
        ("p.json", "[" * 100_000, ["p.json", "nested too deeply"]),
        ("p.json", json.dumps({"models": {"m1": {"input": -1, "output": 1}}}),
         ["p.json", "m1", "input"]),
    ],
)
def test_a_bad_file_is_an_error_naming_the_file_and_field(
    tmp_path: Path, name: str, text: str, names: list[str]
) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=r"pricing file '.*p\.(toml|json)'") as caught:
        load_pricing(path)
    for part in names:
        assert part in str(caught.value)


def test_a_missing_file_is_an_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"pricing file '.*absent\.toml'"):
        load_pricing(tmp_path / "absent.toml")
