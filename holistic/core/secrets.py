"""Secrets never reach anything holistic writes: one predicate, one scrubber, one redactor.

- :func:`is_secret_name` decides whether a field, argument, header or URL query
  parameter holds a secret (``api_key``, ``password``, ``access_token``, ``sig`` ...,
  but not ``eos_token`` or ``tokenizer``). It is the only such list in the package.
- :func:`scrub` masks such values in nested data and credentials in URLs
  (``user:pass@host``, ``?api-key=...``) — applied to ``run_spec.json`` facts.
- :class:`Redactor` replaces known secret *values* (the keys named by the model
  registry, read from the environment, and every secret its ``args`` hold:
  :func:`secret_values`) in any text: completions, errors, logs.
- A models file marks any value secret, whatever its name, as ``{secret: true, value: ...}``;
  :func:`reveal` gives clients the value itself.
"""

from __future__ import annotations

import base64
import os
import re
import urllib.parse
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

REDACTED = "***"
_URL_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*://\S*$")

_SECRET_WORDS = (
    "secret",
    "password",
    "passwd",
    "passphrase",
    "authorization",
    "credential",
    "cookie",
    "apikey",
    "api_key",
    "private_key",
)
_SECRET_EXACT = frozenset({"key", "token", "auth", "bearer", "signature", "sig", "pass", "pwd"})
_SPECIAL_TOKENS = frozenset(f"{t}_token" for t in ("bos", "eos", "pad", "unk", "sep", "cls", "mask"))


def is_secret_name(name: object) -> bool:
    """Whether a field called ``name`` holds a credential."""
    n = str(name).lower().replace("-", "_").strip()
    if n.endswith("_env"):  # the name of the variable that holds a key, not the key
        return False
    if any(word in n for word in _SECRET_WORDS) or n in _SECRET_EXACT:
        return True
    if n.endswith("_key") and n != "cache_key":
        return True
    return n.endswith("_token") and n not in _SPECIAL_TOKENS


def scrub_url(text: str) -> str:
    """``text`` with URL credentials masked: user info and secret-named query parameters."""
    if not _URL_RE.match(text):
        return text
    try:
        parts = urlsplit(text)
    except ValueError:
        return REDACTED
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{REDACTED}@{netloc.rsplit('@', 1)[1]}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        if any(is_secret_name(k) for k, _ in pairs):
            query = urlencode([(k, REDACTED if is_secret_name(k) else v) for k, v in pairs], safe="*")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def url_secrets(text: str) -> list[str]:
    """The credentials a URL carries (user info, secret-named query values), for a :class:`Redactor`."""
    if not _URL_RE.match(text):
        return []
    try:
        parts = urlsplit(text)
    except ValueError:
        return [text]
    found: list[str] = []
    if "@" in parts.netloc:
        userinfo = parts.netloc.rsplit("@", 1)[0]
        found += [userinfo, *userinfo.split(":")]
    found += [v for k, v in parse_qsl(parts.query, keep_blank_values=True) if is_secret_name(k)]
    return [s for s in found if s]


def is_marked_secret(value: object) -> bool:
    """A value the models file marks secret whatever its name: ``{secret: true, value: ...}``."""
    return isinstance(value, Mapping) and value.get("secret") is True and set(value) == {"secret", "value"}


def secret_values(value: Any) -> list[str]:
    """Every secret a models file's ``args`` hold, at any depth: the strings under secret-named keys
    (``extra_body: {api_key: ...}``), the values marked ``{secret: true, value: ...}``, URL
    credentials. A :class:`Redactor` of them scrubs a server's echo of them from all that is written."""
    found: list[str] = []
    stack = [value]
    while stack:
        current = stack.pop()
        if is_marked_secret(current):
            found.append(str(current["value"]))
        elif isinstance(current, Mapping):
            for k, v in current.items():
                if isinstance(v, str | int) and not isinstance(v, bool) and is_secret_name(k):
                    found.append(str(v))
                else:
                    stack.append(v)
        elif isinstance(current, list | tuple):
            stack.extend(current)
        elif isinstance(current, str):
            found.extend(url_secrets(current))
    return [s for s in found if s]


