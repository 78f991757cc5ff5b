"""The PII detectors: patterns and validators run on normalised text (pure, no I/O).

Each detector yields :class:`Finding` spans of the *normalised* text
(:mod:`langgraph_recall.extraction.textnorm`); :func:`detect` runs them all. The public
API (categories, overlap resolution, mapping back to the original text, redaction) is in
:mod:`langgraph_recall.extraction.pii`.

Numbers are read as *runs* (digit groups with single separators ``space - . /`` and
optional parentheses), then classified in Python: a card is a Luhn-valid 13–19 digit
window with a card-network prefix; a phone number needs a phone shape (``+`` or ``00``
country code, ``(area)``, North-American 3-3-4, a trunk ``0`` national number, a Chinese
mobile) or a phone word nearby ("call", "Handy", "电话"), and is never a date, a year
range, a price, an IP address or a number next to "order"/"invoice"/"#".
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import date

from langgraph_recall.extraction._lexicon import (
    CARD_CONTEXT,
    CJK_TLDS,
    CURRENCY_AFTER,
    CURRENCY_BEFORE,
    ID_CONTEXT,
    LENGTH_WORDS,
    NOT_PHONE,
    PHONE_STRONG,
    PHONE_WEAK,
    PHRASE_BREAKS,
    SECRET_VALUE_STOPWORDS,
)
from langgraph_recall.extraction._pii_code import (
    WEAK_KEYWORDS,
    code_value,
    not_a_token,
    placeholder_credentials,
    placeholder_value,
    quoted_code,
)

__all__ = ["Finding", "detect", "luhn_valid"]


@dataclass(frozen=True)
class Finding:
    """A detector hit on the normalised text."""

    category: str
    kind: str
    start: int
    end: int


# -- checksums ---------------------------------------------------------------------------
def luhn_valid(digits: str) -> bool:
    """True when the digit string passes the Luhn checksum (card numbers do).

    Example:
        ```python
        from langgraph_recall.extraction._pii_detectors import luhn_valid

        assert luhn_valid("4111111111111111") and not luhn_valid("4111111111111112")
        ```
    """
    if not digits.isascii() or not digits.isdigit():
        return False
    total = 0
    for position, char in enumerate(reversed(digits)):
        value = int(char)
        if position % 2 == 1:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


_VERHOEFF_D = [
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    [1, 2, 3, 4, 0, 6, 7, 8, 9, 5],
    [2, 3, 4, 0, 1, 7, 8, 9, 5, 6],
    [3, 4, 0, 1, 2, 8, 9, 5, 6, 7],
    [4, 0, 1, 2, 3, 9, 5, 6, 7, 8],
    [5, 9, 8, 7, 6, 0, 4, 3, 2, 1],
    [6, 5, 9, 8, 7, 1, 0, 4, 3, 2],
    [7, 6, 5, 9, 8, 2, 1, 0, 4, 3],
    [8, 7, 6, 5, 9, 3, 2, 1, 0, 4],
    [9, 8, 7, 6, 5, 4, 3, 2, 1, 0],
]
_VERHOEFF_P = [
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    [1, 5, 7, 6, 2, 8, 3, 0, 9, 4],
    [5, 8, 0, 3, 7, 9, 6, 1, 4, 2],
    [8, 9, 1, 6, 0, 4, 3, 5, 2, 7],
    [9, 4, 5, 3, 1, 2, 6, 8, 7, 0],
    [4, 2, 8, 6, 5, 7, 3, 9, 0, 1],
    [2, 7, 9, 3, 8, 0, 6, 4, 1, 5],
    [7, 0, 4, 6, 9, 1, 3, 2, 5, 8],
]


def verhoeff_valid(digits: str) -> bool:
    """True when the digit string passes the Verhoeff checksum (Indian Aadhaar numbers)."""
    check = 0
    for position, char in enumerate(reversed(digits)):
        check = _VERHOEFF_D[check][_VERHOEFF_P[position % 8][int(char)]]
    return check == 0


def _cn_resident_id_valid(value: str) -> bool:
    body, check = value[:17], value[17].upper()
    weights = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
    if "10X98765432"[sum(int(d) * w for d, w in zip(body, weights, strict=True)) % 11] != check:
        return False
    return _valid_date(int(body[6:10]), int(body[10:12]), int(body[12:14]))


def _valid_date(year: int, month: int, day: int) -> bool:
    try:
        date(year, month, day)
    except ValueError:
        return False
    return 1900 <= year <= 2100


_IBAN_LENGTHS = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22,
    "BR": 29, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DK": 18, "DO": 28, "EE": 20,
    "EG": 29, "ES": 24, "FI": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23, "GL": 18,
    "GR": 27, "GT": 28, "HR": 21, "HU": 28, "IE": 22, "IL": 23, "IS": 26, "IT": 27, "JO": 30,
    "KW": 30, "KZ": 20, "LB": 28, "LI": 21, "LT": 20, "LU": 20, "LV": 21, "MC": 27, "MD": 24,
    "ME": 22, "MK": 19, "MR": 27, "MT": 31, "MU": 30, "NL": 18, "NO": 15, "PK": 24, "PL": 28,
    "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22, "SA": 24, "SE": 24, "SI": 19, "SK": 24,
    "SM": 27, "TN": 24, "TR": 26, "UA": 29, "VG": 24, "XK": 20,
}  # fmt: skip


def iban_valid(value: str) -> bool:
    """True for an IBAN of its country's length whose mod-97 check is 1."""
    value = value.upper()
    if _IBAN_LENGTHS.get(value[:2]) != len(value) or not value.isalnum():
        return False
    rearranged = value[4:] + value[:4]
    return int("".join(str(int(char, 36)) for char in rearranged)) % 97 == 1


