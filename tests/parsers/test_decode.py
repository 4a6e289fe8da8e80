"""Decoding: UTF-8 first, legacy encodings detected with charset-normalizer, clear failures.

Each legacy paragraph is real prose of a few hundred characters, written in an encoding
that text in its language was commonly saved in, and must decode to exactly the same text.
"""
import codecs
import random
import sysconfig
from pathlib import Path

import pytest

from beam_chunking.errors import DecodeError
from beam_chunking.parsers import parse
from beam_chunking.parsers.decode import (LEGACY_ENCODINGS, MULTI_BYTE_ENCODINGS, RARE_ENCODINGS, decode,
                                          decode_text, detect, detect_encoding)
from beam_chunking.parsers.legacy import MAKE_UP_SEQUENCE
from beam_chunking.types import Document

PARAGRAPHS = {
    "zh_hans": (
        '中文信息处理是人工智能的一个重要分支。许多早期的中文文本文件使用国标编码保存，例'
        '如GB2312、GBK和GB18030。如果程序把这些文件当作UTF-8读取，就'
        '会出现乱码或者直接报错。为了正确地处理这些文件，我们需要先检测文件的编码，然后再'
        '把字节解码成文字。本段文字包含常用汉字、标点符号（逗号、句号、顿号、括号）以及数'
        '字2024，用来测试编码检测是否能够准确地识别简体中文。图书馆里保存着大量的旧文'
        '档，它们记录了过去几十年的历史、科学和文化，值得我们认真保护和研究。'
    ),
    "zh_hant": (
        '繁體中文的文件經常使用大五碼編碼保存，這種編碼在臺灣和香港曾經非常普遍。如果程式'
        '把這些檔案當作UTF-8讀取，就會出現亂碼或者直接發生錯誤。為了正確地處理這些檔'
        '案，我們需要先偵測檔案的編碼，然後再把位元組解碼成文字。這段文字包含常用漢字、標'
        '點符號（逗號、句號、頓號、括號）以及數字2024，用來測試編碼偵測是否能夠準確地'
        '辨識繁體中文。圖書館裡保存著大量的舊文件，它們記錄了過去幾十年的歷史、科學與文化'
        '，值得我們認真保護和研究。'
    ),
    "ja": (
        '日本語のテキストファイルは、長い間シフトJISやEUC-JPといった文字コードで'
        '保存されてきました。これらのファイルをUTF-8として読み込むと、文字化けが起き'
        'たり、エラーになったりします。正しく処理するためには、まずファイルの文字コードを'
        '判定し、それからバイト列を文字に変換する必要があります。この段落には、ひらがな、'
        'カタカナ、漢字、句読点、そして数字の二〇二四が含まれています。図書館には古い文書'
        'がたくさん保管されており、歴史や科学や文化の記録として大切にされています。今日は'
        'とても良い天気なので、公園を散歩しながら桜の花を眺めるつもりです。'
    ),
    "ko": (
        '한국어 텍스트 파일은 오랫동안 EUC-KR이나 CP949 같은 문자 인코딩으로 저장되어 왔습니다. 이런 파일을 UTF-8로 읽으면 글자가 깨지거나 '
        '오류가 발생합니다. 올바르게 처리하려면 먼저 파일의 인코딩을 감지한 다음 바이트를 문자로 변환해야 합니다. 이 문단에는 한글, 문장 부호, 그리고 숫자 '
        '2024가 들어 있습니다. 도서관에는 오래된 문서가 많이 보관되어 있으며, 역사와 과학과 문화의 기록으로 소중히 여겨집니다. 오늘은 날씨가 아주 좋아서 '
        '공원을 산책하면서 꽃을 구경할 생각입니다.'
    ),
    "ru": (
        'Русские текстовые файлы долгое время хранились в кодировках KOI8-R и Windows-1251. '
        'Если программа читает такие файлы как UTF-8, она выдаёт ошибку или показывает '
        'нечитаемые символы. Чтобы правильно обработать эти файлы, нужно сначала определить '
        'их кодировку, а затем превратить байты в текст. В этом абзаце есть строчные и '
        'прописные буквы, знаки препинания, кавычки и число 2024. В библиотеках хранится '
        'множество старых документов, которые рассказывают об истории, науке и культуре '
        'прошлых десятилетий.'
    ),
    "uk": (
        'Українські текстові файли довгий час зберігалися в кодуванні KOI8-U або '
        'Windows-1251. Якщо програма читає такі файли як UTF-8, вона видає помилку або '
        'показує незрозумілі символи. Щоб правильно їх обробити, спершу треба визначити '
        'кодування, а потім перетворити байти на текст. У бібліотеці зберігається багато '
        'старих документів про історію, науку та культуру їхньої країни.'
    ),
    "fr": (
        'Les fichiers texte écrits sous Windows utilisent souvent l’encodage Windows-1252. « '
        'Ce n’est pas de l’UTF-8 », répondit l’archiviste, qui connaissait bien le problème. '
        'Quand un programme lit ces fichiers comme de l’UTF-8, il échoue ou affiche des '
        'caractères illisibles. Pour les traiter correctement, il faut d’abord détecter '
        'l’encodage, puis décoder les octets — c’est-à-dire les transformer en texte. Ce '
        'paragraphe contient des accents (é, è, ê, à, ç, ô, û), des guillemets, un tiret '
        'cadratin et le symbole de l’euro : le café coûte 2,50 €.'
    ),
    "de": (
        'Deutsche Textdateien aus älteren Windows-Programmen sind häufig in Windows-1252 oder '
        'ISO-8859-1 gespeichert. Wenn ein Programm solche Dateien als UTF-8 liest, bricht es '
        'ab oder zeigt unleserliche Zeichen. Um sie richtig zu verarbeiten, muss man zuerst '
        'die Kodierung erkennen und danach die Bytes in Text umwandeln. Dieser Absatz enthält '
        'Umlaute wie ä, ö und ü, das scharfe ß und die Zahl 2024. In der Bibliothek liegen '
        'viele alte Schriftstücke über Geschichte, Wissenschaft und Kultur, die für künftige '
        'Generationen sorgfältig aufbewahrt werden müssen.'
    ),
    "es": (
        'Los archivos de texto antiguos en español suelen estar guardados en ISO-8859-1, '
        'también llamado Latin-1. Cuando un programa los lee como UTF-8, falla o muestra '
        'caracteres ilegibles. Para procesarlos correctamente, primero hay que detectar la '
        'codificación y después convertir los bytes en texto. Este párrafo contiene tildes '
        '(á, é, í, ó, ú), la letra ñ, signos de interrogación ¿como este? y de exclamación '
        '¡como este!, además del número 2024. En la biblioteca se conservan muchos documentos '
        'viejos sobre la historia, la ciencia y la cultura de nuestro país.'
    ),
    "pl": (
        'Polskie pliki tekstowe zapisane w starszych programach często używają kodowania '
        'Windows-1250. Gdy program czyta je jako UTF-8, zgłasza błąd albo pokazuje '
        'nieczytelne znaki. Aby poprawnie je przetworzyć, trzeba najpierw rozpoznać '
        'kodowanie, a potem zamienić bajty na tekst. Ten akapit zawiera polskie litery: ą, ć, '
        'ę, ł, ń, ó, ś, ź i ż, a także liczbę 2024. W bibliotece przechowuje się wiele '
        'starych dokumentów o historii, nauce i kulturze, które trzeba starannie chronić dla '
        'przyszłych pokoleń.'
    ),
    "el": (
        'Τα ελληνικά αρχεία κειμένου από παλαιότερα προγράμματα είναι συχνά αποθηκευμένα σε '
        'Windows-1253. Όταν ένα πρόγραμμα τα διαβάζει ως UTF-8, εμφανίζει σφάλμα ή '
        'ακατανόητους χαρακτήρες. Για να τα επεξεργαστούμε σωστά, πρέπει πρώτα να '
        'αναγνωρίσουμε την κωδικοποίηση και μετά να μετατρέψουμε τα bytes σε κείμενο. Στη '
        'βιβλιοθήκη φυλάσσονται πολλά παλιά έγγραφα για την ιστορία, την επιστήμη και τον '
        'πολιτισμό.'
    ),
    "tr": (
        'Türkçe metin dosyaları eski programlarda genellikle Windows-1254 kodlamasıyla '
        'saklanırdı. Bir program bu dosyaları UTF-8 olarak okuduğunda hata verir ya da '
        'okunamayan karakterler gösterir. Onları doğru işlemek için önce kodlamayı tespit '
        'etmek, sonra baytları metne dönüştürmek gerekir. Bu paragrafta ğ, ü, ş, ı, ö, ç gibi '
        'harfler ve 2024 sayısı bulunuyor. Kütüphanede tarih, bilim ve kültür hakkında pek '
        'çok eski belge özenle saklanmaktadır.'
    ),
    "he": (
        'קבצי טקסט בעברית נשמרו לעתים קרובות בקידוד Windows-1255 בתוכנות ישנות. כאשר תוכנה '
        'קוראת קבצים כאלה כ-UTF-8, היא מציגה שגיאה או תווים שאי אפשר לקרוא. כדי לעבד אותם '
        'נכון צריך קודם לזהות את הקידוד ואחר כך להמיר את הבתים לטקסט. בספרייה שמורים מסמכים '
        'ישנים רבים על ההיסטוריה, המדע והתרבות של העם.'
    ),
    "ar": (
        'كانت ملفات النصوص العربية تحفظ غالبا بترميز ويندوز 1256 في البرامج القديمة. عندما '
        'يقرأ برنامج هذه الملفات على أنها UTF-8 فإنه يعرض خطأ أو حروفا غير مفهومة. ولمعالجتها '
        'بشكل صحيح يجب أولا اكتشاف الترميز ثم تحويل البايتات إلى نص. وتحتفظ المكتبة بالكثير '
        'من الوثائق القديمة عن التاريخ والعلوم والثقافة.'
    ),
}


