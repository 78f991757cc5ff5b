"""Hypothesis strategies that write PII the way people (and attackers) do, and clean text
that looks like it.

:func:`pii_variants` draws a :class:`Variant`: a valid value of one kind (a Luhn-valid card
of a real network, an SSN, a NINO, a Chinese resident ID with its checksum, an IBAN with
its mod-97 digits, an Aadhaar number with its Verhoeff digit, a DNI, an email with Unicode
letters or an IDN domain, a phone number in a national or international format, an API
key, a password statement in one of seven languages — "my password's …", "the password
for my bank is …", "login ann / …", a passphrase of several words), rendered with

* any separator (ASCII, Unicode dashes, slashes, dots, no-break and ideographic spaces),
* Unicode forms (fullwidth letters and digits, Arabic-Indic / Devanagari digits,
  decomposed accents, fullwidth ``＠``, ideographic full stops in domains),
* zero-width characters (ZWSP, ZWJ, ZWNJ, word joiner, soft hyphen) inside the value,
* case changes, and
* embedded in a sentence in English, German, French, Spanish, Chinese or Japanese.

:func:`clean_sentences` draws text with the numbers people write that are *not* PII:
dates, times, prices, order and invoice numbers, version strings, durations ("I'm 415
days sober"), measurements, scores, ranges, ISBNs, postcodes, room numbers.
"""

from __future__ import annotations

import datetime
import unicodedata
from dataclasses import dataclass

from hypothesis import strategies as st

from langgraph_recall.extraction._pii_detectors import verhoeff_valid
from langgraph_recall.extraction.textnorm import normalize_for_matching

__all__ = ["CLEAN_CORPUS", "Variant", "canonical", "clean_sentences", "pii_variants"]

DIGITS = "0123456789"


@dataclass(frozen=True)
class Variant:
    """One PII value as written in ``text``.

    Attributes:
        text: The sentence.
        value: The PII exactly as it appears in ``text``.
        category: The category a filter must report.
        core: The value's canonical form (what must not be found in storage, whatever
            separators or Unicode forms storage would use).
        needs_context: The value is PII only with its words ("my password is …", "SSN").
    """

    text: str
    value: str
    category: str
    core: str
    needs_context: bool = False

    @property
    def bare(self) -> str:
        """The PII as a field value on its own (with its words when it needs them)."""
        return self.text if self.needs_context else self.value


def canonical(text: str) -> str:
    """NFKC, lower case, ASCII digits, no separators or invisible characters."""
    plain = normalize_for_matching(text).text.lower()
    return "".join(ch for ch in plain if ch not in " -./()\u00a0\t\n")


# -- building blocks ----------------------------------------------------------------------
SEPARATORS = [
    " ", "-", ".", "/", "\u2013", "\u2014", "\u2010", "\u2011", "\u2212", "\u00a0", "\u2009",
    "\u202f", "\u3000", "\uff0f", "\uff0e", "\uff0d", "\ufe63",
]  # fmt: skip
ZERO_WIDTH = ["\u200b", "\u200c", "\u200d", "\u2060", "\u00ad", "\ufeff"]


def _luhn_digit(body: str) -> str:
    total = 0
    for position, char in enumerate(reversed(body)):
        value = int(char)
        if position % 2 == 0:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return str((10 - total % 10) % 10)


def _digits(n: int) -> st.SearchStrategy[str]:
    return st.text(DIGITS, min_size=n, max_size=n)


@st.composite
def _unicode_form(draw: st.DrawFn, value: str) -> str:
    """The value with some ASCII characters in fullwidth or other-script digit forms."""
    form = draw(st.sampled_from(["ascii", "ascii", "fullwidth", "arabic", "devanagari"]))
    out = []
    for char in value:
        if form == "fullwidth" and "!" <= char <= "~" and draw(st.booleans()):
            out.append(chr(ord(char) + 0xFEE0))
        elif form == "arabic" and char.isdigit():
            out.append(chr(0x0660 + int(char)))
        elif form == "devanagari" and char.isdigit():
            out.append(chr(0x0966 + int(char)))
        else:
            out.append(char)
    return "".join(out)