# -- context words -------------------------------------------------------------------------
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uf900-\ufaff]")
_WORD = re.compile(r"[^\W\d_]+(?:[.'\-][^\W\d_]+)*\.?|[#№$€£¥₩₹₽¢%]")


def _split(words: frozenset[str]) -> tuple[frozenset[str], tuple[str, ...]]:
    cjk = tuple(sorted((w for w in words if _CJK.search(w)), key=len, reverse=True))
    return frozenset(w for w in words if not _CJK.search(w)), cjk


_CONTEXTS = {
    "phone": _split(PHONE_STRONG),
    "weak": _split(PHONE_WEAK),
    "not_phone": _split(NOT_PHONE),
    "card": _split(CARD_CONTEXT),
    "id": _split(ID_CONTEXT),
}


_FAR = 10**6


def _distance(text: str, start: int, end: int, context: str, before: int, after: int) -> int:
    """Characters between the span and the nearest word of ``context`` (large: none)."""
    words, cjk = _CONTEXTS[context]
    best = _FAR
    lo, hi = max(0, start - before), min(len(text), end + after)
    for segment, offset, is_before in ((text[lo:start], lo, True), (text[end:hi], end, False)):
        lowered = segment.lower()
        tokens = [(m.group(), m.start(), m.end()) for m in _WORD.finditer(lowered)]
        pairs = [(a + " " + b, s, e) for (a, s, _), (b, _, e) in itertools.pairwise(tokens)]
        for token, tstart, tend in tokens + pairs:
            if token in words or token.rstrip(".") in words:
                gap = (start - (offset + tend)) if is_before else (offset + tstart - end)
                best = min(best, gap)
        for word in cjk:
            position = lowered.rfind(word) if is_before else lowered.find(word)
            if position >= 0:
                gap = (start - (offset + position + len(word))) if is_before else position
                best = min(best, gap)
    return best


# -- emails ---------------------------------------------------------------------------------
_LOCAL_CHARS = r"[\w!#$%&'*+=?^`{|}~\-]"
_LABEL = r"[^\W_](?:[\w\-]{0,61}[^\W_])?"
_DOT = r"(?:\.|[ ]?[\[(]dot[\])][ ]?)"
_EMAIL = re.compile(
    rf"(?<![\w!#$%&'*+=?^`{{|}}~.\-])(?P<local>{_LOCAL_CHARS}+(?:\.{_LOCAL_CHARS}+)*)"
    r"(?P<at>[ ]?@[ ]?|[ ]?[\[({<]at[\])}>][ ]?)"
    rf"(?P<domain>(?:{_LABEL}{_DOT})+(?:[^\W\d_]{{2,63}}|xn--[a-z0-9\-]{{1,59}}))(?![\w\-])",
    re.IGNORECASE,
)
_FILE_EXTENSIONS = frozenset({"png", "jpg", "jpeg", "gif", "svg", "webp", "bmp", "ico", "tiff"})
_CJK_COPULA = re.compile(r".*[是为為：:は]")


def _emails(text: str) -> Iterator[Finding]:
    for match in _EMAIL.finditer(text):
        if match["at"] == " @":
            continue  # "pass @app.route": a decorator after a word, not "ann @ example.com"
        start, end = match.start("local"), match.end("domain")
        local = match["local"]
        if local.endswith("}"):
            continue  # "https://{GITHUB_TOKEN}@github.com": a template's placeholder
        copula = _CJK_COPULA.match(local)
        if copula is not None:  # "邮箱是张三@…": the address starts after the copula
            start += copula.end()
            local = local[copula.end() :]
        if _CJK.search(local) and not _CJK.search(local[-1]):
            cut = max(i for i, char in enumerate(local) if _CJK.match(char)) + 1
            start, local = start + cut, local[cut:]  # "邮箱ann@…" → "ann@…"
        stripped = local.lstrip(".'`{|}~-")
        start += len(local) - len(stripped)
        labels = re.split(_DOT, match["domain"], flags=re.IGNORECASE)
        while len(labels) > 2 and _CJK.match(labels[-1]) and not _CJK.search(labels[-2]):
            end -= len(labels[-1]) + 1  # "qq.com。我的" → "qq.com" (one separator char)
            labels.pop()
        tld = labels[-1]
        cjk = _CJK.search(tld)
        if cjk is not None and cjk.start() >= 2:  # "example.comです" → "example.com"
            end -= len(tld) - cjk.start()
            labels[-1] = tld[: cjk.start()]
        elif cjk is not None:  # "例子.中国です" → "例子.中国" (a known CJK top-level domain)
            known = max((t for t in CJK_TLDS if tld.startswith(t)), key=len, default=tld)
            end -= len(tld) - len(known)
            labels[-1] = known
        if stripped and labels[-1].lower() not in _FILE_EXTENSIONS:
            yield Finding("email", "email", start, end)