@pytest.mark.parametrize("language,encoding", [
    ("zh_hans", "gbk"), ("zh_hans", "gb2312"), ("zh_hans", "gb18030"), ("zh_hant", "big5"),
    ("ja", "shift_jis"), ("ja", "euc_jp"), ("ko", "euc_kr"),
    ("ru", "koi8_r"), ("ru", "cp1251"), ("uk", "koi8_u"), ("uk", "cp1251"),
    ("fr", "cp1252"), ("de", "cp1252"), ("de", "latin_1"), ("es", "latin_1"),
    ("pl", "cp1250"), ("el", "cp1253"), ("tr", "cp1254"), ("he", "cp1255"), ("ar", "cp1256"),
])
def test_legacy_paragraph_decodes_to_the_exact_text(language, encoding):
    text = PARAGRAPHS[language]
    data = text.encode(encoding)
    with pytest.raises(UnicodeDecodeError):
        data.decode("utf-8")  # the case under test: not UTF-8
    decoded = decode(data, uri=f"{language}.txt")
    assert decoded.text == text
    assert data.decode(decoded.encoding) == text  # the recorded codec reproduces the text
    assert decoded.confidence >= 0.9 and decoded.replacements == 0


def test_encoding_names_are_the_codecs_that_decode_like_browsers():
    assert decode(PARAGRAPHS["zh_hans"].encode("gbk")).encoding == "gb18030"
    assert decode(PARAGRAPHS["ja"].encode("shift_jis")).encoding == "cp932"
    assert decode(PARAGRAPHS["ko"].encode("euc_kr")).encoding == "cp949"
    assert decode(PARAGRAPHS["ru"].encode("koi8_r")).encoding == "koi8-r"
    assert decode(PARAGRAPHS["de"].encode("latin_1")).encoding == "cp1252"


