"""One-line, bounded, printable texts of exceptions and user values, for item and row errors."""

from __future__ import annotations

from scorecore.evals._persistence._sanitize import clean_text

__all__: list[str] = []  # internal: used by the evals modules


def text_of(value: object, limit: int = 1_000) -> str:
    """``str(value)`` cut to ``limit`` characters and cleaned for storage; never raises."""
    try:
        text = str(value)
    except Exception as exc:  # noqa: BLE001 - __str__ of a user's object is user code
        return f"<str() raised {type(exc).__qualname__}>"
    if len(text) > limit:
        text = f"{text[:limit]}… ({len(text):,} chars)"
    return clean_text(text)


def exception_text(exc: BaseException) -> str:
    """``"ValueError: message"``: bounded, printable, even when ``str(exc)`` raises."""
    return f"{type(exc).__qualname__}: {text_of(exc)}"