# -- secrets ---------------------------------------------------------------------------------
_B = r"(?<![A-Za-z0-9_])"  # ASCII word boundaries: CJK text glues tokens to letters
_E = r"(?![A-Za-z0-9_])"
_JWT_PART = r"[A-Za-z0-9_\-]{10,}"
_TOKENS = [  # (kind, lower-case literals one of which the text must contain, pattern)
    ("api_key", ("sk-",), rf"{_B}sk-(?:proj-|ant-|live-)?[A-Za-z0-9_\-]{{16,}}"),
    ("api_key", ("_live_", "_test_"), rf"{_B}(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{{16,}}"),
    ("api_key", ("akia",), rf"{_B}AKIA[0-9A-Z]{{16}}{_E}"),
    ("api_key", ("gh",), rf"{_B}gh[pousr]_[A-Za-z0-9]{{30,}}{_E}"),
    ("api_key", ("github_pat_",), rf"{_B}github_pat_[A-Za-z0-9_]{{40,}}"),
    ("api_key", ("glpat-",), rf"{_B}glpat-[A-Za-z0-9_\-]{{20,}}"),
    ("api_key", ("xox",), rf"{_B}xox[abprs]-[A-Za-z0-9\-]{{10,}}"),
    ("api_key", ("aiza",), rf"{_B}AIza[0-9A-Za-z_\-]{{35}}{_E}"),
    ("api_key", ("hf_",), rf"{_B}hf_[A-Za-z0-9]{{30,}}{_E}"),
    ("api_key", ("npm_",), rf"{_B}npm_[A-Za-z0-9]{{36}}{_E}"),
    ("token", ("eyj",), rf"{_B}eyJ{_JWT_PART}\.{_JWT_PART}\.{_JWT_PART}"),
    ("token", ("bearer",), rf"{_B}bearer\s+[A-Za-z0-9._~+/\-]{{20,}}=*"),
    ("private_key", ("private key",), r"-----BEGIN [A-Z ]*PRIVATE KEY-----(?:[\s\S]*?-----END "
                                      r"[A-Z ]*PRIVATE KEY-----)?"),
    ("url_credentials", ("://",), rf"{_B}[a-z][a-z0-9+.\-]*://[^\s/:@]+:[^\s/@]+@"),
    ("token", ("0", "1", "2", "3", "4", "5", "6", "7", "8", "9"),
     rf"{_B}(?=[A-Za-z0-9_\-]*\d)(?=[A-Za-z0-9_\-]*[A-Za-z])[A-Za-z0-9_\-]{{32,}}{_E}"),
]  # fmt: skip
_TOKEN_PATTERNS = [(kind, needles, re.compile(p, re.IGNORECASE)) for kind, needles, p in _TOKENS]

