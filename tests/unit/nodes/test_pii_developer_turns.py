"""The PII filter keeps a developer's turns: code, config and digests are not secrets.

Code names passwords and tokens all the time (``password = db.Column(...)``,
``if not password: return``, ``postgresql://user:password@db``, ``integrity="sha384-…"``,
``@app.route``); a filter that drops those turns forgets the conversation. Real secrets
written in code or config (a literal password, an env var with a value, credentials in a
URL) are still found, with their exact span.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langgraph_recall.extraction import PIIFilter, find_pii
from tests._hypothesis import thorough

DEVELOPER_TEXT = [
    "password = db.Column(db.String(120), nullable=False)",
    "username = data.get('username') password = data.get('password')",
    "if not username or not password: return jsonify({'error': 'missing'}), 400",
    "hashed_password = generate_password_hash(password, method='sha256')",
    "new_user = User(username=username, password=hashed_password)",
    'print(f"Hashed password: {new_user.password_hash}")',
    "Hashed password: pbkdf2:sha256:260000$zL6yRjZtQ5vGKwFf$5b7c7b7c7b7c7b7c7b7c7b7c7b7c7b7c",
    "stored_password = b'$2b$12$ZmJiY2RlZmJiY2RlZmJiY2RlZmJiY2RlZmJiY2RlZmJiY2Rl'",
    "make sure passwords are securely hashed and the CSRF token is included in the form",
    "CSRF tokens are often stored in cookies; check the token is close to expiring",
    "def login(): pass @app.route('/login', methods=['POST'])",
    "import base64 @app.route('/visualize') def visualize(): return render()",
    "mongoose.connect('mongodb://username:password@localhost:27017/mydatabase')",
    "mongodb+srv://<username>:<password>@cluster0.mongodb.net/<dbname>",
    "DATABASE_URL=postgresql://user:password@db:5432/database",
    "f\"postgresql://{os.environ['RDS_USERNAME']}:{os.environ['RDS_PASSWORD']}@host\"",
    "subprocess.run(['git', 'clone', f'https://{GITHUB_TOKEN}@github.com/org/repo'])",
    '<script src="bootstrap.min.js" integrity="sha384-w76AqPfDkMBDXo30jS1Sgez6pr3x5MlQ1ZAGC'
    '+nuZB+EYdgRZgiwxhTBTkF7CXvN" crossorigin="anonymous"></script>',
    '"gitVersion": "git version 7e8c9d0f5b9a3f6f30cfe08c8c5e0c3c7cc05a0f"',
    "attach the `AmazonEC2ContainerRegistryPowerUser` policy to the role",
    "const web = new WebClient('xoxb-your-slack-token');",
    "const API_KEY = 'YOUR_API_KEY_HERE'; const apiKey = 'my_api_key';",
    "password = \"mysecretpassword\" wrong_password = 'wrongpassword'",
    "curl -d 'username=testuser&password=testpass' http://localhost:5000/register",
    "API_KEY=/path/to/api/key",
    "password: $DB_PASSWORD",
    "console.error('Error comparing password:', err); return; } if (isMatch) { log('ok')",
    "const rateLimiter = new RateLimiter(1000, 86400000); // 1,200 calls per day",
    "P = 0.301989888 + 0.268435456 + 0.1073741824 = 0.6777995264",
]
SECRETS_IN_CODE = [  # (text, the secret)
    ("DB_PASSWORD=hunter2", "hunter2"),
    ("password = 'Tr0ub4dor3'", "Tr0ub4dor3"),
    ('conn = connect(user="app", password="s3cr3t-Pa55")', "s3cr3t-Pa55"),
    ("my password is sunshine", "sunshine"),
    ("my password is Fred", "Fred"),
    ("my password is $ecret99", "$ecret99"),
    ("my passwords are hunter2 and tiger3", "hunter2"),
    ("the password is passion7", "passion7"),
    ("postgresql://admin:S3cr3t9@db.internal:5432/app", None),
    ("export OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz012345", None),
    ("token: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", None),
    ("mail ann @ example.com or ann@example.com", None),
    ("mail me at ann@ example.com", None),
    ("call (UK) +44 20 7946 0958", "+44 20 7946 0958"),
]


@pytest.mark.parametrize("text", DEVELOPER_TEXT)
def test_developer_text_is_not_pii(text: str) -> None:
    assert find_pii(text) == [], [text[m.start : m.end] for m in find_pii(text)]
    assert PIIFilter().clean(text) == text


@pytest.mark.parametrize(("text", "secret"), SECRETS_IN_CODE)
def test_secrets_in_code_and_config_are_still_found(text: str, secret: str | None) -> None:
    found = [text[m.start : m.end] for m in find_pii(text)]
    assert found, text
    if secret is not None:
        assert found == [secret]
    assert PIIFilter().clean(text) is None


IDENTIFIER = st.from_regex(r"[a-z]{2,8}(_[a-z]{2,8}){0,2}", fullmatch=True)
KEYWORD = st.sampled_from(["password", "passwd", "token", "secret", "api_key", "PASSWORD"])


@settings(max_examples=thorough(300), deadline=None, database=None)
@given(
    keyword=KEYWORD,
    name=IDENTIFIER,
    attribute=IDENTIFIER,
    shape=st.sampled_from(
        [
            "{k} = {n}.{a}({n})",
            "{k} = {n}.get('{k}')",
            "{k} = {n}_{a}",
            "if not {k}: return {n}",
            "{n}({k}={a}_{k})",
            "{k}: {n}.{a}",
            "{n}_{k} = {a}({k})",
            "{k} = os.environ['{n}']",
            "const {k} = process.env.{n};",
            "{k}=${{{n}}}",
            "url = 'postgresql://{n}:{k}@{a}:5432/db'",
            "url = f'redis://{{{n}}}:{{{a}}}@{a}:6379'",
        ]
    ),
)
def test_code_that_names_a_secret_is_not_a_secret(
    keyword: str, name: str, attribute: str, shape: str
) -> None:
    """Whatever the identifiers, code that passes a secret around does not contain it."""
    text = shape.format(k=keyword, n=name, a=attribute)
    assert find_pii(text) == [], (text, [text[m.start : m.end] for m in find_pii(text)])


@settings(max_examples=thorough(300), deadline=None, database=None)
@given(
    keyword=st.sampled_from(["password", "PASSWORD", "db_password", "passwd", "pwd"]),
    word=st.sampled_from(["hunter", "dragon", "Sonne", "tulip", "gato"]),
    digits=st.integers(0, 99999),
    tail=st.sampled_from(["", "!", "#x", "-Q"]),
    shape=st.sampled_from(
        ["{k} = '{v}'", '{k}="{v}"', "{k}={v}", "{k}: {v}", "the {k} is {v}", "{k} is '{v}'"]
    ),
)
def test_a_literal_secret_in_code_is_found_with_its_span(
    keyword: str, word: str, digits: int, tail: str, shape: str
) -> None:
    value = f"{word}{digits}{tail}"
    text = shape.format(k=keyword, v=value)
    assert [text[m.start : m.end] for m in find_pii(text)] == [value], text


# -- a password named in other words: a possessive, a qualifier, a login pair, a phrase ----
PHRASINGS = [  # (text, the secret)
    ("my password's hunter2", "hunter2"),
    ("the password for my bank is hunter2", "hunter2"),
    ("login ann / hunter2", "hunter2"),
    ("my passphrase is correct horse battery staple", "correct horse battery staple"),
    (
        "my passphrase is correct horse battery staple, don't share it",
        "correct horse battery staple",
    ),
    ("my password is purple monkey dishwasher", "purple monkey dishwasher"),
    ("the PIN for my card is 4821", "4821"),
    ("my pin's 4821", "4821"),
    ("credentials: ann:hunter2", "hunter2"),
    ("username: admin / password: admin123", "admin123"),
    ("my password is still sunshine0", "sunshine0"),
    ("the passcode is now 4821", "4821"),
]
PROSE_ABOUT_PASSWORDS = [  # the same words, no password in them
    "the password's length is 12",
    "my password's strength is low",
    "the password's 8-char minimum",
    "Strong password policies help protect against brute-force attacks",
    "Implementing a password reset feature involves several important steps",
    "Ensure the new password meets certain complexity requirements.",
    'conn.execute(text("SELECT id, username, password FROM users WHERE username = :username"))',
    "the password for the user is required",
    "the password for this account is managed by IT",
    "the key for this dict is user_id",
    "the token's expiry is 3600",
    "login page / dashboard",
    "login user/password",
    "Login: {user}/{password}",
    "reset your password",
    "the passphrase is too short",
    "the passphrase is case sensitive",
    "my passphrase is three random words",
    "the password is hashed using bcrypt",
    "the password is correct for this account",
    "the password is different per environment",
    "the passphrase is stored in the keychain",
    "reset the password for Ann: she forgot it",
    "then password =\nUser: hi",
]


@pytest.mark.parametrize(("text", "secret"), PHRASINGS)
def test_a_password_named_in_other_words_is_found_with_its_span(text: str, secret: str) -> None:
    assert [text[m.start : m.end] for m in find_pii(text)] == [secret], text
    assert PIIFilter(mode="redact").clean(text) == text.replace(secret, "[SECRET]")


@pytest.mark.parametrize("text", PROSE_ABOUT_PASSWORDS)
def test_prose_and_code_about_passwords_is_not_pii(text: str) -> None:
    assert find_pii(text) == [], [text[m.start : m.end] for m in find_pii(text)]


WORD = st.sampled_from(["sunshine", "dragon", "tulip", "orbit", "marble", "Fluffy"])
SECRET = st.builds(
    lambda word, digits, tail: f"{word}{digits}{tail}",
    WORD,
    st.integers(0, 9999),
    st.sampled_from(["", "!", "#x", "-Q"]),
)


@settings(max_examples=thorough(300), deadline=None, database=None)
@given(
    secret=SECRET,
    keyword=st.sampled_from(["password", "Password", "passcode", "PIN", "pw", "passphrase"]),
    owner=st.sampled_from(["my", "the", "our", "Ann's"]),
    about=st.sampled_from(["my bank", "the wifi", "the old laptop", "work", "the safe at home"]),
    user=st.sampled_from(["ann", "admin", "j.doe", "ann@example"]),
    shape=st.sampled_from(
        [
            "{o} {k}'s {s}",
            "{o} {k}’s {s}",
            "{o} {k} for {a} is {s}",
            "{o} {k} to {a} was {s}",
            "{o} {k} of {a} is still {s}",
            "login {u} / {s}",
            "Login: {u}/{s}",
            "log-in {u} | {s}",
            "credentials {u}:{s}",
            "sign in {u} / {s}",
        ]
    ),
    end=st.sampled_from(["", ".", " so keep it safe", ", thanks"]),
)
def test_any_password_named_by_a_possessive_a_qualifier_or_a_login_pair_is_found(
    secret: str, keyword: str, owner: str, about: str, user: str, shape: str, end: str
) -> None:
    """Property: a secret-shaped value after a password keyword in a possessive ("my
    password's …"), after a qualifier ("… for my bank is …") or as the second half of a
    login pair is found, exactly its characters."""
    text = shape.format(o=owner, k=keyword, a=about, u=user, s=secret) + end
    assert [text[m.start : m.end] for m in find_pii(text)] == [secret], text


PHRASE_WORDS = st.sampled_from(["horse", "battery", "staple", "purple", "monkey", "walrus"])


@settings(max_examples=thorough(300), deadline=None, database=None)
@given(
    words=st.tuples(
        st.sampled_from(["correct", "strong", "horse", "purple"]),  # may say how it *is*
        st.lists(PHRASE_WORDS, min_size=3, max_size=5),
    ).map(lambda drawn: [drawn[0], *drawn[1]]),
    keyword=st.sampled_from(["passphrase", "pass phrase", "password", "Passphrase"]),
    end=st.sampled_from(["", ".", ", don't share it", " and I never write it down", "!"]),
)
def test_a_passphrase_of_several_words_is_redacted_whole(
    words: list[str], keyword: str, end: str
) -> None:
    """Property: a password of four to six words after "is" is found whole, to the end of
    its clause — never its first word alone, with the rest left behind; its first word may
    be one that also says how a password is ("correct")."""
    phrase = " ".join(words)
    text = f"my {keyword} is {phrase}{end}"
    assert [text[m.start : m.end] for m in find_pii(text)] == [phrase], text


@settings(max_examples=thorough(300), deadline=None, database=None)
@given(
    keyword=st.sampled_from(["password", "passphrase", "PIN", "passcode", "token", "key"]),
    noun=st.sampled_from(["length", "strength", "policy", "hash", "expiry", "reset flow"]),
    rest=st.sampled_from(["is low", "matters", "is 12 characters", "is checked on login", ""]),
    left=st.sampled_from(["login", "Login", "sign in", "username"]),
    right=st.sampled_from(["page / dashboard", "form / signup", "user/password", "{u}/{p}"]),
    verb=st.sampled_from(["hashed using bcrypt", "stored in the vault", "too short", "wrong"]),
)
def test_prose_about_a_password_names_none(
    keyword: str, noun: str, rest: str, left: str, right: str, verb: str
) -> None:
    """Property: a possessive ("the password's length"), a login form's words ("login page /
    dashboard") and prose that says how a password is ("is hashed using bcrypt") hold no
    secret."""
    for text in (
        f"the {keyword}'s {noun} {rest}".strip(),
        f"{left} {right}",
        f"the {keyword} for the admin account is {verb}",
        f"the {keyword} is {verb}",
    ):
        assert find_pii(text) == [], (text, [text[m.start : m.end] for m in find_pii(text)])
