"""Lexical search for Chinese, Japanese and Korean text on a real Postgres store.

Postgres' text-search parsers keep a run of CJK characters as one token; the store indexes
every run as its character bigrams, on the document and on the query, so a name, a place
or a company written in Chinese is found exactly as an English word is. Thirty near-
identical memories told apart by one name, city or company (and their English twin as
control): the lexical term fires for every query naming one and the named memory ranks
first. A property: every substring of two or more characters of a CJK text matches it.
"""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from langgraph_recall.store._types import ExplainedSearchItem
from langgraph_recall.store.postgres import PostgresMemoryStore
from langgraph_recall.store.postgres._migrations import MIGRATIONS
from tests._hypothesis import thorough
from tests.integration.store.conftest import Driver, index_config, open_store
from tests.integration.store.test_statistics import namespace_statistics

pytestmark = [pytest.mark.postgres]

NAMES = ["张伟", "李娜", "王芳", "刘洋", "陈静", "赵磊", "孙丽", "周杰", "吴敏", "郑浩"]
CITIES = ["杭州", "成都", "南京", "武汉", "长沙", "青岛", "厦门", "苏州", "昆明", "大连"]
COMPANIES = ["阿里巴巴", "腾讯", "华为", "字节跳动", "美团", "京东", "小米", "百度", "网易", "滴滴"]
EN = {
    **dict(zip(NAMES, ["Zhang Wei", "Li Na", "Wang Fang", "Liu Yang", "Chen Jing", "Zhao Lei",
                       "Sun Li", "Zhou Jie", "Wu Min", "Zheng Hao"], strict=True)),
    **dict(zip(CITIES, ["Hangzhou", "Chengdu", "Nanjing", "Wuhan", "Changsha", "Qingdao",
                        "Xiamen", "Suzhou", "Kunming", "Dalian"], strict=True)),
    **dict(zip(COMPANIES, ["Alibaba", "Tencent", "Huawei", "ByteDance", "Meituan", "JD",
                           "Xiaomi", "Baidu", "NetEase", "Didi"], strict=True)),
}  # fmt: skip


def corpus(language: str) -> list[tuple[str, str, str]]:
    """(key, memory, query naming it): ten memories per varied slot, the rest identical."""
    rows: list[tuple[str, str, str]] = []
    for i in range(10):
        slots = [
            (NAMES[i], "孙悦", "华润"),  # told apart by the colleague's name
            ("马超", CITIES[i], "顺丰"),  # by the city
            ("林峰", "宁波", COMPANIES[i]),  # by the company
        ]
        for group, (name, city, company) in enumerate(slots):
            if language == "zh":
                text = f"用户的同事{name}住在{city}，在{company}上班，每天骑车通勤。"
                query = [f"{name}住在哪里？", f"谁住在{city}？", f"谁在{company}上班？"][group]
            else:
                en = {k: EN.get(k, k) for k in (name, city, company)}
                names = {"孙悦": "Sun Yue", "华润": "CR Group", "马超": "Ma Chao", "顺丰": "SF",
                         "林峰": "Lin Feng", "宁波": "Ningbo"}  # fmt: skip
                n, c, o = (names.get(k, en[k]) for k in (name, city, company))
                text = f"The user's colleague {n} lives in {c}, works at {o}, cycles to work."
                query = [f"Where does {n} live?", f"Who lives in {c}?", f"Who works at {o}?"][group]
            rows.append((f"{language}-{group}-{i}", text, query))
    return rows


async def measure(store: Driver, language: str) -> tuple[float, float]:
    """(share of queries whose target has a lexical contribution > 0, R@1)."""
    ns = ("cjk", language)
    rows = corpus(language)
    for key, text, _ in rows:
        await store("put", ns, key, {"content": text})
    fired = first = 0
    for key, _, query in rows:
        items = await store("search", ns, query=query, limit=5, explain=True)
        assert items and all(isinstance(item, ExplainedSearchItem) for item in items)
        target = [item for item in items if item.key == key]
        fired += bool(target) and target[0].explanation.lexical > 0
        first += items[0].key == key
    return fired / len(rows), first / len(rows)