_SECRET_WORDS = (
    # en
    r"pass(?:words?|wd|codes?|[ ]?phrases?|[ ]?keys?)|pwd|pw"
    r"|pins?(?:[ ]?(?:codes?|numbers?|no\.?))?|security[ ](?:codes?|pins?|answers?)"
    r"|cvv2?|cvc2?|csc|otp|one[ \-]time[ ](?:codes?|passwords?|pins?)"
    r"|(?:2fa|mfa|verification|auth(?:entication)?|login|access|unlock|door|alarm|gate|safe|locker"
    r"|garage)[ ]codes?|wi-?fi[ ](?:passwords?|keys?|codes?)"
    r"|(?:api|access|secret|private|auth|app|client)[ _\-]?(?:keys?|tokens?|secrets?)"
    r"|(?:bearer|refresh|session)[ ]tokens?|tokens?|secrets?"
    # de / fr / es / pt / it / nl / ru
    r"|passw[oö]rt(?:er)?|kennw[oö]rt(?:er)?|zugangscode|geheimzahl|geheimcode|sicherheitscode"
    r"|pin-?(?:code|nummer)|mots?[ ]de[ ]passe"
    r"|code[ ](?:secret|pin|d'accès|de[ ]sécurité|confidentiel)"
    r"|clé[ ](?:api|secrète)|contraseñas?|contrasenas?|clave(?:[ ]secreta|[ ]de[ ]acceso)?"
    r"|código[ ](?:pin|secreto|de[ ]acceso|de[ ]seguridad)|senhas?|palavra-passe"
    r"|parola[ ]d'ordine|codice[ ](?:pin|segreto)|wachtwoord|пароль"
)
_SECRET_STEMS = (  # every keyword of _SECRET_WORDS contains one of these (lower case)
    "pass", "pw", "pin", "secret", "token", "key", "code", "cvv", "cvc", "csc", "otp",
    "security", "kennw", "zugang", "geheim", "clé", "contrase", "clave", "código", "senha",
    "parola", "codice", "wachtwoord", "пароль",
)  # fmt: skip
_CONNECTOR = (
    r"[ ]*(?:[:=]|(?:is[ ]now|is[ ]still|is:|is|was|are|ist|lautet|war|est|était|c'est|es|era"
    r"|é|è)(?![^\W\d_])[ ]*[:=]?)[ ]*"  # the longest first: "is still" before "is"
    r"|['’]s[ ]+"  # "my password's hunter2" (a possessive too: see _secret_value)
)
_ABOUT = (  # "the password for my bank is …", "the PIN of the card: …"
    r"[ ]+(?:for|of|to|on|at|from)(?:[ ]+[^\W\d_][\w'’\-]*){1,4}?"
)
_QUOTED = r"[\"'“”‘’«»「『](?P<quoted>[^\"'“”‘’«»」』\n]{1,80})[\"'“”‘’«»」』]"
_VALUE = r"(?P<value>[^\s,;，。；、！？\"“”‘’«»「」『』]{3,80})"  # "!" and "?" may be in it
_SECRET_PHRASE = re.compile(
    rf"(?<![^\W\d_])(?P<keyword>{_SECRET_WORDS})(?![^\W\d_])"
    rf"(?:(?P<about>{_ABOUT})(?P<named>{_CONNECTOR})|(?P<connector>{_CONNECTOR}|[ ]+))"
    rf"(?:{_QUOTED}|{_VALUE})",
    re.IGNORECASE,
)
_PASSWORD_KEYWORDS = ("pass", "pw", "pin")  # a password, passphrase, passcode or PIN
_CREDENTIALS = re.compile(  # "login ann / hunter2", "credentials: ann:hunter2"
    r"(?<![^\W\d_])(?:log[ \-]?in|log[ \-]?on|sign[ \-]?in|credentials?|creds|user[ ]?name)"
    r"(?![^\W\d_])(?:[ ]*[:=][ ]*|[ ]+(?:is[ ]+)?)(?P<user>[\w.@+\-]{1,64})(?:[ ]*[/|][ ]*|:)"
    r"(?P<value>[^\s,;/|\"“”‘’«»]{3,80})",
    re.IGNORECASE,
)
_CREDENTIAL_STEMS = ("login", "log in", "log-in", "logon", "log on", "log-on", "signin",
                     "sign in", "sign-in", "cred", "username", "user name")  # fmt: skip
_PHRASE_WORD = re.compile(r"[^\W\d_]+(?:['’\-][^\W\d_]+)*")
_PARTICIPLES = ("ed", "ing", "ly")
_LENGTH = re.compile(r"\d+-?(?:char|character|digit|letter|symbol)s?", re.IGNORECASE)
_CJK_SECRET = re.compile(
    r"(?:支付密码|登录密码|密码|密碼|口令|密钥|密鑰|验证码|驗證碼|PIN码|pin码|暗証番号|パスワード|パスコード"
    r"|暗号|비밀번호|암호)(?P<connector>[ ]*(?:是|为|為|就是|：|:|は|=|는|은|이)?[ ]*)"
    rf"(?:{_QUOTED}|{_VALUE})"
)
_PLACEHOLDER = re.compile(r"\[(?:EMAIL|PHONE|CARD|NATIONAL_ID|SECRET)\](?:[.,;:!?)]*)$")
_LABEL_AFTER = re.compile(r"(?:[ ][^\W\d_]+){0,3}:(?:[ ]|$)")  # "User: ", "Ann Lee: "
_CJK_TAIL = re.compile(r"(?:です|でした|だよ|だ|よ|입니다|이에요|예요|吧|哦|呢|啊).*$")


def _passphrase(text: str, start: int, keyword: str) -> int | None:
    """End of a password of several words starting at ``start`` ("correct horse battery
    staple"; after "is", "was": a copula, not the ``:`` or ``=`` of code), or ``None``. The
    words run to the end of the clause — punctuation, the end, or a word that no password is
    made of (a function word, a conjunction, "wrong", "long") — with no length ("four random
    words"), no participle ("hashed using bcrypt") and no word of code ("return") among
    them: at least two after "passphrase", three after a password or PIN, one more when the
    first is a word that also says how a password *is* ("correct", "strong")."""
    words: list[re.Match[str]] = []
    position = start
    while (word := _PHRASE_WORD.match(text, position)) is not None:
        lowered = word.group().lower()
        if lowered in PHRASE_BREAKS or (words and lowered in SECRET_VALUE_STOPWORDS):
            break
        if lowered in LENGTH_WORDS or (len(lowered) >= 5 and lowered.endswith(_PARTICIPLES)):
            return None
        if code_value(lowered, ""):
            return None  # "password is return user": code
        words.append(word)
        if len(words) > 8 or text[word.end() : word.end() + 1] != " ":
            break
        position = word.end() + 1
    if not words or len(words) > 8:
        return None
    end = words[-1].end()
    if text[end : end + 1] not in ("", " ", ".", ",", ";", "!", "?", ")"):
        return None  # "correct/horse", "staple:": not a phrase ending its clause
    needed = 2 if "phrase" in keyword else 3
    needed += words[0].group().lower() in SECRET_VALUE_STOPWORDS
    return end if len(words) >= needed else None


