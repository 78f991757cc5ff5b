"""Word lists the detectors consult (pure data; lower-case; no I/O).

* :data:`PHONE_STRONG` / :data:`PHONE_WEAK` / :data:`NOT_PHONE` — words near a number that
  say it is a phone number ("call", "手机") or something else ("order", "invoice", "#").
* :data:`CJK_TLDS` — top-level domains in CJK scripts (where an IDN address ends when
  text follows it without a space: "例子.中国です").
* :data:`SECRET_VALUE_STOPWORDS` — words that follow "the password is" without being a
  password ("wrong", "the", "什么").
* :data:`PHRASE_BREAKS` — words that end a password of several words ("and", "for", "is").
* :data:`COMMON_WORDS` — capitalised words that are not a person's name in "I'm X" /
  "This is X" / "X here" ("Tired", "Not", "Back", "American", "Python").
"""

from __future__ import annotations

__all__ = [
    "CARD_CONTEXT",
    "CJK_TLDS",
    "COMMON_WORDS",
    "CURRENCY_AFTER",
    "CURRENCY_BEFORE",
    "ID_CONTEXT",
    "LENGTH_WORDS",
    "NOT_PHONE",
    "PHONE_STRONG",
    "PHONE_WEAK",
    "PHRASE_BREAKS",
    "SECRET_VALUE_STOPWORDS",
]


def _words(text: str) -> frozenset[str]:
    return frozenset(word.replace("_", " ") for word in text.split())


