"""What makes a "secret" in code, configuration or an example not one (pure, no I/O).

Developers' turns name passwords and tokens all the time: ``password = db.Column(...)``,
``postgresql://user:password@db``, ``'YOUR_API_KEY_HERE'``, ``integrity="sha384-…"``, a
commit id. :mod:`langgraph_recall.extraction._pii_detectors` asks these predicates before
it reports a secret, so the filter keeps such turns and still finds a literal password in
code (``DB_PASSWORD=hunter2``).

Example:
    ```python
    from langgraph_recall.extraction._pii_code import code_value, placeholder_credentials

    assert code_value("db.Column(db.String(120)", "=") and not code_value("hunter2", "=")
    assert placeholder_credentials("postgresql://user:password@")
    assert not placeholder_credentials("postgresql://admin:S3cr3t9@")
    ```
"""

from __future__ import annotations

import re

__all__ = [
    "WEAK_KEYWORDS",
    "code_value",
    "not_a_token",
    "placeholder_credentials",
    "placeholder_value",
    "quoted_code",
]

WEAK_KEYWORDS = frozenset({"token", "tokens", "secret", "secrets", "key", "keys"})
"""Keywords that name a secret only with a value that is more than a word ("the token is
close to expiring" names none)."""

_PLACEHOLDER_VALUE = re.compile(
    r"pass(?:word|wd|phrase)|^pass\d*$|secret|api_?key|token|your|example|placeholder|changeme"
    r"|^(?:test|dummy|sample|fake|demo)",
    re.I,
)  # "mysecretpassword", 'YOUR_API_KEY_HERE', "testpass": a stand-in in an example


_CODE_VALUE = re.compile(  # "$DB_PASSWORD", a bound parameter of SQL (":password")
    r"[(){}\[\]<>;`]|^\$[A-Z_][A-Z0-9_]*$|^:[A-Za-z_]\w*$|=>|->|::"
)
_IDENTIFIER = re.compile(r"[A-Za-z]+(?:[._][A-Za-z]+)+|[a-z]+(?:[A-Z][a-z]+)+")
_HASHED = re.compile(r"^(?:pbkdf2|argon2|scrypt|bcrypt|sha\d+)[:$_]|\$2[aby]?\$\d\d\$", re.I)
_PATH = re.compile(r"^(?:[~.]{0,2}/|[A-Za-z]:\\)")
_CODE_WORDS = frozenset({
    "return", "true", "false", "nil", "self", "this", "cls", "await", "async", "yield", "new",
    "def", "function", "lambda", "var", "let", "const", "if", "else", "elif", "while", "for",
    "str", "string", "int", "integer", "text", "varchar", "char", "bytes", "bool", "boolean",
    "object", "field", "column", "required", "optional", "input", "hash", "none", "null",
    "undefined",
})  # fmt: skip


def placeholder_value(value: str) -> bool:
    """The value is a stand-in of an example ("mysecretpassword", "YOUR_API_KEY_HERE")."""
    return _PLACEHOLDER_VALUE.search(value) is not None


def quoted_code(value: str) -> bool:
    """A quoted "value" that is code between two string literals, or a password hash."""
    return _CODE_VALUE.search(value) is not None or _HASHED.search(value) is not None


def placeholder_credentials(url_part: str) -> bool:
    """A template for credentials, not credentials: ``postgresql://user:password@``,
    ``mongodb://<user>:<password>@``, an f-string's ``{os.environ['DB_PASSWORD']}``."""
    password = url_part.rsplit(":", 1)[-1].rstrip("@")
    if re.search(r"[{}<>$%]", password):
        return True
    return placeholder_value(password)


def code_value(value: str, connector: str) -> bool:
    """The "value" after a password keyword is code: a call, a subscript, an identifier."""
    if _CODE_VALUE.search(value) or value.lower() in _CODE_WORDS or _HASHED.search(value):
        return True  # "password = db.Column(…", "if not password: return", "pbkdf2:sha256:…"
    if _PATH.match(value):
        return True  # "API_KEY=/path/to/api/key": where a secret is kept
    assigned = "=" in connector or ":" in connector
    return assigned and _IDENTIFIER.fullmatch(value) is not None  # "= hashed_password"


_PLACEHOLDER_TOKEN = re.compile(r"your[_\-]|x{4}|placeholder|dummy|changeme", re.I)
_CAMEL_WORDS = re.compile(r"(?:[A-Z][a-z]{2,}|[A-Z0-9]{1,4}(?=[A-Z]|$))+")
_DIGEST_CONTEXT = re.compile(
    r"(?:commit|sha(?:1|256|384|512)?|hash|digest|checksum|etag|version|revision|rev|"
    r"integrity|fingerprint|md5|build|object|tree|blob)\W{0,3}(?:[\w\-]{0,12}\W{1,3})?$",
    re.I,
)


def not_a_token(text: str, kind: str, start: int, end: int) -> bool:
    """A placeholder, an identifier, a password hash or a published digest."""
    value = text[start:end]
    if _PLACEHOLDER_TOKEN.search(value):
        return True  # "xoxb-your-slack-token"
    if kind != "token" or value.startswith(("eyJ", "eyj")):
        return False
    if re.match(r"sha(?:256|384|512)-", value, re.I) or re.search(
        r"sha(?:256|384|512)-[A-Za-z0-9+/=_\-]*$", text[max(0, start - 120) : start], re.I
    ):
        return True  # subresource integrity: integrity="sha384-…", base64 with "/" in it
    if re.search(r"(?:pbkdf2|argon2|scrypt|\$2[aby]?\$\d\d)\S*$", text[max(0, start - 80) : start]):
        return True  # the digest of a password hash ("pbkdf2:sha256:…$…", "$2b$12$…")
    if _CAMEL_WORDS.fullmatch(value):
        return True  # "AmazonEC2ContainerRegistryPowerUser": an identifier
    hexadecimal = re.fullmatch(r"[0-9a-fA-F]+", value) is not None
    return hexadecimal and _DIGEST_CONTEXT.search(text[max(0, start - 40) : start]) is not None
