"""Tests of redact_secrets: secret keys and well-known credential shapes, at any depth."""

from __future__ import annotations

import json
import string
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from scorecore import redact_secrets
from scorecore._core._redact import may_hold_secret, redact_by_rules, redact_text
from tests.secret_shapes import BENIGN_PROSE, SECRET_SHAPES, SecretShape

R = "[REDACTED]"

SECRET_KEYS = [
    "openaiKey", "openai_key", "cookies", "oauth", "githubPat", "stripe_sk", "x-api-key",
    "set-cookie", "apiKey", "X-API-KEY", "OPENAI_API_KEY", "Authorization", "access_token",
    "refreshToken", "password", "passwd", "client_secret", "session_id", "sessionToken",
    "private_key", "credentials", "auth", "authToken", "aws_secret_access_key", "keys", "pwd",
]
BENIGN_KEYS = [
    "userId", "name", "max_tokens", "prompt_tokens", "completion_tokens", "tokenizer",
    "author", "path", "patch", "model", "temperature", "items", "value", "keyboard", "compat",
    "text", "id", "messages", "role", "content", "locale", "authority",
]


@pytest.mark.parametrize("key", SECRET_KEYS)
def test_secret_keys_are_redacted(key: str) -> None:
    """Each common credential key shape hides its value, nested or not."""
    assert redact_secrets({key: "v", "ok": 1}) == {key: R, "ok": 1}
    assert redact_secrets([{"a": {key: {"deep": "v"}}}]) == [{"a": {key: R}}]


@pytest.mark.parametrize("key", BENIGN_KEYS)
def test_look_alike_keys_are_kept(key: str) -> None:
    """Keys that merely resemble a credential word keep their values."""
    assert redact_secrets({key: "kept"}) == {key: "kept"}


@pytest.mark.parametrize(
    "secret",
    [
        "sk-abcdefghijklmnopqrstuvwxyz0123456789ABCD",
        "sk-proj-Abc123_def456-GHI789jklMNO012",
        "sk-ant-api03-AbC123dEf456GhI789jKl012",
        "sk_live_51Habcdefghij0123",
        "ghp_0123456789abcdefghijABCDEFGHIJ012345",
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
        "xoxb-1234567890-0987654321-AbCdEfGhIj",
        "AKIAIOSFODNN7EXAMPLE",
        "AIzaSyA-1234567890abcdefghijklmnopqrstu",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NSJ9.c2lnbmF0dXJl",
    ],
)
def test_well_known_secret_values_are_redacted_anywhere(secret: str) -> None:
    """A credential-shaped value is redacted under any key, in lists and inside text."""
    assert redact_secrets({"note": secret}) == {"note": R}
    assert redact_secrets([[secret]]) == [[R]]
    assert redact_secrets({"msg": f"use {secret} please"}) == {"msg": f"use {R} please"}


def test_http_credentials_are_redacted() -> None:
    """A value starting like an Authorization header goes whole; a bearer token in text too."""
    assert redact_secrets(["Bearer abc", "basic dXNlcjpwYXNz"]) == [R, R]
    assert redact_secrets("curl -H 'Authorization: Bearer abcdefghijklmnop1234'") == (
        f"curl -H 'Authorization: {R}'"
    )


def test_prose_and_look_alike_values_are_kept() -> None:
    """Words that only start like a prefix are not credentials."""
    texts = ["sk-learn-style-text-here", "task-management-system-overview1", "ghp_", "a token"]
    assert redact_secrets(texts) == texts


@pytest.mark.parametrize("shape", SECRET_SHAPES, ids=lambda s: s.name)
def test_secrets_inside_text_are_redacted(shape: SecretShape) -> None:
    """Each shape of the shared table loses its secret and keeps the text around it."""
    redacted = redact_secrets(shape.text)
    assert shape.secret not in redacted
    assert shape.kept in redacted
    assert R in redacted
    assert redact_secrets(redacted) == redacted  # redacting twice changes nothing more


@pytest.mark.parametrize("prose", BENIGN_PROSE)
def test_prose_about_secrets_is_kept_exactly(prose: str) -> None:
    """An explanation that talks about passwords, keys or tokens without holding one is kept."""
    assert redact_secrets(prose) == prose



_BENIGN_TEXT = st.text(alphabet=string.ascii_letters + string.digits + "_.,!?", max_size=19)
_LEAVES = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), _BENIGN_TEXT
)
_PLANT = "\x00plant\x00"