PHONE_STRONG = _words(
    # en
    "phone phones telephone tel ph cell cellphone mobile mob call calling ring text "
    "sms whatsapp signal viber telegram wechat fax landline hotline dial extension ext "
    # de / fr / es / it / pt / nl / ru
    "telefon telefonnummer handy handynummer mobil mobilnummer rufnummer festnetz anrufen "
    "téléphone telephone tél portable appeler appelle appelez joindre "
    "teléfono telefono móvil movil celular llámame llamame llamar "
    "cellulare chiamami telefone ligue ligar telefoonnummer bel "
    "телефон тел мобильный звоните "
    # zh / ja / ko (matched without word boundaries)
    "电话 電話 手机 手機 手机号 致电 打给 微信 携帯 ケータイ 전화 휴대폰 핸드폰"
)
PHONE_WEAK = _words(
    "number num contact reach nummer numéro numero número 号码 號碼 番号 번호 номер"
)
NOT_PHONE = _words(
    # orders, references, accounts, identifiers of things
    "order orders invoice receipt ticket tracking shipment parcel package booking "
    "reservation confirmation reference ref case claim account acct customer member "
    "membership policy contract serial model part sku item product article isbn issn doi "
    "flight train bus room gate seat page pages chapter row zip postcode postal "
    "version ver build release rev revision firmware kernel python node java ios android "
    "macos windows ubuntu chrome no. nr. nº № # id "
    # de / fr / es / zh / ja
    "bestellung bestellnummer rechnung kundennummer sendung auftrag artikel "
    "commande facture référence dossier pedido factura referencia "
    "订单 訂單 单号 單號 发票 快递 注文 伝票"
)
CARD_CONTEXT = _words(
    "card cards visa mastercard amex discover jcb unionpay maestro credit debit cc "
    "karte kreditkarte carte tarjeta cartão 卡 卡号 信用卡 银行卡 カード 카드"
)
ID_CONTEXT = _words(
    "ssn social_security soc.sec. sozialversicherungsnummer aadhaar aadhar uidai आधार "
    "id-card national_id ausweis dni nie nif 身份证 身份證"
)
CJK_TLDS = _words(
    "中国 中國 中文网 公司 网络 網絡 在线 我爱你 香港 台湾 台灣 澳门 澳門 新加坡 "
    "手机 商城 商店 网站 网店 集团 游戏 企业 娱乐 信息 移动 时尚 微博 "
    "コム みんな 한국 닷컴 닷넷"
)
CURRENCY_BEFORE = frozenset("$€£¥₩₹₽¢₺₪฿₫")
CURRENCY_AFTER = _words(
    "$ € £ ¥ usd eur gbp cny rmb jpy chf inr krw rub dollar dollars euro euros pound pounds "
    "yuan yen won rupees rupee franc francs 元 円 块 % percent km kg mi miles meters metres "
    "people users times days years points votes views downloads steps calories units items "
    "pieces copies pages words rows records"
)
LENGTH_WORDS = _words(
    "characters chars letters digits numbers symbols words long zeichen stellen caractères "
    "chiffres caracteres dígitos 位 个字符"
)
PHRASE_BREAKS = _words(
    # what ends a password of several words ("… is correct horse battery staple, so …")
    "a an the and or but nor so because since although though while whereas unless until if "
    "when where which who whom whose that than then per via into onto over under after before "
    "during without within across between against through upon toward towards except "
    "including is are was were be been am has have had do does did will would can could "
    "should shall may might must not no my your his her our their its this these those it "
    "i me you he she we they him them us too very also still now just only always never"
)
SECRET_VALUE_STOPWORDS = _words(
    # en
    "a an the my your his her our their its this that these those it not too very so "
    "wrong right correct incorrect weak strong secure insecure safe unsafe long short "
    "expired expiring changed reset required needed optional saved stored written same "
    "different invalid valid empty blank missing hidden sensitive new old simple easy hard "
    "in on at for of to from with by as about like than then there here what which who out "
    "where when why how unknown forgotten lost ready set case-sensitive encrypted hashed "
    "protected private public secret confidential mine yours ours theirs also still now "
    "just only always never every each all any some no none null undefined please "
    "i me you he she we they him them us case "
    "being been be going gonna working broken locked unlocked enabled disabled ok okay "
    "fine good bad great important useless redacted hidden removed censored masked omitted "
    "xxx xxxx tbd n/a crucial essential critical present absent found available unavailable "
    "active inactive used"
    # de / fr / es / it / pt
    " falsch richtig sicher unsicher geändert abgelaufen zu nicht sehr neu alt das der die "
    "ein eine mein dein sein ihr unser geheim vertraulich gleich anders leer "
    "faux correct incorrect sûr changé expiré trop pas très nouveau ancien le la les un une "
    "mon ton son notre secret confidentiel même vide "
    "incorrecta correcta segura cambiada caducada muy no nueva vieja el la los un una mi tu "
    "su secreta igual vacía "
    "sbagliata giusta errata nuova vecchia errada certa nova"
    # zh / ja
    " 什么 什麼 多少 啥 哪个 错误 错的 对的 正确 过期 忘了 忘记 太 不 很 一样 相同 空的 "
    "何 なん 間違い 正しい 変更"
)
COMMON_WORDS = _words(
    # function words and pronouns
    "a an the and or but so not no yes yeah nope just only also too very really quite "
    "still even ever never always sometimes often here there this that these those it its "
    "i i'm i've i'd i'll me my mine you you're your we we're our they them he she him her his "
    "it's that's there's let's who what which where when "
    "why how all any some none every each both either neither more most less least much "
    "many few lot lots one two three four five six seven eight nine ten first last next "
    "in on at to of for from with without by about into onto over under up down out off "
    "away back home again now then soon later today tonight tomorrow yesterday "
    # states, feelings, adjectives people put after "I'm"
    "ok okay fine good great well bad better worse best worst sure unsure certain glad "
    "happy sad mad angry upset tired sleepy exhausted bored busy free ready done finished "
    "sorry afraid scared nervous anxious excited thrilled grateful thankful lucky sick ill "
    "hungry thirsty full cold hot warm late early new old young alive dead lost confused "
    "curious interested serious honest right wrong correct single married divorced engaged "
    "pregnant retired unemployed employed available unavailable online offline alone "
    "fortunate blessed proud ashamed embarrassed hopeful worried stressed overwhelmed "
    "relieved calm comfortable uncomfortable cool fun funny stupid smart dumb crazy weird "
    "normal fluent bilingual allergic vegan vegetarian pescatarian gluten-free lactose "
    "intolerant diabetic based located living working staying moving leaving going coming "
    "doing trying getting looking thinking feeling hoping wondering planning learning "
    "studying writing reading waiting starting running heading calling asking using having "
    "being making taking playing watching listening sitting standing travelling traveling "
    "called named from like kind sort pretty quite totally absolutely definitely probably "
    "maybe perhaps possibly hardly barely almost nearly about around "
    "great amazing awesome awful terrible wonderful fantastic important interesting "
    "boring nice lovely beautiful ugly big small huge tiny long short easy hard difficult "
    "simple impossible possible true false real fake perfect strange odd different same "
    "other another such own sure enough able unable welcome "
    # words that start a sentence but are no name ("This is Fine", "Click here")
    "click tap press call check see look sign log read reply send note please thanks "
    "thank hello hi hey dear everyone everybody anyone anybody someone somebody nobody "
    "noone all guys folks team me myself yourself "
    # demonyms, languages, religions, groups
    "american british english scottish welsh irish french german dutch belgian swiss "
    "austrian italian spanish portuguese brazilian mexican canadian australian indian "
    "chinese japanese korean vietnamese thai filipino indonesian malaysian russian "
    "ukrainian polish czech slovak hungarian romanian bulgarian greek turkish israeli "
    "arab arabic persian iranian egyptian nigerian kenyan african european asian latino "
    "latina hispanic swedish norwegian danish finnish icelandic christian catholic "
    "protestant muslim jewish hindu buddhist atheist agnostic gay lesbian bi straight trans "
    "male female human adult teen teenager parent mom mum dad mother father "
    # products and tech words that follow "This is"
    "python java javascript typescript rust go golang linux windows mac macos ios android "
    "google apple microsoft amazon chatgpt gpt openai langgraph"
)
