"""docs/otel.md's mapping tables are what the OTLP transform does on the recorded payloads."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest

from scorecore.traces import Span, otlp_to_traces
from scorecore.traces._otlp.conventions import CONVENTIONS

LABELS = {"openinference": "OpenInference", "genai": "GenAI", "pydantic-ai": "pydantic-ai",
          "traceloop": "Traceloop", "openllmetry": "OpenLLMetry", "vercel-ai": "Vercel AI SDK"}
ROOT = Path(__file__).resolve().parents[2]
OTLP = Path(__file__).parent / "fixtures" / "otlp"
PAGE = (ROOT / "docs" / "otel.md").read_text(encoding="utf-8")
ROW = re.compile(r"^\| (.+) \|$", re.MULTILINE)
FIXTURES = {"GenAI": "genai_agent.json", "OpenInference": "openinference_agent.json"}
CONVENTION_KEY = {"GenAI": "gen_ai.operation.name", "OpenInference": "openinference.span.kind"}


def _section(heading: str) -> str:
    start = PAGE.index(heading) + len(heading)
    end = re.search(r"^#{2,3} ", PAGE[start:], re.MULTILINE)
    return PAGE[start:start + end.start()] if end else PAGE[start:]


def _rows(heading: str) -> list[list[str]]:
    rows = [[c.strip().strip("`") for c in m.group(1).split(" | ")]
            for m in ROW.finditer(_section(heading))]
    return [r for r in rows[1:] if not set(r[0]) <= {"-"}]  # drop the header and its rule


def test_span_type_table_is_the_transforms_table() -> None:
    """The span-type table lists exactly the operations and kinds the transform maps."""
    documented = {(c, a, v): t for c, a, v, t in _rows("## Span types")}
    expected = {(LABELS[c.name], c.key or "span name", k): v
                for c in CONVENTIONS for k, v in c.kinds.items()}
    assert documented == expected


@pytest.mark.parametrize(("convention", "attribute", "value", "span_type"),
                         _rows("## Span types"))
def test_span_type_rows_hold_on_a_span(
    convention: str, attribute: str, value: str, span_type: str
) -> None:
    """A span carrying just that attribute gets that span type."""
    span: dict[str, Any] = {"traceId": "aa", "spanId": "bb", "startTimeUnixNano": "1"}
    if attribute == "span name":
        span["name"] = value
    else:
        span["attributes"] = [{"key": attribute, "value": {"stringValue": value}}]
    (trace,) = otlp_to_traces({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}).unwrap()
    assert trace.spans[0].span_type == span_type


def _raw_spans(convention: str) -> list[dict[str, Any]]:
    payload = json.loads((OTLP / FIXTURES[convention]).read_text(encoding="utf-8"))
    return list(payload["resourceSpans"][0]["scopeSpans"][0]["spans"])


def _convert(raw: dict[str, Any]) -> Span:
    raw = {**raw, "parentSpanId": ""}  # alone: no fallback from other spans
    (trace,) = otlp_to_traces({"resourceSpans": [{"scopeSpans": [{"spans": [raw]}]}]}).unwrap()
    return trace.spans[0]


def _path(span: Span, path: str) -> Any:
    head, *rest = path.split(".")
    value = getattr(span, head)
    for key in rest:
        value = value.get(key) if isinstance(value, dict) else None
    return value


def _matches(key: str, pattern: str) -> bool:
    return key.startswith(pattern[:-1]) if pattern.endswith("*") else key == pattern


def _field_rows() -> list[tuple[str, str, str, str]]:
    return [(convention, *row)  # type: ignore[misc]
            for convention, heading in (("GenAI", "### GenAI semantic conventions"),
                                        ("OpenInference", "### OpenInference"))
            for row in _rows(heading)]


FIELD_ROWS = _field_rows()


@pytest.mark.parametrize(("convention", "span_type", "attribute", "field"), FIELD_ROWS)
def test_field_rows_hold_on_the_recorded_payloads(
    convention: str, span_type: str, attribute: str, field: str
) -> None:
    """For each row, on every recorded span of that type carrying the attribute: the field is
    set, equals the attribute when it is a plain value, and changes when the attribute (and
    any other attribute documented for the same field) is removed."""
    rivals = [a for c, t, a, f in FIELD_ROWS
              if (c, t, f) == (convention, span_type, field) and a != attribute]
    checked = 0
    for raw in _raw_spans(convention):
        keys = {a["key"] for a in raw["attributes"]}
        if not any(_matches(k, attribute) for k in keys):
            continue
        alone = copy.deepcopy(raw)
        alone["attributes"] = [a for a in raw["attributes"]
                               if not any(_matches(a["key"], r) for r in rivals)]
        span = _convert(alone)
        if span.span_type != span_type:
            continue
        checked += 1
        value = _path(span, field)
        assert value is not None, (attribute, field)
        plain = [a["value"] for a in alone["attributes"] if a["key"] == attribute]
        if plain and field.startswith(("entity_", "attributes.")):
            # a plain value is copied as it is (an intValue is a string in OTLP/JSON); of an
            # array (finish reasons), the first element
            first = plain[0].get("arrayValue", {}).get("values", [plain[0]])[0]
            raw_value = first.get("stringValue", first.get("intValue"))
            assert str(value) == str(raw_value), (attribute, value)
        without = copy.deepcopy(alone)
        without["attributes"] = [a for a in alone["attributes"]
                                 if not _matches(a["key"], attribute)]
        assert _path(_convert(without), field) != value, f"{attribute} does not set {field}"
    assert checked, f"no recorded {convention} {span_type} span carries {attribute}"
