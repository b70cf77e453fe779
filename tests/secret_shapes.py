"""Secrets as they turn up inside text, and prose that only looks like them: the one table the
tests of every output (stored rows, reports, OpenTelemetry, logs, error messages) share."""

from __future__ import annotations

from typing import Final, final

import attrs


@final
@attrs.frozen(kw_only=True)
class SecretShape:
    """A secret inside a sentence: ``secret`` must be gone from every output, ``kept`` stay."""

    name: str
    text: str
    secret: str
    kept: str
    """Text around the secret that must survive (so a test cannot pass by losing everything)."""


# Secrets hold no character HTML or JSON escape, so "not in the output" is a real check.
SECRET_SHAPES: Final = (
    SecretShape(name="password=", text="login failed with password=hunter2pass0 for alice",
                secret="hunter2pass0", kept="for alice"),
    SecretShape(name="api_key=", text="called /v1/search?api_key=Qm9vb2tzMTIzNDU2 and retried",
                secret="Qm9vb2tzMTIzNDU2", kept="and retried"),
    SecretShape(name="quoted key", text='the config held {"client_secret": "zXc9vB8nM7qW"} then',
                secret="zXc9vB8nM7qW", kept="the config held"),
    SecretShape(name="password:", text="the reply says password: Tr0ub4dor3x yes",
                secret="Tr0ub4dor3x", kept="yes"),
    SecretShape(name="env assignment", text="export AWS_SECRET_ACCESS_KEY=abcd1234efgh5678 now",
                secret="abcd1234efgh5678", kept="now"),
    SecretShape(name="url user:password@",
                text="fetched https://alice:s3cr3tP4ssw0rd@db.example.com/rows ok",
                secret="s3cr3tP4ssw0rd", kept="db.example.com/rows ok"),
    SecretShape(name="Authorization: Basic",
                text="sent Authorization: Basic YWxhZGRpbjpvcGVuc2VzYW1l to the proxy",
                secret="YWxhZGRpbjpvcGVuc2VzYW1l", kept="to the proxy"),
    SecretShape(name="Authorization: Bearer",
                text="header Authorization: Bearer abc123xyz then 401",
                secret="abc123xyz", kept="then 401"),
    SecretShape(name="AWS secret key",
                text="aws key wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY was echoed",
                secret="wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", kept="was echoed"),
    SecretShape(name="hf_ token", text="token hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789 leaked",
                secret="hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", kept="leaked"),
    SecretShape(name="PEM private key",
                text="key: -----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7xQz\n"
                     "Zm9vYmFyYmF6\n-----END RSA PRIVATE KEY----- was pasted",
                secret="MIIEowIBAAKCAQEA7xQz", kept="was pasted"),
    SecretShape(name="PEM cut short",
                text="-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA",
                secret="b3BlbnNzaC1rZXktdjEAAAAA", kept=""),
    SecretShape(name="sk- key", text="use sk-proj-abc123def456ghi789jkl0 please",
                secret="sk-proj-abc123def456ghi789jkl0", kept="please"),
)

BENIGN_PROSE: Final = (
    "The password policy requires 12 characters; the API key rotation is monthly.",
    "Key: the answer is relevant. Token budget: 200 tokens. Secret: none.",
    "Basic arithmetic is correct and the secret sauce is clarity.",
    "See https://example.com/docs?page=2#top or write to user@example.com at 10:30.",
    "Commit 3f786850e387550fdab836ed7e6dc881de23001b fixed it.",
    "max_tokens=256, temperature=0.2, author: Jane, keyword: apple",
    "The private key must never be shared; rotate the session token daily.",
    "Authorization is required for this step; a Bearer of bad news.",
    "key=value pairs are parsed; the keys: a, b.",
)
"""Ordinary explanations that talk about secrets without holding one: kept exactly."""