@st.composite
def _zero_width(draw: st.DrawFn, value: str) -> str:
    if len(value) < 2 or not draw(st.booleans()):
        return value
    position = draw(st.integers(1, len(value) - 1))
    return value[:position] + draw(st.sampled_from(ZERO_WIDTH)) + value[position:]


def _grouped(digits: str, sizes: list[int], sep: str) -> str:
    parts, index = [], 0
    for size in sizes:
        parts.append(digits[index : index + size])
        index += size
    if index < len(digits):
        parts.append(digits[index:])
    return sep.join(part for part in parts if part)


# -- values -------------------------------------------------------------------------------
CARD_NETWORKS = [
    ("4", 16, [4, 4, 4, 4]), ("4", 13, [4, 4, 5]), ("4", 19, [4, 4, 4, 4, 3]),
    ("51", 16, [4, 4, 4, 4]), ("55", 16, [4, 4, 4, 4]), ("2221", 16, [4, 4, 4, 4]),
    ("2720", 16, [4, 4, 4, 4]), ("34", 15, [4, 6, 5]), ("37", 15, [4, 6, 5]),
    ("6011", 16, [4, 4, 4, 4]), ("65", 16, [4, 4, 4, 4]), ("3528", 16, [4, 4, 4, 4]),
    ("62", 19, [4, 4, 4, 4, 3]), ("36", 14, [4, 6, 4]),
]  # fmt: skip


@st.composite
def card_number(draw: st.DrawFn) -> tuple[str, str]:
    prefix, length, sizes = draw(st.sampled_from(CARD_NETWORKS))
    body = prefix + draw(_digits(length - len(prefix) - 1))
    digits = body + _luhn_digit(body)
    sep = draw(st.sampled_from(["", *SEPARATORS]))
    return _grouped(digits, sizes, sep), digits


@st.composite
def ssn(draw: st.DrawFn) -> tuple[str, str]:
    area = draw(st.integers(1, 899).filter(lambda a: a != 666))
    group, serial = draw(st.integers(1, 99)), draw(st.integers(1, 9999))
    digits = f"{area:03d}{group:02d}{serial:04d}"
    sep = draw(
        st.sampled_from(["-", "\u2013", "\u2014", "\u2011", " ", ".", "\uff0d", "\u2212", ""])
    )
    return _grouped(digits, [3, 2, 4], sep), digits


NINO_FIRST = "ABCEGHJKLMNOPRSTWXYZ"
NINO_SECOND = "ABCEGHJKLMNPRSTWXYZ"


@st.composite
def nino(draw: st.DrawFn) -> tuple[str, str]:
    prefix = draw(st.sampled_from(NINO_FIRST)) + draw(st.sampled_from(NINO_SECOND))
    if prefix in {"BG", "GB", "KN", "NK", "NT", "TN", "ZZ"}:
        prefix = "AB"
    digits, suffix = draw(_digits(6)), draw(st.sampled_from("ABCD"))
    sep = draw(st.sampled_from(["", " ", "\u00a0"]))
    value = prefix + sep + sep.join([digits[0:2], digits[2:4], digits[4:6]]) + sep + suffix
    value = draw(st.sampled_from([value, value.lower(), value.title()]))
    return value, (prefix + digits + suffix).lower()


@st.composite
def cn_resident_id(draw: st.DrawFn) -> tuple[str, str]:
    region = draw(st.sampled_from(["110101", "310104", "440305", "510107", "330106"]))
    birth = draw(st.dates(datetime.date(1940, 1, 1), datetime.date(2010, 12, 31)))
    body = region + birth.strftime("%Y%m%d") + draw(_digits(3))
    weights = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
    check = "10X98765432"[sum(int(d) * w for d, w in zip(body, weights, strict=True)) % 11]
    value = body + draw(st.sampled_from([check, check.lower()]))
    return value, value.lower()