def test_utf8_and_byte_order_marks_are_certain():
    text = PARAGRAPHS["ja"]
    assert decode(text.encode("utf-8")) == (text, "utf-8", 1.0, 0)
    assert decode(b"plain ASCII") == ("plain ASCII", "utf-8", 1.0, 0)
    assert decode(b"") == ("", "utf-8", 1.0, 0)
    assert decode(codecs.BOM_UTF8 + text.encode("utf-8")) == (text, "utf-8", 1.0, 0)
    utf16 = codecs.BOM_UTF16_LE + text.encode("utf-16-le")
    assert decode(utf16) == (text, "utf-16", 1.0, 0) and utf16.decode("utf-16") == text


def test_random_bytes_fail_in_one_line_naming_the_offset():
    rng = random.Random(12)
    data = bytes(rng.randrange(1, 256) for _ in range(4096))  # no NUL: typed as text, not binary
    assert detect_encoding(data) is None
    with pytest.raises(DecodeError) as caught:
        decode(data, uri="noise.txt")
    message = str(caught.value)
    assert message.startswith("noise.txt: not UTF-8 (byte offset ") and "\n" not in message
    assert "not text in any legacy encoding" in message and "--decode-errors replace" in message
    replaced = decode(data, errors="replace")
    assert replaced.encoding == "utf-8" and replaced.confidence == 0.0
    assert replaced.replacements == replaced.text.count("\ufffd") > 100