def _sizes(text: str, start: int) -> bool:
    """The words from ``start`` to the end of their clause say how long something is."""
    position = start
    while (word := _PHRASE_WORD.match(text, position)) is not None:
        lowered = word.group().lower()
        if lowered in LENGTH_WORDS:
            return True
        if lowered in PHRASE_BREAKS or text[word.end() : word.end() + 1] != " ":
            return False
        position = word.end() + 1
    return False


def _secret_value(text: str, match: re.Match[str]) -> tuple[int, int] | None:
    groups = match.groupdict()
    about = groups.get("about")
    connector = (groups.get("named") if about else match["connector"]) or ""
    keyword = (groups.get("keyword") or "").lower()
    password = keyword.startswith(_PASSWORD_KEYWORDS)
    if about and not (password and re.search(r"[^\W\d_]", connector)):
        return None  # "the key for this dict is …", "password FROM users WHERE name = …"
    possessive = connector.strip()[:1] in ("'", "’")
    if possessive and not password:
        return None  # "the token's expiry": a possessive
    plural = connector.strip().lower() == "are"  # "tokens are often stored in …"
    if match["quoted"] is not None:
        quoted = match["quoted"]
        if len(quoted) < (2 if _CJK.match(quoted[0]) else 3) or placeholder_value(quoted):
            return None
        if quoted[0] in " ," or quoted_code(quoted):
            return None  # "password:', err); … log('": between two string literals of code
        if plural and not any(char.isdigit() for char in quoted):
            return None
        return match.start("quoted"), match.end("quoted")
    value, start = match["value"], match.start("value")
    copula = re.search(r"[^\W\d_]", connector) is not None and not possessive
    if password and copula and _PHRASE_WORD.fullmatch(value.rstrip(".,!?)")):
        end = _passphrase(text, start, keyword)
        if end is not None and end > start + len(value.rstrip(".,!?)")):
            if placeholder_value(text[start:end]):
                return None  # "is example passphrase here"
            return start, end  # "my passphrase is correct horse battery staple"
    if password and _PHRASE_WORD.fullmatch(value.rstrip(".,!?)")) and _sizes(text, start):
        return None  # "my passphrase is three random words": how long it is, not it
    if not value[0].isascii() and _CJK.match(value[0]):
        value = _CJK_TAIL.sub("", value)
    elif (cjk := _CJK.search(value)) is not None:
        value = value[: cjk.start()]
    if _PLACEHOLDER.match(value) or not any(char.isalnum() for char in value):
        return None  # already redacted ("[SECRET]") or masked ("********")
    value = value.rstrip(".:)]}>'")  # sentence punctuation; "hunter2!" keeps its "!"
    if value[-1:] == "?" and value[:-1].isalpha():
        value = value[:-1]  # "once the token is refreshed?"
    if code_value(value.rstrip(",;'\""), connector):
        return None
    if placeholder_value(value):
        return None
    if len(value) >= 6 and value.isalpha() and value.isascii() and value.endswith(("ed", "ly")):
        return None  # "the CSRF token is included", "is securely hashed"
    keyword = keyword or text[match.start() : match.start("connector")].lower()
    if keyword in WEAK_KEYWORDS and value.isalpha():
        return None  # "the token is close to expiring": a word, not a token
    if plural and not any(char.isdigit() for char in value):
        return None  # "tokens are often stored in cookies": no one secret is named
    if len(value) < (2 if value and _CJK.match(value[0]) else 3):
        return None
    if value.lower().strip("[](){}<>.") in SECRET_VALUE_STOPWORDS:
        return None  # "is wrong", "is the same", "is [redacted]"
    if value.isalpha() and _LABEL_AFTER.match(text, start + len(value)):
        return None  # "password =\nUser: …", "is: Note: …": a name that labels what follows
    if not connector.strip() and not any(char.isdigit() for char in value):
        return None  # "password manager", "token limit": no connector needs a digit
    if possessive and value.isalpha():
        return None  # "the password's length": a possessive names no password
    if _LENGTH.fullmatch(value):
        return None  # "the password's 8-char minimum"
    follower = text[start + len(value) :].split(maxsplit=1)
    if follower and follower[0].lower().rstrip(".,") in LENGTH_WORDS:
        return None  # "the password is 12 characters long", "the PIN is four digits"
    return start, start + len(value)