async def test_thirty_near_identical_chinese_memories_are_told_apart(
    ours: Driver, record_property: pytest.RecordProperty
) -> None:
    zh_fired, zh_r1 = await measure(ours, "zh")
    en_fired, en_r1 = await measure(ours, "en")
    record_property("cjk_lexical", {"zh": (zh_fired, zh_r1), "en": (en_fired, en_r1)})
    print(f"zh: lexical fired {zh_fired:.0%}, R@1 {zh_r1:.0%}; en: {en_fired:.0%}, {en_r1:.0%}")
    assert zh_fired == 1.0 and zh_r1 == 1.0
    assert en_fired == 1.0 and en_r1 == 1.0


async def test_japanese_korean_and_mixed_text_match_their_words(ours: Driver) -> None:
    ns = ("cjk", "mixed")
    memories = {
        "ja": "ユーザーは東京の渋谷に住んでいて、毎朝コーヒーを飲む。",
        "ko": "사용자는 서울 강남구에 살고 삼성전자에서 일한다.",
        "mixed": "用户用Python写爬虫，项目代号叫青龙，订单号2024110512345。",
        "en": "The user writes crawlers in Python and reads Dune at night.",
    }
    for key, text in memories.items():
        await ours("put", ns, key, {"content": text})
    for query, key in [
        ("渋谷", "ja"),
        ("コーヒー", "ja"),
        ("강남구", "ko"),
        ("삼성전자", "ko"),
        ("青龙", "mixed"),
        ("项目代号", "mixed"),
        ("2024110512345", "mixed"),
        ("Dune", "en"),
    ]:
        items = await ours("search", ns, query=query, limit=4, explain=True)
        lexical = {item.key for item in items if item.explanation.lexical > 0}
        assert lexical == {key}, (query, lexical)  # (the fake embedder knows no CJK words)
    both = await ours("search", ns, query="Python", limit=4, explain=True)
    assert {item.key for item in both if item.explanation.lexical > 0} == {"mixed", "en"}


async def test_setup_rederives_the_lexical_index_of_stored_chinese_rows(
    postgres_dsn: str,
) -> None:
    async with open_store(postgres_dsn, "sync") as store:
        store.put(("u",), "home", {"content": "用户住在杭州西湖区。"})
        store.put(("u",), "lang", {"content": "The user codes in Python."})
    version = [step.__name__ for step in MIGRATIONS].index("_cjk_lexical")
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:  # the store before CJK bigrams
        conn.execute("DELETE FROM lgm_store_migrations WHERE v = %s", (version,))
        conn.execute(  # (the statistics triggers follow the old index)
            "UPDATE lgm_memory_items SET tsv = to_tsvector('english', text), "
            "doc_len = length(to_tsvector('english', text))"
        )
        conn.execute("DROP FUNCTION lgm_lexical_vector(regconfig, text)")
        conn.execute("DROP FUNCTION lgm_lexical_text(text)")
    async with open_store(postgres_dsn, "sync") as store:
        assert store.setup_report is not None and store.setup_report.applied == (version,)
        items = store.search(("u",), query="西湖", explain=True)
        assert items[0].key == "home" and items[0].explanation.lexical > 0
        items = store.search(("u",), query="Python", explain=True)
        assert items[0].key == "lang" and items[0].explanation.lexical > 0
    kept, recounted = namespace_statistics(postgres_dsn)  # BM25 statistics stay exact
    assert kept == recounted
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        lexemes = conn.execute(
            "SELECT u.lexeme FROM lgm_memory_items i, unnest(i.tsv) u"
        ).fetchall()
        assert ("西湖",) in lexemes