def test_damaged_utf8_is_not_taken_for_a_legacy_encoding():
    text = "Größe, naïve café, déjà vu — “quoted”. " * 10
    data = text.encode("utf-8") + b"\xff" + "Schluß.".encode("utf-8")
    with pytest.raises(DecodeError, match=rf"invalid UTF-8 at byte offset {len(text.encode())} .*otherwise UTF-8"):
        decode(data)
    replaced = decode(data, errors="replace")
    assert replaced.text == text + "\ufffd" + "Schluß." and replaced.replacements == 1
    cut = "日本語のテキスト".encode("utf-8")[:-1]  # the last character cut short
    with pytest.raises(DecodeError, match="otherwise UTF-8"):
        decode(cut)


def test_short_ambiguous_input_is_decoded_with_low_confidence():
    # One accented byte: windows-1252 (the most used legacy encoding) reads "café", but
    # several other code pages read it just as well, so the confidence says so.
    decoded = decode(b"caf\xe9")
    assert (decoded.text, decoded.encoding) == ("café", "cp1252") and decoded.confidence < 0.5
    assert decode(b"caf\xe9") == decoded  # deterministic
    sentence = "Résumé of the naïve café owner".encode("cp1252")
    assert decode(sentence).text == "Résumé of the naïve café owner" and decode(sentence).confidence < 0.5
    # Smart quotes and the euro sign, common non-UTF-8 bytes in English text.
    quotes = "He said “hello” — and paid 5 €, it’s fine…".encode("cp1252")
    assert decode(quotes).text == "He said “hello” — and paid 5 €, it’s fine…"