def _credential_pairs(text: str) -> Iterator[Finding]:
    """The password of a login written as a pair ("login ann / hunter2", "ann:hunter2" with
    no space at the colon: "login User: …" is a line of a transcript): one that looks like a
    password (a digit or a symbol in it), not a word ("login page / dashboard"), a stand-in
    ("user/password") or code."""
    for match in _CREDENTIALS.finditer(text):
        value, start = match["value"].rstrip(".:)]}>'"), match.start("value")
        if not any(char.isdigit() for char in value) and not re.search(r"\W\w", value):
            continue  # a word ("dashboard", "Certainly!"): a password has a digit or a symbol
        if len(value) < 3:
            continue
        if placeholder_value(value) or code_value(value, ":") or _LENGTH.fullmatch(value):
            continue
        if match["user"].lower() in SECRET_VALUE_STOPWORDS or placeholder_value(
            match["user"].split("@")[0]
        ):
            continue  # "login is / …", "username:password@host": a template
        if text[match.start() - 1 : match.start()] in ("/", ":", "@") or text[
            start + len(value) : start + len(value) + 1
        ] in ("/", "@"):
            continue  # "mongodb://username:password@host:27017/db": a URL, not a pair
        yield Finding("secret", "password", start, start + len(value))


def _secrets(text: str, lowered: str) -> Iterator[Finding]:
    for kind, needles, pattern in _TOKEN_PATTERNS:
        if not any(needle in lowered for needle in needles):
            continue  # a literal the pattern needs is absent: skip the scan
        for match in pattern.finditer(text):
            if kind == "url_credentials" and placeholder_credentials(match.group()):
                continue
            if not not_a_token(text, kind, match.start(), match.end()):
                yield Finding("secret", kind, match.start(), match.end())
    if any(stem in lowered for stem in _CREDENTIAL_STEMS):
        yield from _credential_pairs(text)
    phrases = [_CJK_SECRET]
    if any(stem in lowered for stem in _SECRET_STEMS):
        phrases.append(_SECRET_PHRASE)
    for pattern in phrases:
        for match in pattern.finditer(text):
            span = _secret_value(text, match)
            if span is not None:
                yield Finding("secret", "password", *span)


# -- national ids with letters or a fixed shape -------------------------------------------
_NINO = re.compile(
    r"(?<![A-Za-z0-9])(?P<prefix>[A-Za-z]{2})[ \-]?\d{2}[ \-]?\d{2}[ \-]?\d{2}[ \-]?[A-Da-d]"
    r"(?![A-Za-z0-9])"
)
_NINO_BAD = {"BG", "GB", "KN", "NK", "NT", "TN", "ZZ"}
_CN_ID = re.compile(r"(?<![A-Za-z0-9])(\d{6})([ \-]?)(\d{8})\2(\d{3}[\dXx])(?![A-Za-z0-9])")
_IBAN_START = re.compile(r"(?<![A-Za-z0-9])[A-Za-z]{2}\d{2}")
_ES_ID = re.compile(
    r"(?<![A-Za-z0-9])(?:(?P<dni>\d{8})|(?P<nie>[XYZxyz])[ \-]?(?P<nie_digits>\d{7}))[ \-]?"
    r"(?P<letter>[A-Za-z])(?![A-Za-z0-9])"
)
_ALONE_BEFORE = r"(?<![A-Za-z0-9_\-./])(?<!\d )"  # not a piece of a longer number
_ALONE_AFTER = r"(?![A-Za-z0-9_]|[ \-./]\d)"
_SSN = re.compile(rf"{_ALONE_BEFORE}(\d{{3}})([ \-.]?)(\d{{2}})\2(\d{{4}}){_ALONE_AFTER}")
_AADHAAR = re.compile(rf"{_ALONE_BEFORE}([2-9]\d{{3}})([ \-]?)(\d{{4}})\2(\d{{4}}){_ALONE_AFTER}")


def _nino_valid(prefix: str) -> bool:
    prefix = prefix.upper()
    return prefix[0] not in "DFIQUV" and prefix[1] not in "DFIOQUV" and prefix not in _NINO_BAD


def _iban_at(text: str, start: int) -> int | None:
    """End of a valid IBAN starting at ``start`` (separators: single spaces or dashes)."""
    length = _IBAN_LENGTHS.get(text[start : start + 2].upper())
    if length is None:
        return None
    chars: list[str] = []
    index = start
    while index < len(text) and len(chars) < length:
        char = text[index]
        if char.isascii() and char.isalnum():
            chars.append(char)
        elif not (char in " -" and chars and index + 1 < len(text) and text[index + 1].isalnum()):
            return None
        index += 1
    glued = index < len(text) and text[index].isascii() and text[index].isalnum()
    if len(chars) < length or glued:
        return None
    return index if iban_valid("".join(chars)) else None