IBAN_COUNTRIES = {"DE": 22, "GB": 22, "FR": 27, "ES": 24, "NL": 18, "IT": 27, "CH": 21}


@st.composite
def iban(draw: st.DrawFn) -> tuple[str, str]:
    country = draw(st.sampled_from(sorted(IBAN_COUNTRIES)))
    bban = draw(_digits(IBAN_COUNTRIES[country] - 4))
    numeric = "".join(str(int(c, 36)) for c in bban + country + "00")
    value = f"{country}{98 - int(numeric) % 97:02d}{bban}"
    sep = draw(st.sampled_from(["", " ", "\u00a0"]))
    shown = sep.join(value[i : i + 4] for i in range(0, len(value), 4))
    return draw(st.sampled_from([shown, shown.lower()])), value.lower()


def _verhoeff_digit(body: str) -> str:
    return next(str(d) for d in range(10) if verhoeff_valid(body + str(d)))


@st.composite
def aadhaar(draw: st.DrawFn) -> tuple[str, str]:
    body = draw(st.sampled_from("23456789")) + draw(_digits(10))
    digits = body + _verhoeff_digit(body)
    sep = draw(st.sampled_from([" ", "-", "\u2013", "\u00a0"]))
    return _grouped(digits, [4, 4, 4], sep), digits


@st.composite
def es_dni(draw: st.DrawFn) -> tuple[str, str]:
    number = draw(st.integers(10_000_000, 99_999_999))
    value = f"{number}{'TRWAGMYFPDXBNJZSQVHLCKE'[number % 23]}"
    return draw(st.sampled_from([value, value.lower(), f"{number}-{value[-1]}"])), value.lower()


LOCALS = [
    "ann", "zhang.san", "j.doe+news", "josé", "zoë", "müller", "张三", "ñandú", "o'brien",
    "dmitry_k", "ana-maria", "δημήτρης", "user123",
]  # fmt: skip
DOMAINS = [
    "example.com", "mail.example.co.uk", "qq.com", "bücher.de", "例子.中国", "пример.рф",
    "xn--bcher-kva.de", "corp-mail.io",
]  # fmt: skip


@st.composite
def email(draw: st.DrawFn) -> tuple[str, str]:
    local, domain = draw(st.sampled_from(LOCALS)), draw(st.sampled_from(DOMAINS))
    at = draw(st.sampled_from(["@", "@", "\uff20", "\ufe6b"]))
    dot = draw(st.sampled_from([".", ".", "\uff0e", "\u3002"]))
    local = draw(st.sampled_from([local, local.upper(), local.capitalize()]))
    if draw(st.booleans()):  # decomposed accents (NFD), as some keyboards send them
        local = unicodedata.normalize("NFD", local)
    value = local + at + domain.replace(".", dot)
    return value, canonical(local + "@" + domain)


PHONE_FORMATS = [
    "({a}) {b}-{c}", "{a}-{b}-{c}", "{a}.{b}.{c}", "{a}/{b}/{c}", "{a} {b} {c}",
    "+1 {a} {b} {c}", "1-{a}-{b}-{c}", "+1-{a}-{b}-{c}", "+1 ({a}) {b}-{c}",
    "+44 20 {b4} {c}", "020 {b4} {c}", "07700 9{c2}", "+44 7700 9{c2}",
    "+49 30 {b}{c}", "030 {b}{c}", "+49 (0)30 {b}{c}", "0171 {b}{c}",
    "+33 1 {p} {q} {r} {s}", "01 {p} {q} {r} {s}", "06.{p}.{q}.{r}.{s}",
    "13{n9}", "138 {b4} {c}", "+86 138 {b4} {c}",
    "03-{b4}-{c}", "+81 3-{b4}-{c}", "090-{b4}-{c}", "+91 98{b} {c2}", "0044 20 {b4} {c}",
]  # fmt: skip