CJK_TEXT = st.text(
    st.one_of(  # letters (unassigned code points and marks are no word in any parser)
        st.characters(min_codepoint=0x4E00, max_codepoint=0x9FFF, categories=["Lo"]),
        st.characters(min_codepoint=0x3040, max_codepoint=0x30FF, categories=["Lo", "Lm"]),
        st.characters(min_codepoint=0xAC00, max_codepoint=0xD7AF, categories=["Lo"]),
        st.characters(min_codepoint=0x20000, max_codepoint=0x2A6DF, categories=["Lo"]),
    ),
    min_size=2,
    max_size=40,
)


@pytest.fixture
def lexical_db(postgres_dsn: str) -> Iterator[psycopg.Connection[tuple[object, ...]]]:
    """A connection to a fresh database the store has been set up in."""
    with PostgresMemoryStore.from_conn_string(postgres_dsn, index=index_config()) as store:
        store.setup()
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        yield conn


@settings(
    max_examples=thorough(200),
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],  # pure SQL functions
)
@given(data=st.data(), text=CJK_TEXT, prefix=st.text(max_size=12), suffix=st.text(max_size=12))
def test_every_cjk_substring_of_two_or_more_characters_matches_its_text(
    lexical_db: psycopg.Connection[tuple[object, ...]],
    data: st.DataObject,
    text: str,
    prefix: str,
    suffix: str,
) -> None:
    start = data.draw(st.integers(0, len(text) - 2))
    end = data.draw(st.integers(start + 2, len(text)))
    doc = (prefix + text + suffix).replace("\x00", "")
    row = lexical_db.execute(
        "SELECT tsvector_to_array(lgm_lexical_vector('english', %(q)s)) "
        "<@ tsvector_to_array(lgm_lexical_vector('english', %(d)s)), "
        "lgm_lexical_vector('english', %(d)s) @@ "
        "array_to_string(array(SELECT quote_literal(x) FROM "
        "unnest(tsvector_to_array(lgm_lexical_vector('english', %(q)s))) x), ' & ')"
        "::tsquery",
        {"q": text[start:end], "d": doc},
    ).fetchone()
    assert row == (True, True), (text[start:end], doc)


def test_the_largest_indexed_cjk_text_is_stored_and_found(postgres_dsn: str) -> None:
    """Bigrams double the lexeme bytes of a CJK text: the largest indexed text still fits a
    ``tsvector`` (its lexemes at most 1 MiB) and is found by any two of its characters."""
    import random

    from langgraph_recall.store._bounds import MAX_INDEXED_TEXT_BYTES

    rng = random.Random(7)
    text = "".join(chr(rng.randint(0x4E00, 0x9FFF)) for _ in range(MAX_INDEXED_TEXT_BYTES // 3 - 8))
    with PostgresMemoryStore.from_conn_string(
        postgres_dsn, index=index_config(), max_value_bytes=2 * MAX_INDEXED_TEXT_BYTES
    ) as store:
        store.setup()
        store.put(("big",), "k", {"content": text})
        store.put(("big",), "other", {"content": "用户住在杭州。"})
        items = store.search(("big",), query=text[50_000:50_002], explain=True)
        assert items[0].key == "k" and items[0].explanation.lexical > 0


NOT_CJK = st.text(
    st.one_of(  # every script around the CJK blocks (Hangul Jamo starts at U+1100)
        st.characters(
            blacklist_characters="\x00", blacklist_categories=["Cs"], max_codepoint=0x10FF
        ),
        st.characters(min_codepoint=0x1200, max_codepoint=0x2FFF),
    ),
    max_size=60,
)


@settings(
    max_examples=thorough(200),
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],  # pure SQL functions
)
@given(text=NOT_CJK, config=st.sampled_from(["english", "simple", "german"]))
def test_text_without_cjk_characters_is_indexed_as_before(
    lexical_db: psycopg.Connection[tuple[object, ...]], text: str, config: str
) -> None:
    row = lexical_db.execute(
        "SELECT lgm_lexical_vector(%(c)s::regconfig, %(t)s) = to_tsvector(%(c)s::regconfig, %(t)s)",
        {"c": config, "t": text},
    ).fetchone()
    assert row == (True,), text