def _national_ids(text: str) -> Iterator[Finding]:
    for match in _NINO.finditer(text):
        if _nino_valid(match["prefix"]):
            yield Finding("national_id", "uk_nino", match.start(), match.end())
    for match in _CN_ID.finditer(text):
        if _cn_resident_id_valid(match[1] + match[3] + match[4]):
            yield Finding("national_id", "cn_resident_id", match.start(), match.end())
    for match in _IBAN_START.finditer(text):
        end = _iban_at(text, match.start())
        if end is not None:
            yield Finding("national_id", "iban", match.start(), end)
    for match in _ES_ID.finditer(text):
        number = match["dni"] or str("XYZ".index(match["nie"].upper())) + match["nie_digits"]
        if "TRWAGMYFPDXBNJZSQVHLCKE"[int(number) % 23] == match["letter"].upper():
            yield Finding("national_id", "es_dni", match.start(), match.end())
    for match in _SSN.finditer(text):
        area, group, serial = match[1], match[3], match[4]
        if area in ("000", "666") or area[0] == "9" or group == "00" or serial == "0000":
            continue
        if match[2] or _distance(text, match.start(), match.end(), "id", 24, 16) < 24:
            yield Finding("national_id", "us_ssn", match.start(), match.end())
    for match in _AADHAAR.finditer(text):
        digits = match[1] + match[3] + match[4]
        grouped = bool(match[2])
        near = _distance(text, match.start(), match.end(), "id", 24, 16) < 24
        if verhoeff_valid(digits) and (grouped or near):
            yield Finding("national_id", "in_aadhaar", match.start(), match.end())


# -- number runs: cards and phones ----------------------------------------------------------
_RUN = re.compile(
    r"(?<![A-Za-z0-9_+])(?P<plus>\+[ ]?)?"
    r"(?P<body>(?:\(\d{1,5}\)|\d+)(?:(?:[ ]?[\-./][ ]?|[ ])?(?:\(\d{1,5}\)|\d+))*)"
)
_GROUP = re.compile(r"\(\d+\)|\d+")
_CARD_PREFIXES = re.compile(r"^(?:4|5[1-5]|2(?:2[2-9]|[3-6]\d|7[01]|720)|3[0-9]|6|50|5[6-9])")


@dataclass(frozen=True)
class _Run:
    start: int
    end: int
    plus: bool
    groups: tuple[tuple[str, int, int], ...]  # (digits, start, end); "(..)" kept in digits
    seps: frozenset[str]

    @property
    def digits(self) -> str:
        return "".join(g.strip("()") for g, _, _ in self.groups)

    @property
    def sizes(self) -> list[int]:
        return [len(g.strip("()")) for g, _, _ in self.groups]


def _runs(text: str) -> Iterator[_Run]:
    for match in _RUN.finditer(text):
        end = match.end()
        if end < len(text) and text[end].isascii() and text[end].isalpha():
            continue  # "12kg", "3rd", "0100am": a quantity, not a number on its own
        body_start = match.start("body")
        groups = tuple(
            (g.group(), body_start + g.start(), body_start + g.end())
            for g in _GROUP.finditer(match["body"])
        )
        seps = frozenset(
            text[a[2] : b[1]].strip() or " " for a, b in itertools.pairwise(groups) if b[1] > a[2]
        )
        yield _Run(match.start(), end, match["plus"] is not None, groups, seps)


def _is_date(sizes: list[int], values: list[int]) -> bool:
    """A date ("2024-05-01", "01/05/2024"), possibly with the hour of a time after it."""
    if len(sizes) == 4 and sizes[3] <= 2 and values[3] <= 24:
        sizes, values = sizes[:3], values[:3]  # "2024-05-01 10" of "2024-05-01 10:30"
    if len(sizes) != 3:
        return False
    for i in range(len(sizes) - 2):
        a, b, c = values[i : i + 3]
        shapes = [(a, b, c)] if sizes[i] == 4 else []
        if sizes[i + 2] in (2, 4):
            year = c if sizes[i + 2] == 4 else 2000 + c
            shapes += [(year, b, a), (year, a, b)]
        if any(_valid_date(y, m, d) for y, m, d in shapes if sizes[i] <= 4 and sizes[i + 1] <= 2):
            return True
    return False


def _not_a_phone(text: str, run: _Run) -> bool:
    sizes = [len(g.strip("()")) for g, _, _ in run.groups]
    values = [int(g.strip("()")) for g, _, _ in run.groups]
    if len(run.seps - {" "}) > 1:
        return True  # "1.2/3-4": mixed separators
    if run.seps & {"-", ".", "/"} and _is_date(sizes, values):
        return True
    if sizes == [4, 4] and all(1900 <= v <= 2100 for v in values):
        return True  # a year range
    if all(size == 4 for size in sizes) and all(1900 <= v <= 2100 for v in values):
        return True  # a list of years
    if run.seps == {"."} and len(sizes) == 4 and all(v <= 255 for v in values):
        return True  # an IPv4 address
    if run.seps == {"."} and len(sizes) == 2 and values[0] == 0 and sizes[0] == 1:
        return True  # a decimal fraction: "0.268435456"
    if run.plus and re.search(r"\d[ ]*$", text[max(0, run.start - 8) : run.start]):
        return True  # "0.30 + 0.26…": a plus between operands, not a country code
    before = text[: run.start].rstrip()
    after = text[run.end :].lstrip().lower()
    if before[-1:] in CURRENCY_BEFORE or after[:1] in CURRENCY_BEFORE:
        return True
    follower = re.match(r"[^\W\d_]+|%", after)
    if follower is not None and follower.group() in CURRENCY_AFTER:
        return True
    return (
        len(sizes) > 1
        and sizes[0] <= 3
        and all(s == 3 for s in sizes[1:])
        and (any(g.strip("()") == "000" for g, _, _ in run.groups[1:]))
    )  # thousands grouping: "125 000 000"