@st.composite
def phone(draw: st.DrawFn) -> tuple[str, str]:
    fmt = draw(st.sampled_from(PHONE_FORMATS))
    parts = {
        "a": draw(st.sampled_from("23456789")) + draw(_digits(2)),
        "b": draw(_digits(3)),
        "b4": draw(_digits(4)),
        "c": draw(_digits(4)),
        "c2": draw(_digits(5)),
        "p": draw(_digits(2)),
        "q": draw(_digits(2)),
        "r": draw(_digits(2)),
        "s": draw(_digits(2)),
        "n9": draw(_digits(9)),
    }
    value = fmt.format(**parts)
    if len({ch for ch in value if ch.isdigit()}) == 1:  # "222 222 2222": a placeholder
        value = value[:-1] + str((int(value[-1]) + 1) % 10)
    unicode_sep = draw(st.sampled_from(["", "\u2013", "\u2011", "\u00a0", "\u2212", "\uff0f"]))
    if unicode_sep:  # one kind of separator swapped for its Unicode look-alike
        target = {"\u2013": "-", "\u2011": "-", "\u2212": "-", "\u00a0": " ", "\uff0f": "/"}
        value = value.replace(target[unicode_sep], unicode_sep)
    return value, "".join(ch for ch in value if ch.isdigit())


ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


@st.composite
def api_key(draw: st.DrawFn) -> tuple[str, str]:
    kind = draw(st.sampled_from(["sk", "sk-proj", "ghp", "akia", "xoxb", "glpat", "hf"]))
    body = draw(st.text(ALNUM, min_size=40, max_size=48))
    value = {
        "sk": "sk-" + body[:32],
        "sk-proj": "sk-proj-" + body,
        "ghp": "ghp_" + body[:36],
        "akia": "AKIA" + "".join(c for c in body.upper() if c.isalnum())[:16].ljust(16, "7"),
        "xoxb": "xoxb-" + body[:12] + "-" + body[12:36],
        "glpat": "glpat-" + body[:20],
        "hf": "hf_" + body[:34],
    }[kind]
    return value, value.lower()


PASSWORD_TEMPLATES = [
    "my password is {v}", "My Password: {v}", "the passcode is {v}", "pw is {v}",
    "PW: {v}", "the wifi password is {v}", "my PIN is {p}", "PIN: {p}", "the door code is {p}",
    "my password's {v}", "the password for my bank is {v}", "the PIN for my card is {p}",
    "login ann / {v}", "my passphrase is {w}", "our wifi passphrase is {w}, ask me again",
    "Mein Passwort ist {v}", "das Kennwort lautet {v}", "meine PIN ist {p}",
    "mon mot de passe est {v}", "le code secret est {p}", "mi contraseña es {v}",
    "la clave es {v}", "我的密码是{v}", "密码：{v}", "支付密码是{p}", "パスワードは{v}です",
    "暗証番号は{p}", "비밀번호는 {v}",
]  # fmt: skip
PASSPHRASE_WORDS = [
    "purple", "monkey", "dishwasher", "orbit", "lantern", "pepper", "violet", "canyon",
    "staple", "battery", "horse", "walrus", "tundra", "marble",
]  # fmt: skip


@st.composite
def password(draw: st.DrawFn) -> tuple[str, str]:
    template = draw(st.sampled_from(PASSWORD_TEMPLATES))
    word = draw(st.sampled_from(["hunter", "sonnenschein", "soleil", "gato", "dragon", "tulip"]))
    secret = word + draw(_digits(draw(st.integers(1, 4)))) + draw(st.sampled_from(["", "!", "#x"]))
    secret = draw(st.sampled_from([secret, secret.capitalize(), secret.upper()]))
    pin = draw(_digits(draw(st.integers(4, 6))))
    words = draw(st.lists(st.sampled_from(PASSPHRASE_WORDS), min_size=3, max_size=5))
    phrase = draw(st.sampled_from([" ".join(words), " ".join(words).upper()]))
    sentence = template.format(v=secret, p=pin, w=phrase)
    value = pin if "{p}" in template else phrase if "{w}" in template else secret
    return sentence, value


