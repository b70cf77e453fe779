"""Redacting secrets (API keys, auth tokens, passwords) from values before they are shown or
stored: the one redaction every output uses (stored rows, reports, OpenTelemetry attributes,
logs, error messages). Pure text rules, no I/O, so the kernel applies them where it builds rows
and causes, and the adapters where they print or export."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import overload

__all__ = ["redact_secrets"]

REDACTED = "[REDACTED]"

# A key is secret when its joined lowercase name (separators dropped) ends in or contains one
# of these, or when one of its words (split on separators and camelCase) is one of _SECRET_WORDS.
_SECRET_SUFFIXES = ("key", "keys", "token", "auth")
_SECRET_PARTS = (
    "secret", "password", "passwd", "passphrase", "credential", "cookie", "authoriz",
    "apikey", "privatekey", "accesskey",
)
_SECRET_WORDS = frozenset({
    "token", "auth", "oauth", "pwd", "pat", "sk", "jwt", "bearer", "session", "sessionid",
    "signature", "private",
})
_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
# A whole string that is an HTTP credential ("Bearer …", "Basic …", "Token …"): the scheme and
# one credential, nothing after it, so a sentence starting "Basic arithmetic is …" is kept.
_AUTH_VALUE = re.compile(r"^\s*(bearer|basic|token)\s+[A-Za-z0-9._~+/=-]+\s*$", re.IGNORECASE)
# Well-known credential shapes, found anywhere in a string (each replaced by REDACTED). Each
# starts with a literal (_TOKEN_LITERALS): text holding none of them skips the regex.
_SECRET_VALUE = re.compile(
    r"(?<![A-Za-z0-9_-])(?:"
    r"sk-(?=[A-Za-z0-9_-]*\d)[A-Za-z0-9_-]{20,}"  # OpenAI sk-…, sk-proj-…, Anthropic sk-ant-…
    r"|[sr]k_(?:live|test)_[A-Za-z0-9]{10,}"  # Stripe secret / restricted keys
    r"|gh[pousr]_[A-Za-z0-9]{20,}"  # GitHub tokens
    r"|github_pat_[A-Za-z0-9_]{20,}"  # GitHub fine-grained personal access tokens
    r"|hf_[A-Za-z0-9]{30,}"  # Hugging Face access tokens
    r"|xox[abposr]-[A-Za-z0-9-]{10,}"  # Slack tokens
    r"|(?:AKIA|ASIA)[A-Z0-9]{16}"  # AWS access key ids
    r"|AIza[A-Za-z0-9_-]{35}"  # Google API keys
    r"|eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]*"  # JSON web tokens
    r"|(?i:bearer)\s+[A-Za-z0-9._~+/-]{16,}=*"  # a bearer token inside a longer text
    r")"
)
_TOKEN_LITERALS = ("sk-", "k_live_", "k_test_", "gho_", "ghp_", "ghu_", "ghs_", "ghr_",
                   "github_pat_", "hf_", "xox", "AKIA", "ASIA", "AIza", "eyJ", "earer", "EARER")
# A run of exactly 40 base64 characters: an AWS secret access key when it mixes upper and lower
# case and digits (_is_aws_secret; a 40-character git hash is lower-case hex, so it is kept).
_RUN_OF_40 = re.compile(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")
# A PEM private key block, or its beginning when the text was cut before its END line.
_PEM_KEY = re.compile(
    r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----.*?(?:-----END [A-Z0-9 ]*-----|\Z)", re.DOTALL
)
# The credential of an Authorization header quoted in text ("Authorization: Basic dXNl…"),
# with its scheme.
_AUTH_HEADER = re.compile(
    r"(?P<head>\b(?:proxy-)?authorization[\"']?[ \t]*[:=][ \t]*[\"']?)"
    r"(?:(?:basic|bearer|token|digest|negotiate)[ \t]+)?[^\s\"',;]+",
    re.IGNORECASE,
)
# The password of a URL's user information: "https://user:password@host".
_URL_PASSWORD = re.compile(r"(?P<head>\b[A-Za-z][A-Za-z0-9+.-]*://[^\s/?#@:]*:)[^\s/?#@]+(?=@)")
# What follows the separator of "name=value", "name: value", "\"name\": \"value\"" in text: a
# quoted value runs to its closing quote. The regex starts at the separator (a fast scan);
# the name before it is read backwards (_name_before) and decides (_is_text_secret).
_ASSIGNED = re.compile(
    r"[:=][ \t]*(?:(?P<quote>[\"'])(?P<quoted>[^\"'\n]+)(?P=quote)"
    r"|(?P<value>[^\s\"'`,;&<>()\[\]{}]+))"
)
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
# Everyday words that also name a credential: after a colon they start prose ("Key: the answer
# is …", "Secret: none"), so only compound names ("api_key:") and passwords count there.
_PLAIN_WORDS = frozenset({"key", "keys", "token", "auth", "secret", "private", "session",
                          "signature", "bearer", "pat", "sk", "cookie", "credentials"})
_PASSWORDS = frozenset({"password", "passwd", "pwd", "passphrase"})


@functools.lru_cache(maxsize=4096)  # a batch's rows repeat the same few keys
def _is_secret_key(key: str) -> bool:
    joined = re.sub(r"[^a-z0-9]", "", key.lower())
    if joined.endswith(_SECRET_SUFFIXES) or any(part in joined for part in _SECRET_PARTS):
        return True
    return any(w.lower() in _SECRET_WORDS for w in _WORDS.findall(key))


@functools.lru_cache(maxsize=1024)  # prose repeats its few "name:" words
def _is_text_secret(key: str, op: str) -> bool:
    """Whether ``key`` followed by ``op`` (``=`` or ``:``) in prose names a credential."""
    plain = key.lower()
    if plain in _PASSWORDS:
        return True
    if plain in {"key", "keys"} or (op == ":" and plain in _PLAIN_WORDS):
        return False  # "key=value pairs", "Token: …" start ordinary sentences
    return _is_secret_key(key)


def _name_before(text: str, end: int) -> str:
    """The name ending at ``end`` (before optional blanks and a closing quote), or ``""``."""
    while end > 0 and text[end - 1] in " \t":
        end -= 1
    if end > 0 and text[end - 1] in "\"'":
        end -= 1
    start = end
    while start > 0 and text[start - 1] in _NAME_CHARS:
        start -= 1
    name = text[start:end]
    return name if name[:1].isascii() and name[:1].isalpha() else ""


def _redact_assignments(text: str) -> str:
    pieces: list[str] = []
    done = 0
    for match in _ASSIGNED.finditer(text):
        name = _name_before(text, match.start())
        value = match["quoted"] or match["value"]
        # An Authorization header was redacted with its scheme already (_AUTH_HEADER).
        if (not name or value == REDACTED or "authoriz" in name.lower()
                or not _is_text_secret(name, text[match.start()])):
            continue
        at = match.start("quoted") if match["quoted"] else match.start("value")
        pieces += (text[done:at], REDACTED)
        done = at + len(value)
    return "".join((*pieces, text[done:])) if pieces else text


def _is_aws_secret(match: re.Match[str]) -> str:
    run = match[0]
    mixed = (any(c.isupper() for c in run) and any(c.islower() for c in run)
             and any(c.isdigit() for c in run))
    return REDACTED if mixed else run


# Every telltale a rule of redact_by_rules starts from (its gate below), in one scan: a text
# holding none of them, and no word of 40 characters, is left as it is by every rule. Most texts
# a row stores are such (an answer, a ground truth, a reason), and one regex scan costs less
# than the rules' twenty substring tests. "://" needs ":", already here.
_TELLTALES = re.compile("|".join(
    re.escape(telltale)
    for telltale in ("=", ":", "-----BEGIN ", "uthoriz", "UTHORIZ", *_TOKEN_LITERALS)
))


def may_hold_secret(text: str) -> bool:
    """Whether any rule of :func:`redact_by_rules` could change ``text``: ``False`` proves
    it would come back unchanged."""
    if _TELLTALES.search(text) is not None:
        return True
    return len(text) >= 40 and max(map(len, text.split()), default=0) >= 40


def redact_text(text: str) -> str:
    """``text`` with every credential shape in it replaced by ``"[REDACTED]"`` (see
    :func:`redact_secrets`, whose rule for strings this is).

    A text holding none of the rules' telltale characters is returned as it is, after one
    scan (:func:`may_hold_secret`); otherwise every rule runs (:func:`redact_by_rules`).
    """
    return redact_by_rules(text) if may_hold_secret(text) else text


def redact_by_rules(text: str) -> str:
    """:func:`redact_text` without its one-scan shortcut: each rule in turn.

    Each rule runs only when the text holds its telltale characters (a fast substring test),
    so ordinary prose costs a few substring scans.
    """
    if "-----BEGIN " in text:
        text = _PEM_KEY.sub(REDACTED, text)
    if "uthoriz" in text or "UTHORIZ" in text:
        text = _AUTH_HEADER.sub(lambda m: m["head"] + REDACTED, text)
    if "://" in text and "@" in text:
        text = _URL_PASSWORD.sub(lambda m: m["head"] + REDACTED, text)
    if "=" in text or ":" in text:
        text = _redact_assignments(text)
    if any(literal in text for literal in _TOKEN_LITERALS):
        text = _SECRET_VALUE.sub(REDACTED, text)
    # The length of an AWS secret access key; most text has no word that long.
    if len(text) >= 40 and max(map(len, text.split()), default=0) >= 40:
        text = _RUN_OF_40.sub(_is_aws_secret, text)
    return text


@overload
def redact_secrets(value: str) -> str: ...
@overload
def redact_secrets(value: Mapping[str, object]) -> dict[str, object]: ...
@overload
def redact_secrets(value: object) -> object: ...
def redact_secrets(value: object) -> object:
    """A copy of ``value`` (nested mappings and lists) with secrets replaced by ``"[REDACTED]"``.

    Two rules, applied at any depth:

    - **Keys.** A key is text too: a credential in it is redacted as in any string (keys
      that then read alike are numbered, ``"[REDACTED] (2)"``, so no value is lost). A value
      is replaced whole when its key names a credential. The key is read
      case-insensitively, with ``_``, ``-``, ``.`` and camelCase separating words: it is secret
      when the joined name ends in ``key``/``keys``/``token``/``auth`` (``apiKey``,
      ``openai_key``, ``x-api-key``, ``accessToken``, ``oauth``), contains ``secret``,
      ``password``, ``passwd``, ``passphrase``, ``credential``, ``cookie``, ``authoriz``
      (``client_secret``, ``set-cookie``, ``Authorization``), or has a word ``token``,
      ``auth``, ``session``, ``pat``, ``sk``, ``pwd``, ``jwt``, ``bearer``, ``signature``,
      ``private`` (``githubPat``, ``stripe_sk``, ``session_id``). Look-alikes are kept:
      ``max_tokens``, ``prompt_tokens``, ``tokenizer``, ``author``, ``path``.
    - **Values.** A string that is an HTTP credential (``"Bearer …"``, ``"Basic …"``,
      ``"Token …"`` and nothing after the credential) is replaced whole. Anywhere in any
      string (a reason, an error message quoting a reply), these are replaced: well-known
      credential shapes — ``sk-…`` (OpenAI, ``sk-proj-…``, Anthropic ``sk-ant-…``), Stripe
      ``sk_live_…``, GitHub ``ghp_…``/``gho_…``/``github_pat_…``, Hugging Face ``hf_…``,
      Slack ``xoxb-…``, AWS ``AKIA…`` ids and 40-character secret keys, Google ``AIza…``,
      JSON web tokens, ``Bearer <token>``, PEM private key blocks (a block cut before its
      ``END`` line too); the credential of an ``Authorization: <scheme> <credential>``
      header; the password of a URL's ``user:password@``; and the value of a secret name
      written ``name=value``, ``name: value`` or ``"name": "value"`` (the key rule above
      decides, except that ``key=`` alone, and an everyday word before a colon —
      ``Key: …``, ``Token: …``, ``Secret: …`` — start ordinary sentences and are kept;
      ``password: …`` and compound names such as ``api_key: …`` are redacted).

    Everything else is returned as it was (tuples become lists): prose about secrets ("the
    password policy", "rotate the API key") is kept. It is a safety net, not a guarantee:
    choose what is stored (``input_from=`` in live scoring) to keep secrets out.

    >>> redact_secrets({"userId": "u1", "headers": {"Authorization": "Bearer x", "X-Api-Key": "k"},
    ...                 "max_tokens": 10})
    {'userId': 'u1', 'headers': {'Authorization': '[REDACTED]', 'X-Api-Key': '[REDACTED]'}, \
'max_tokens': 10}
    >>> redact_secrets(["use sk-proj-abc123def456ghi789jkl0 now", {"githubPat": "p"}])
    ['use [REDACTED] now', {'githubPat': '[REDACTED]'}]
    >>> redact_secrets("login with password=hunter2 at https://bob:pw@db.example.com failed")
    'login with password=[REDACTED] at https://bob:[REDACTED]@db.example.com failed'
    """
    # The exact types first (most values): a str is no Mapping, but asking the Mapping ABC
    # costs more than redacting a short text.
    if type(value) is str:
        return _redact_value_text(value)
    if type(value) is dict or isinstance(value, Mapping):
        out: dict[object, object] = {}
        for k, v in value.items():
            if not isinstance(k, str):
                out[k] = redact_secrets(v)
                continue
            out[_redacted_key(k, out)] = REDACTED if _is_secret_key(k) else redact_secrets(v)
        return out
    if isinstance(value, list | tuple):
        return [redact_secrets(v) for v in value]
    if isinstance(value, str):
        return _redact_value_text(value)
    return value


def _redact_value_text(value: str) -> str:
    """A string value as :func:`redact_secrets` keeps it: an HTTP credential whole, else
    :func:`redact_text`."""
    if _AUTH_VALUE.match(value):
        return REDACTED
    return redact_text(value)


# A key redacted as text: the mappings of a batch repeat the same few keys.
_key_text = functools.lru_cache(maxsize=4096)(redact_text)


def _redacted_key(key: str, taken: Mapping[object, object]) -> str:
    """``key`` with the credentials in it redacted (a mapping keyed by a token), numbered
    when that makes it a key already ``taken``: two keys redacted alike keep both values."""
    redacted = _key_text(key)
    if redacted not in taken:
        return redacted
    n = 2
    while f"{redacted} ({n})" in taken:
        n += 1
    return f"{redacted} ({n})"


def redact_strings(value: object) -> object:
    """A copy of ``value`` with :func:`redact_text` applied to every string in it (nested
    mappings and lists), keys left alone: for values whose keys are the program's own (a row's
    metadata: ``cacheKey`` is no credential) but whose texts may quote a reply."""
    if isinstance(value, Mapping):
        return {k: redact_strings(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_strings(v) for v in value]
    if isinstance(value, str):
        return redact_text(value)
    return value


def redacted_repr(value: object) -> str:
    """``repr`` of ``value`` with its secrets redacted (for attrs ``repr=``)."""
    return repr(redact_secrets(value))