def test_lone_accented_bytes_in_english_text_are_not_read_as_cjk():
    # Old changelogs: pages of English, a contributor's name in Latin-1. A CJK reading pairs
    # each lone byte with the ASCII letter after it ("K\xe4mpf" as "K舂pf"); on this text,
    # without the rule, detection picked windows-31j.
    words = ("the make program now supports a new option for parallel builds when the makefile is read "
             "twice and variables are expanded in order of their definition with targets rules and recipes "
             "that change").split()
    rng, lines = random.Random(1), []
    while sum(len(line) + 1 for line in lines) < 30_000:
        lines.append(" ".join(rng.choice(words) for _ in range(rng.randint(5, 12))).capitalize() + ".")
    lines.insert(len(lines) // 2, "* The VMS port was done by Klaus Kämpf <kkaempf@example.org>.")
    for text in ("\n".join(lines),
                 "Changes in 23.6\n - Fixed the build (thanks to Marc Léger)\n - Added tests\n"):
        decoded = decode(text.encode("latin_1"))
        assert (decoded.text, decoded.encoding) == (text, "cp1252")
    # A CJK paragraph keeps its reading: its bytes come in pairs. So does katakana in
    # Shift-JIS, whose trail bytes are often ASCII but whose lead byte is no Latin letter.
    assert decode(PARAGRAPHS["ja"].encode("shift_jis")).text == PARAGRAPHS["ja"]
    katakana = "テスト,100\nコース,110\nメール,120\nサーバー,130\nデータ,140\n" * 3
    assert decode(katakana.encode("cp932")).text == katakana
    assert decode("許功蓋".encode("big5")).text == "許功蓋"  # each trail byte is "\"
    assert MULTI_BYTE_ENCODINGS <= {*LEGACY_ENCODINGS, *RARE_ENCODINGS, "euc_kr"}  # kept by hand beside the lists


@pytest.mark.parametrize("language,encoding", [("ja", "iso2022_jp"), ("ko", "iso2022_kr"),
                                               ("ja_halfwidth", "iso2022_jp_ext")])
def test_escape_sequence_encodings_are_not_taken_for_ascii(language, encoding):
    # Japanese e-mail's 7-bit encoding: ASCII bytes, valid UTF-8, that would keep their escapes.
    text = "ﾃｽﾄ 日本語のテキストです。" if language == "ja_halfwidth" else PARAGRAPHS[language]
    data = text.encode(encoding)
    assert data.isascii()
    assert decode(data) == (text, encoding, 1.0, 0)
    assert parse(Document("d", "a.html", f"<p>{text}</p>".encode(encoding), "text/html")).text == text
    # An escape character alone is no designation: ASCII stays UTF-8.
    assert decode(b"\x1b[1mbold\x1b[0m") == ("\x1b[1mbold\x1b[0m", "utf-8", 1.0, 0)
    # Sniffed as text, not binary: ISO-2022-KR shifts in and out of Korean (SO, SI) on every word.
    from beam_chunking.parsers.detect import detect_content_type

    assert detect_content_type("a.txt", ((text + "\n") * 40).encode(encoding)) == "text/plain"


def test_byte_order_mark_with_invalid_body_is_not_guessed():
    with pytest.raises(DecodeError, match=r"invalid UTF-16 at byte offset 2 .*, the encoding its byte-order mark"):
        decode(codecs.BOM_UTF16_LE + b"\xfd")
    with pytest.raises(DecodeError, match="invalid UTF-8 at byte offset 6 .*the encoding its byte-order mark names"):
        decode(codecs.BOM_UTF8 + b"caf\xe9")


def test_decode_text_stays_utf_only_for_parsers_that_know_the_charset():
    with pytest.raises(DecodeError, match="byte offset 3"):
        decode_text("café".encode("cp1252"))


@pytest.mark.parametrize("name,content_type", [
    ("notes.txt", "text/plain"), ("notes.md", "text/markdown"), ("tool.py", "text/x-python"),
    ("prices.csv", "text/csv"),
])
def test_text_parsers_record_the_encoding(name, content_type):
    text = "Город,цена\n" + PARAGRAPHS["ru"][:120] + ",3\n"
    doc = parse(Document("d", name, text.encode("cp1251"), content_type))
    assert (doc.metadata["encoding"], doc.metadata["encoding_confidence"]) == ("cp1251", 1.0)
    assert PARAGRAPHS["ru"][:60] in doc.text
    utf8 = parse(Document("d", name, text.encode("utf-8"), content_type))
    assert (utf8.metadata["encoding"], utf8.metadata["encoding_confidence"]) == ("utf-8", 1.0)
    assert "decode_replacements" not in utf8.metadata


# Python's own test data for its CJK codecs: each X.txt has an X-utf8.txt twin.
CJK_TEST_DATA = Path(sysconfig.get_paths()["stdlib"]) / "test" / "cjkencodings"
#: The one file too short to tell: 23 bytes of Hong Kong characters that windows-1256 also
#: reads (as Arabic and Latin letters) and GB18030 and Shift_JIS-2004 too (as rare hanzi).
CJK_AMBIGUOUS = {"big5hkscs"}


@pytest.mark.parametrize("name", ["big5", "big5hkscs", "cp949", "euc_jisx0213", "euc_jp", "euc_kr", "gb18030",
                                  "gb2312", "gbk", "hz", "iso2022_jp", "iso2022_kr", "johab", "shift_jis",
                                  "shift_jisx0213"])
def test_python_cjk_test_files_decode_exactly_or_fail_clearly(name):
    if not (CJK_TEST_DATA / f"{name}.txt").exists():
        pytest.skip(f"{CJK_TEST_DATA} is absent (a Python built without its test package)")
    data = (CJK_TEST_DATA / f"{name}.txt").read_bytes()
    expected = (CJK_TEST_DATA / f"{name}-utf8.txt").read_bytes().decode("utf-8")
    if name in CJK_AMBIGUOUS:
        with pytest.raises(DecodeError) as caught:
            decode(data, uri=f"{name}.txt")
        message = str(caught.value)
        assert "ambiguous" in message and name in message and "--decode-errors replace" in message
        assert "\n" not in message
    else:
        decoded = decode(data, uri=f"{name}.txt")
        assert decoded.text == expected
        assert data.decode(decoded.encoding) == expected


def jis_x_0213_paragraph() -> str:
    # Kanji that JIS X 0213 added (Shift_JIS-2004 F0 41..., EUC-JIS-2004 plane 2): windows-31j
    # reads F0 41 as a user-defined character, EUC-JP rejects them.
    return PARAGRAPHS["ja"].replace("図書館", "丂丏丒図書館").replace("文字コード", "文字コード（你）")


@pytest.mark.parametrize("text,encoding", [
    (jis_x_0213_paragraph(), "shift_jis_2004"), (jis_x_0213_paragraph(), "euc_jis_2004"),
    (PARAGRAPHS["ko"], "johab"),
    # A syllable outside KS X 1001's 2,350 (똠), which EUC-KR writes as a make-up sequence.
    (PARAGRAPHS["ko"].replace("오늘은", "똠방각하 오늘은"), "euc_kr"),
    ("佢哋話今日冇嘢做，我哋去咗飲茶。呢度嘅點心好好食，不過啲人好多，要排好耐隊。你食咗飯未呀？", "big5hkscs"),
])
def test_rarer_cjk_encodings_decode_in_the_encoding_that_has_every_character(text, encoding):
    data = text.encode(encoding)
    decoded = decode(data)
    assert decoded.text == text and data.decode(decoded.encoding) == text
    assert codecs.lookup(decoded.encoding).name == codecs.lookup(encoding).name


def test_make_up_sequences_are_composed_not_left_as_filler_jamo():
    text = PARAGRAPHS["ko"].replace("오늘은", "똠방각하 오늘은")
    data = text.encode("euc_kr")
    assert MAKE_UP_SEQUENCE.search(data) and "\u3164" in data.decode("cp949")  # what windows-949 makes of it
    assert "\u3164" not in decode(data).text
    # Without one, windows-949 (the superset browsers use) stays the reading of EUC-KR bytes.
    assert decode(PARAGRAPHS["ko"].encode("euc_kr")).encoding == "cp949"


def test_hz_is_decoded_and_ascii_holding_tildes_stays_ascii():
    text = "This line is ASCII.\n中文信息处理是人工智能的一个重要分支。\nBye.\n"
    data = text.encode("hz")
    assert data.isascii() and b"~{" in data
    assert decode(data) == (text, "hz", 0.9, 0)
    for ascii_text in (b"x = a~{abcd~}\n", b"cd ~{x}~} and ~/bin\n", b"sed 's/~{/x/'\n", b"~{ unclosed"):
        assert decode(ascii_text) == (ascii_text.decode(), "utf-8", 1.0, 0)


@pytest.mark.parametrize("language,encoding", [
    ("zh_hans", "gbk"), ("zh_hant", "big5"), ("zh_hant", "big5hkscs"), ("ja", "shift_jis"), ("ja", "euc_jp"),
    ("ja", "shift_jis_2004"), ("ja", "euc_jis_2004"), ("ko", "euc_kr"), ("ko", "johab"),
])
@pytest.mark.parametrize("length", [30, 40, 80, 160])
def test_cjk_text_is_never_decoded_as_the_wrong_text(language, encoding, length):
    # Slices of a paragraph: where another encoding reads the bytes as well, the decoder
    # names the candidates rather than guessing (it guessed wrong on some before: Big5 as
    # half-width katakana in windows-31j, Korean as Thai in windows-874).
    for offset in (0, 7, 37, 90, 124):
        text = PARAGRAPHS[language][offset:offset + length]
        try:
            decoded = decode(text.encode(encoding))
        except DecodeError as error:
            assert "ambiguous" in str(error)
        else:
            assert decoded.text == text


def test_ambiguous_bytes_fail_in_one_line_naming_the_candidates():
    data = "嘅咗喺".encode("big5hkscs")  # three Cantonese characters: too short to tell
    with pytest.raises(DecodeError) as caught:
        decode(data, uri="short.txt")
    message = str(caught.value)
    assert message.startswith("short.txt: not UTF-8 (byte offset 0: ") and "\n" not in message
    assert "ambiguous: it reads as different text in " in message and "big5hkscs" in message
    assert message.endswith("convert it to UTF-8 from the right one or run with --decode-errors replace "
                            "to keep it, bad bytes as U+FFFD")
    detected = detect(data)
    assert detected.encoding is None and "big5hkscs" in detected.candidates and detect_encoding(data) is None
    replaced = decode(data, errors="replace")
    assert (replaced.encoding, replaced.confidence) == ("utf-8", 0.0) and replaced.replacements > 0


def test_gb18030_is_no_candidate_for_bytes_it_reads_as_rare_characters():
    # GB18030 decodes these Shift-JIS bytes too, all as GBK extension characters.
    data = PARAGRAPHS["ja"].encode("shift_jis")
    assert data.decode("gb18030") != PARAGRAPHS["ja"]
    assert "gb18030" not in detect(data).candidates and decode(data).encoding == "cp932"


@pytest.mark.parametrize("encoding", ["utf-32", "utf-32-be", "utf-32-le"])
def test_utf32_with_a_byte_order_mark(encoding):
    text = PARAGRAPHS["ja"]
    data = text.encode(encoding)
    if not data.startswith((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)):
        data = (codecs.BOM_UTF32_BE if encoding.endswith("be") else codecs.BOM_UTF32_LE) + data
    assert decode(data) == (text, "utf-32", 1.0, 0)
    assert decode_text(data) == (text, 0)


def test_half_width_katakana_is_still_read_in_shift_jis():
    # The kana follow one another or stand before spaces and punctuation, not glued to ASCII letters.
    text = "ｶﾀｶﾅ ﾃﾞｽ。日本語のテキストです。ﾃｽﾄ ﾃﾞｰﾀ ｦ ﾖﾐｺﾐﾏｽ。\n" * 3
    assert decode(text.encode("cp932")) == (text, "cp932", 1.0, 0)
    big5 = PARAGRAPHS["zh_hant"][7:37].encode("big5")
    assert "ｸgｱ`" in big5.decode("cp932")  # what windows-31j makes of Big5, with no mojibake found in it
    assert decode(big5).text == PARAGRAPHS["zh_hant"][7:37]