# -- sentences ----------------------------------------------------------------------------
SENTENCES = {
    "email": [
        "My email is {x}.", "Write to {x} please", "mail: {x}", "我的邮箱是{x}。",
        "Meine E-Mail-Adresse lautet {x}.", "Mon adresse est {x}", "Escríbeme a {x}.", "{x}",
        "メールは{x}です",
    ],
    "phone": [
        "Call me at {x}.", "My phone number is {x}", "我的电话是{x}", "Meine Handynummer: {x}.",
        "Mon numéro est le {x}.", "Llámame al {x}", "{x}", "reach me on {x} after 6pm",
        "電話番号は{x}です",
    ],
    "card": [
        "My card number is {x}.", "card {x} exp 12/27", "Visa: {x}", "信用卡号{x}",
        "Meine Kreditkarte: {x}", "{x}", "paid with {x} yesterday",
    ],
    "national_id": [
        "My SSN is {x}.", "SSN {x}", "NINO: {x}", "身份证号{x}", "IBAN {x}", "my IBAN is {x}.",
        "Aadhaar {x}", "DNI {x}", "{x}", "ID number: {x}",
    ],
    "secret": ["My API key is {x}.", "key={x}", "use {x} for the deploy", "密钥是{x}", "{x}"],
}  # fmt: skip
VALUES = {
    "email": [email()],
    "phone": [phone()],
    "card": [card_number()],
    "national_id": [ssn(), nino(), cn_resident_id(), iban(), aadhaar(), es_dni()],
    "secret": [api_key()],
}
PLAIN_DIGIT_IDS = ("ssn",)  # an unformatted 9-digit SSN needs the word "SSN" nearby


@st.composite
def pii_variants(draw: st.DrawFn, category: str | None = None) -> Variant:
    """A PII value of ``category`` (any when ``None``) written in a sentence."""
    chosen = category or draw(st.sampled_from([*VALUES, "password"]))
    if chosen == "password":
        sentence, value = draw(password())
        return Variant(sentence, value, "secret", canonical(value), needs_context=True)
    value, core = draw(st.one_of(*VALUES[chosen]))
    plain_ssn = chosen == "national_id" and value.isdigit() and len(value) == 9
    if chosen != "email":  # emails carry their own Unicode forms
        value = draw(_unicode_form(value))
    value = draw(_zero_width(value))
    template = draw(st.sampled_from(SENTENCES[chosen]))
    if plain_ssn:
        template = "My SSN is {x}."
    return Variant(template.format(x=value), value, chosen, core, needs_context=plain_ssn)