def _tree(leaves: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.recursive(
        leaves,
        lambda children: st.lists(children, max_size=4)
        | st.dictionaries(st.sampled_from(BENIGN_KEYS), children, max_size=4),
        max_leaves=12,
    )


_BODY = st.text(alphabet=string.ascii_letters + string.digits, min_size=24, max_size=40)


@st.composite
def _planted(draw: st.DrawFn) -> tuple[Any, Any, str]:
    """What to plant, what it must look like after redaction, and the secret string."""
    kind = draw(st.sampled_from(["key", "prefix", "prefix-in-text", "bearer"]))
    if kind == "key":
        key = draw(st.sampled_from(SECRET_KEYS) | st.builds(
            str.__add__,
            st.sampled_from(["", "openai", "my", "x-", "github_", "stripe"]),
            st.sampled_from(["Key", "_key", "-key", "Token", "_token", "Secret", "Password",
                             "Cookie", "_sk", "Pat", "_auth"]),
        ))
        secret = "s3cr3t-" + draw(_BODY)
        value = draw(st.sampled_from([secret, {"inner": secret}, [secret], {"a": [secret]}]))
        return {key: value}, {key: R}, secret
    prefix = draw(st.sampled_from(
        ["sk-", "sk-proj-", "sk-ant-api03-", "ghp_", "gho_", "github_pat_", "xoxb-", "sk_live_"]
    ))
    secret = prefix + draw(_BODY) + "7"
    if kind == "bearer":
        return "Bearer " + secret, R, secret
    if kind == "prefix-in-text":
        return f"use {secret} please", f"use {R} please", secret
    return secret, R, secret


def _replace(tree: Any, planted: Any) -> Any:
    if tree == _PLANT:
        return planted
    if isinstance(tree, dict):
        return {k: _replace(v, planted) for k, v in tree.items()}
    if isinstance(tree, list):
        return [_replace(v, planted) for v in tree]
    return tree


@given(
    tree=_tree(_LEAVES | st.just(_PLANT)).map(lambda t: [t, {"x": _PLANT}]),
    plant=_planted(),
)
def test_planted_secrets_never_survive_and_nothing_else_changes(
    tree: Any, plant: tuple[Any, Any, str]
) -> None:
    """However deep a secret is planted, it is gone; every other value is as it was."""
    planted, expected, secret = plant
    redacted = redact_secrets(_replace(tree, planted))
    assert secret not in json.dumps(redacted)
    assert redacted == _replace(tree, expected)


# Pieces each rule of redact_text starts from, and whole secrets: joined at random with
# arbitrary text, they reach every rule, alone and together.
_FRAGMENTS = st.sampled_from([
    *(shape.text for shape in SECRET_SHAPES), *(shape.secret for shape in SECRET_SHAPES),
    *BENIGN_PROSE, "=", ":", "://", "@", "\"", "'", " ", "\t", "\n", "-----BEGIN ",
    "PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----", "Authorization", "AUTHORIZATION",
    "authorization", "Bearer ", "BEARER ", "bearer", "Basic ", "Token ", "password", "api_key",
    "sk-", "sk-proj-", "sk_live_", "rk_test_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_",
    "github_pat_", "hf_", "xoxb-", "AKIA", "ASIA", "AIza", "eyJ", "eyJhbGciOiJIUzI1NiJ9.",
    "0123456789", "abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRST", "/+", "[REDACTED]",
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "https://bob:pw@db.example.com",
])
_TEXTS = st.lists(_FRAGMENTS | st.text(max_size=12), max_size=10).map("".join)


@given(text=_TEXTS | st.text())
@example(text="wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")  # exactly 40: the shortest AWS secret
@example(text="eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NSJ9.c2lnbmF0dXJl")
def test_the_fast_path_redacts_exactly_as_every_rule_does(text: str) -> None:
    """The one-scan check that lets ordinary text skip the rules never skips a text a rule
    changes: redact_text gives what running every rule gives, on any text."""
    assert redact_text(text) == redact_by_rules(text)


@pytest.mark.parametrize("shape", SECRET_SHAPES, ids=lambda s: s.name)
def test_the_fast_path_never_passes_a_known_secret_shape(shape: SecretShape) -> None:
    """Every secret shape of the shared table takes the rules' path, and loses its secret."""
    assert may_hold_secret(shape.text)
    assert shape.secret not in redact_text(shape.text)


@given(
    tree=_tree(_LEAVES),
    shapes=st.lists(st.sampled_from(SECRET_SHAPES), min_size=1, max_size=3,
                    unique_by=lambda shape: shape.text),
)
def test_a_secret_used_as_a_key_is_redacted_and_no_value_is_lost(
    tree: Any, shapes: list[SecretShape]
) -> None:
    """A credential can be a mapping's key (a context keyed by the token it was fetched
    with): the key is redacted like any text, and keys that redact alike are numbered, so
    every value under them is kept."""
    value = {"keep": tree, **{shape.text: i for i, shape in enumerate(shapes)}}
    redacted = redact_secrets(value)
    dumped = json.dumps(redacted)
    for shape in shapes:
        assert shape.secret not in dumped
    assert redacted["keep"] == redact_secrets(tree)
    assert len(redacted) == len(value)
    # Each value kept, or redacted whole where its key also names a credential ("password=…").
    kept = [v for k, v in redacted.items() if k != "keep"]
    assert all(v == R or v in range(len(shapes)) for v in kept)
    assert len(set(kept) - {R}) == sum(v != R for v in kept)