def _phone_shape(run: _Run) -> bool:
    sizes, digits = run.sizes, run.digits
    groups = [g for g, _, _ in run.groups]
    uniform = len(run.seps) <= 1 or run.seps <= {" ", "-"}
    if len(set(digits)) == 1:
        return False  # "000 000 0000": a placeholder (a phone word nearby still counts)
    if run.plus:
        return 8 <= len(digits) <= 15
    if digits.startswith("00") and sizes[0] in (2, 3, 4) and len(groups) > 1:
        return 10 <= len(digits) <= 17  # "0044 20 7946 0958"
    if groups[0].startswith("("):
        return 7 <= len(digits) <= 15 and 2 <= sizes[0] <= 5
    if re.fullmatch(r"1[3-9]\d{9}", digits) and sizes in ([11], [3, 4, 4], [3, 8]):
        return True  # Chinese mobile
    if not uniform:
        return False
    if sizes in ([3, 3, 4], [1, 3, 3, 4]) and (sizes[0] == 3 or digits[0] == "1"):
        return digits[-10] in "23456789"  # North American 3-3-4
    if digits[0] == "0" and 9 <= len(digits) <= 12 and len(sizes) >= 2:
        if len(sizes) == 2:
            return 2 <= sizes[0] <= 5 and 5 <= sizes[1] <= 9
        return all(2 <= size <= 5 for size in sizes)
    round_numbers = all(g.endswith("00") for g in groups)
    return (  # "612 345 678"; not "100 200 300" without a phone word
        len(sizes) >= 3
        and all(3 <= s <= 4 for s in sizes)
        and 9 <= len(digits) <= 12
        and not round_numbers
    )


def _cards(text: str, run: _Run) -> Finding | None:
    best: tuple[int, int] | None = None
    groups = run.groups
    for i in range(len(groups)):
        count = 0
        for j in range(i, len(groups)):
            size = len(groups[j][0])
            if groups[j][0].startswith("(") or (size < 3 and j > i) or count + size > 19:
                break  # cards are written in groups of 3 to 6 digits, or in one piece
            count += size
            if count < 13:
                continue
            digits = "".join(g for g, _, _ in groups[i : j + 1])
            if _CARD_PREFIXES.match(digits) and luhn_valid(digits):
                span = (groups[i][1], groups[j][2])
                if best is None or span[1] - span[0] > best[1] - best[0]:
                    best = span
    if best is None:
        return None
    if len(groups) == 1:  # an unformatted number: an order number right before it wins
        near_order = _distance(text, best[0], best[1], "not_phone", 16, 0)
        if near_order < 16 and _distance(text, best[0], best[1], "card", 32, 16) >= near_order:
            return None
    return Finding("card", "card", *best)


def _phones(text: str, run: _Run) -> Finding | None:
    digits = run.digits
    if not 7 <= len(digits) <= 17 or _not_a_phone(text, run):
        return None
    shaped = _phone_shape(run)
    if len(digits) > 15 and not (digits.startswith("00") and shaped):
        return None
    strong = _distance(text, run.start, run.end, "phone", 32, 24)
    if shaped:  # only a word right before it ("order no. 415-555-0100") says otherwise
        other = _distance(text, run.start, run.end, "not_phone", 16, 0)
        return None if other < strong else Finding("phone", "phone", run.start, run.end)
    other = _distance(text, run.start, run.end, "not_phone", 24, 16)
    if other == _FAR and strong == _FAR:
        strong = _distance(text, run.start, run.end, "weak", 32, 24)  # "number", "号码"
    return Finding("phone", "phone", run.start, run.end) if strong < other else None


def _numbers(text: str) -> Iterator[Finding]:
    for run in _runs(text):
        card = _cards(text, run)
        if card is not None:
            yield card
        phone = _phones(text, run)
        if phone is not None:
            yield phone


_ASCII_DIGIT = re.compile(r"[0-9]")
_AT_WORD = re.compile(r"[\[({<]at[\])}>]")


def detect(text: str) -> Iterable[Finding]:
    """Every raw finding in the normalised ``text`` (overlaps not resolved).

    Detectors whose patterns need a character the text lacks ("@", a digit, a keyword
    stem) are skipped without a scan: most sentences have no "@" and no digit.
    """
    lowered = text.lower()
    if "@" in text or _AT_WORD.search(lowered):
        yield from _emails(text)
    yield from _secrets(text, lowered)
    if _ASCII_DIGIT.search(text):
        yield from _national_ids(text)
        yield from _numbers(text)