# -- clean text ---------------------------------------------------------------------------
CLEAN_CORPUS = [
    "User was born in 1990.", "User moved on 2024-05-01.", "User has 3 cats and 12 books.",
    "User works at Google.", "User uses Python 3.11.", "card 4111 1111 1111 1112",
    "I'm 415 days sober", "It costs $1,299.99", "order #12345678 shipped",
    "Order No. 2024-000123 is late", "Windows build 10.0.19041.1234", "1990-2000 were good years",
    "we met at 10:30 on 2024-05-01 10:30", "the password is wrong", "my password manager is great",
    "the flat is 1 299 999 €", "it raised 125 000 000 dollars", "05/01/2024", "2019 2020 2021",
    "token limit is 4096", "the secret is out", "ISBN 978-3-16-148410-0", "ZIP 94107-1234",
    "use logo@2x.png", "I slept 8 hours", "the token is expired", "I ran 5 km in 25:30",
    "My order number is 12345678", "room 1204, floor 12", "the pin is on the map",
    "Invoice 2024/00042 paid", "tracking number 9400111899223856", "flight LH 400 at 10:15",
    "scores 85 90 78 92 88", "Python 3.12.1 and Node 20.11.0", "version 2.14.0-rc.1",
    "between 2019 and 2021", "I'm 35 years old", "call me tomorrow", "I live at 221B Baker Street",
    "the meeting is on 12.03.2024", "Temperatures 21-25 °C", "ages 18-65", "pages 120-135",
    "it was 3-2 in the final", "I was born on 03/07/1985", "my password is the same as before",
    "the passcode is 6 digits long", "pw is not set", "Passwort ist falsch", "密码是什么",
    "I got 1,000,000 views", "it weighs 1.5 kg", "the recipe needs 250 g flour",
    "meet me @ the cafe", "@dataclass decorator", "npm install lodash@4.17.21",
    "version v1.2.3", "commit 605efa0 fixed it", "the year 2026", "10 000 steps today",
    "I paid 45.99 EUR", "¥12,800", "¥ 12 800", "2024年5月1日", "下午3点半", "5月1日に会いましょう",
    "Am 01.05.2024 um 10:30", "le 1er mai 2024 à 10h30", "el 1 de mayo de 2024",
    "IP 192.168.100.200 is the router", "lat 48.8566, lon 2.3522", "SKU 4006381333931",
    "Order 123-456-7890 shipped", "ticket #415-555-0100 resolved", "Part No. 0301234567",
    "I'm Not Sure", "This is great", "Nobody here", "The secret ingredient is love",
    "We sold 100 200 300 units", "000 000 0000", "pw: ********", "password: [redacted]",
    "The PIN code is four digits", "my lucky numbers are 4 8 15 16 23 42",
    "coordinates 40.7128, -74.0060", "He scored 1 234 567 points", "ISBN 0-306-40615-2",
    "the tracking number is 1Z999AA10123456784", "MAC 00:1B:44:11:3A:B7", "IP 10.0.0.1",
    "the secret sauce is mayo", "my password is in the drawer", "my PIN is my birthday",
    "5 000 000 people", "Temperature +12 °C", "gained +15000 followers", "I ran 10 km in 00:45:30",
    "the password's length is 12", "login page / dashboard", "the passphrase is too short",
    "Strong password policies help protect against brute-force attacks",
    "the password for the admin account is hashed using bcrypt", "my passphrase is three words",
]  # fmt: skip

CLEAN_TEMPLATES = [
    "Order #{n} shipped", "Invoice {n} is due", "my order number is {n}", "ticket {n} closed",
    "tracking number {n}", "I'm {s} days sober", "it costs ${s}.{c}", "the price is {s},{c} €",
    "we met on {d}", "version {v}", "build {v}", "I was born in {y}", "from {y} to {y2}",
    "{y}-{y2} season", "I walked {s} steps", "room {s}", "it weighs {s} kg", "page {s} of {s2}",
    "score {s2}-{s3}", "Python {v}", "at {t}", "{y}年{m}月{dd}日", "flight UA {s3}",
]  # fmt: skip


@st.composite
def clean_sentences(draw: st.DrawFn) -> str:
    """A sentence with dates, prices, ids of things, versions and counts (no PII)."""
    year = draw(st.integers(1900, 2090))
    month, day = draw(st.integers(1, 12)), draw(st.integers(1, 28))
    fmt_date = draw(
        st.sampled_from(["%Y-%m-%d", "%d/%m/%Y", "%m/%d/%Y", "%d.%m.%Y", "%Y/%m/%d", "%d-%m-%Y"])
    )
    values = {
        "n": draw(st.text(DIGITS, min_size=5, max_size=12)),
        "s": str(draw(st.integers(1, 99_999))),
        "s2": str(draw(st.integers(1, 999))),
        "s3": str(draw(st.integers(1, 999))),
        "c": f"{draw(st.integers(0, 99)):02d}",
        "d": datetime.date(year, month, day).strftime(fmt_date),
        "v": ".".join(str(draw(st.integers(0, 99))) for _ in range(draw(st.integers(2, 4)))),
        "y": str(year),
        "y2": str(min(2100, year + draw(st.integers(1, 10)))),
        "t": f"{draw(st.integers(0, 23)):02d}:{draw(st.integers(0, 59)):02d}",
        "m": str(month),
        "dd": str(day),
    }
    return draw(st.sampled_from(CLEAN_TEMPLATES)).format(**values)