def reveal(value: Any) -> Any:
    """``value`` with each ``{secret: true, value: X}`` replaced by ``X``: what a client sends."""
    if is_marked_secret(value):
        return value["value"]
    if isinstance(value, Mapping):
        return {k: reveal(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [reveal(v) for v in value]
    return value


def conceal(revealed: Any, original: Any) -> Any:
    """``revealed`` (what :func:`reveal` made of ``original``) without the entries ``original`` marks
    secret: a client's identity (cache keys, ``run_spec.json``) never holds a marked value."""
    if isinstance(revealed, Mapping) and isinstance(original, Mapping):
        return {k: conceal(v, original.get(k)) for k, v in revealed.items() if not is_marked_secret(original.get(k))}
    if isinstance(revealed, list | tuple) and isinstance(original, list | tuple) and len(revealed) == len(original):
        return [REDACTED if is_marked_secret(o) else conceal(v, o) for v, o in zip(revealed, original, strict=True)]
    return revealed


def scrub(value: Any) -> Any:
    """A copy of ``value`` with secret-named entries masked and URL credentials removed (recursively)."""
    if is_marked_secret(value):
        return REDACTED
    if isinstance(value, Mapping):
        return {
            str(k): (
                REDACTED
                if is_secret_name(k) and v not in (None, "", False) and not isinstance(v, bool | Mapping)
                else scrub(v)
            )
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [scrub(v) for v in value]
    if isinstance(value, str):
        return scrub_url(value)
    return value


def drop_secrets(value: Any) -> Any:
    """``value`` with every secret-named mapping entry removed (recursively); for hashing identities."""
    if isinstance(value, Mapping):
        return {str(k): drop_secrets(v) for k, v in value.items() if not is_secret_name(k) and not is_marked_secret(v)}
    if isinstance(value, list | tuple):
        return [drop_secrets(v) for v in value]
    return value


def encoded_forms(secret: str) -> set[str]:
    """How a server may echo ``secret`` other than as is: URL-encoded, and base64 (standard and
    URL-safe alphabets) at each of the three alignments it can have inside a longer encoded text
    (e.g. ``Authorization: Basic base64(user:key)``): the characters that depend on the key alone."""
    forms = {urllib.parse.quote(secret, safe=""), urllib.parse.quote_plus(secret)}
    raw = secret.encode("utf-8")
    for offset, skip in ((0, 0), (1, 2), (2, 3)):
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            text = encode(b"\0" * offset + raw).decode("ascii")
            core = text[skip : len(text) - 4]  # the last group may mix in what follows the key
            if len(core) >= 12:
                forms.add(core)
    forms.discard(secret)
    return {f for f in forms if len(f) >= 4}


class Redactor:
    """Replaces known secret values (and their long tails, as servers often print masked keys) in text."""

    def __init__(self, secrets: Iterable[str | None] = ()) -> None:
        plain = {s for s in secrets if s and len(s) >= 4}
        self.secrets = tuple(sorted(plain | {e for s in plain for e in encoded_forms(s)}, key=len, reverse=True))

    @staticmethod
    def from_environment(variables: Iterable[str], environ: Mapping[str, str] | None = None) -> Redactor:
        environ = os.environ if environ is None else environ
        return Redactor(environ.get(v, "").strip() for v in variables)

    def __bool__(self) -> bool:
        return bool(self.secrets)

    def text(self, text: str) -> str:
        for secret in self.secrets:
            if secret in text:
                text = text.replace(secret, REDACTED)
            tail = secret[-8:]
            if len(secret) >= 16 and tail in text:
                text = text.replace(tail, REDACTED)
        return text
