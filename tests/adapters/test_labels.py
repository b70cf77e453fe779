"""``scorecore_adapters.labels.read_labels``: the JSONL labels file and its errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from scorecore_adapters.labels import LabelFileError, read_labels


def test_reads_labels_keyed_by_item_id(tmp_path: Path) -> None:
    """Ids are the eval's (an integer id as its text), labels kept as given, other keys and
    blank lines ignored, a UTF-8 BOM dropped."""
    path = tmp_path / "labels.jsonl"
    path.write_text('\ufeff{"id": "a", "label": true, "annotator": "ana"}\n\n'
                    '{"id": 7, "label": 4}\n{"id": "c", "label": "good"}\n'
                    '{"id": "d", "label": 0.25}\n', encoding="utf-8")
    assert read_labels(path) == {"a": True, "7": 4, "c": "good", "d": 0.25}


def test_every_bad_line_is_named_with_its_field(tmp_path: Path) -> None:
    """All bad lines are reported at once, each naming the file, line and field; the message
    gives the first and how many more."""
    path = tmp_path / "labels.jsonl"
    path.write_text('{"id": "a", "label": true}\n{"id": "", "label": true}\n'
                    '{"id": "b", "label": {"x": 1}}\n{"id": "a", "label": false}\n'
                    '{"id": true, "label": 1}\n')
    with pytest.raises(LabelFileError) as caught:
        read_labels(path)
    assert caught.value.problems == (
        f"{path}:2: field 'id' must be a non-empty string or an integer, got \"\"",
        f"{path}:3: field 'label' must be true/false, a number or a non-empty string, got "
        '{"x": 1}',
        f"{path}:4: field 'id': \"a\" repeats line 1",
        f"{path}:5: field 'id' must be a non-empty string or an integer, got true",
    )
    assert str(caught.value) == f"{caught.value.problems[0]} (and 3 more bad line(s))"
    assert isinstance(caught.value, ValueError)


def test_an_unreadable_or_empty_file_is_an_error(tmp_path: Path) -> None:
    """A missing file and a file without labels are errors naming the file."""
    with pytest.raises(LabelFileError, match=r"cannot read labels file .*none\.jsonl: No such"):
        read_labels(tmp_path / "none.jsonl")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n  \n")
    with pytest.raises(LabelFileError, match=r"empty\.jsonl holds no labels"):
        read_labels(empty)
