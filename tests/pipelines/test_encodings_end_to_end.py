"""End to end: legacy encodings decoded and recorded, content sniffed, types forced by pattern."""
import base64
import io
import os
from email.message import EmailMessage

import pyarrow.parquet as pq
import pytest

from beam_chunking.errors import ConfigError
from beam_chunking.pipelines.cli import EXIT_OK, EXIT_USAGE, main
from beam_chunking.pipelines.options import ChunkingOptions
from beam_chunking.pipelines.preview import preview_command
from beam_chunking.pipelines.run import spec_from_options
from beam_chunking.pipelines.spec import parse_spec
from beam_chunking.schema import decode_metadata

CHINESE = ("中文信息处理是人工智能的一个重要分支。许多早期的中文文本文件使用国标编码保存，例如GBK和GB18030。"
           "如果程序把这些文件当作UTF-8读取，就会出现乱码或者直接报错。为了正确地处理这些文件，我们需要先检测文件的编码，"
           "然后再把字节解码成文字。图书馆里保存着大量的旧文档，它们记录了过去几十年的历史、科学和文化。") * 3
JAPANESE = ("# 文字コード\n\n日本語のテキストファイルは、長い間シフトJISで保存されてきました。これらのファイルをUTF-8として"
            "読み込むと、文字化けが起きたり、エラーになったりします。正しく処理するためには、まずファイルの文字コードを判定し、"
            "それからバイト列を文字に変換する必要があります。\n")
FRENCH = ("Les fichiers texte écrits sous Windows utilisent souvent l’encodage Windows-1252. « Ce n’est pas de "
          "l’UTF-8 », répondit l’archiviste. Pour les traiter correctement, il faut d’abord détecter l’encodage, "
          "puis décoder les octets — le café coûte 2,50 €.\n")


def read(out, table):
    return pq.read_table(os.path.join(out, table)).to_pylist()


def saved_email() -> bytes:
    message = EmailMessage()
    message["From"] = "ada@example.com"
    message["To"] = "team@example.com"
    message["Subject"] = "Figures"
    message.set_content("The figures are attached.\n")
    message.add_attachment(bytes(range(256)) * 16, maintype="application", subtype="octet-stream",
                           filename="figures.bin")
    return message.as_bytes()


@pytest.fixture()
def corpus(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    files = {
        "gbk.txt": CHINESE.encode("gbk"),
        "sjis.md": JAPANESE.encode("shift_jis"),
        "french.txt": FRENCH.encode("cp1252"),
        "utf8.txt": FRENCH.encode("utf-8"),
        "saved-mail.txt": saved_email(),
        "settings": b'{\n  "name": "beam",\n  "shards": 4\n}\n',
        "Main.kt": b"fun main() {\n    println(\"hi\")\n}\n",
        "report.dat": b"# Report\n\nForced to Markdown by pattern.\n",
    }
    for name, data in files.items():
        (src / name).write_bytes(data)
    return src


def test_run_records_encodings_and_detected_types(corpus, tmp_path):
    out = str(tmp_path / "out")
    assert main(["run", "--input", f"{corpus}/*", "--output", out, "--token-counter", "none",
                 "--content-type", "*.dat=text/markdown"]) == EXIT_OK
    docs = {os.path.basename(d["uri"]): d for d in read(out, "documents")}
    got = {name: (d["status"], d["content_type"], d["encoding"], d["encoding_confidence"]) for name, d in docs.items()}
    assert got == {
        "gbk.txt": ("ok", "text/plain", "gb18030", got["gbk.txt"][3]),
        "sjis.md": ("ok", "text/markdown", "cp932", got["sjis.md"][3]),
        "french.txt": ("ok", "text/plain", "cp1252", got["french.txt"][3]),
        "utf8.txt": ("ok", "text/plain", "utf-8", 1.0),
        "saved-mail.txt": ("ok", "message/rfc822", None, None),  # decoded part by part, by the e-mail parser
        "settings": ("ok", "application/json", "utf-8", 1.0),
        "Main.kt": ("ok", "text/x-kotlin", "utf-8", 1.0),
        "report.dat": ("ok", "text/markdown", "utf-8", 1.0),
    }
    assert got["gbk.txt"][3] >= 0.9 and got["sjis.md"][3] >= 0.9
    # windows-1250 and -1257 read this short French text just as well (coûte, coűte):
    # the most used encoding wins, and the confidence says that others were as plausible.
    assert 0.3 <= got["french.txt"][3] < 0.5
    assert {d["decode_replacements"] for d in docs.values()} == {0}

    chunks = {}
    for c in read(out, "chunks"):
        chunks.setdefault(os.path.basename(c["uri"]), []).append(c)
    for name, text in (("gbk.txt", CHINESE), ("sjis.md", JAPANESE), ("french.txt", FRENCH)):
        pieces = sorted(chunks[name], key=lambda c: c["chunk_index"])
        assert all(text[c["start"]:c["end"]] == c["text"] for c in pieces), name
        covered = {k for c in pieces for k in range(c["start"], c["end"])}
        assert all(k in covered for k, ch in enumerate(text) if not ch.isspace()), name  # nothing lost
    mail = chunks["saved-mail.txt"]
    text = "".join(c["text"] for c in mail)
    assert "The figures are attached." in text and "Subject: Figures" in text
    assert base64.b64encode(bytes(range(256)))[:24].decode() not in text  # the attachment is not text
    assert "figures.bin (application/octet-stream)" in decode_metadata(mail[0]["metadata"])["attachments_skipped"]
    assert chunks["report.dat"][0]["heading"] == "Report"
    assert chunks["Main.kt"][0]["language"] == "kotlin"


def test_forced_text_type_on_a_binary_file_fails_that_document(tmp_path):
    src, out = tmp_path / "src", str(tmp_path / "out")
    src.mkdir()
    (src / "paper.txt").write_bytes(b"%PDF-1.4\n%binary")
    (src / "ok.txt").write_bytes(b"Fine text.\n")
    assert main(["run", "--input", f"{src}/*", "--output", out, "--token-counter", "none",
                 "--content-type", "*.txt=text/plain", "--max-failures", "1"]) == EXIT_OK
    docs = {os.path.basename(d["uri"]): d for d in read(out, "documents")}
    assert (docs["paper.txt"]["status"], docs["paper.txt"]["stage"]) == ("failed", "read")
    assert "a binary file is never read as text" in docs["paper.txt"]["error_message"]
    assert docs["ok.txt"]["status"] == "ok"


def test_content_types_in_the_spec_and_on_the_command_line(tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text('input: a/*\noutput: b\ncontent_types: {"*.log": text/plain, "*.cfg": application/yaml}\n')
    opts = ChunkingOptions(["--config", str(spec), "--content-type", "*.cfg=application/json",
                            "--content-type", "*/raw/*=text/plain"])
    # Flags come first (the first matching pattern wins) and replace the spec's same pattern.
    assert spec_from_options(opts).content_types == (
        ("*.cfg", "application/json"), ("*/raw/*", "text/plain"), ("*.log", "text/plain"))


@pytest.mark.parametrize("value,message", [
    ({"*.log": "text/plane"}, "content_types.*.log: 'text/plane' has no parser; did you mean 'text/plain'?"),
    (["*.log"], "content_types: expected a mapping of file pattern to content type"),
])
def test_spec_content_types_are_validated(value, message):
    with pytest.raises(ConfigError) as caught:
        parse_spec({"content_types": value})
    assert message in str(caught.value)


def test_cli_content_type_errors_are_one_line(tmp_path, capsys):
    (tmp_path / "a.txt").write_text("x")
    for flag, expected in (("*.log", "--content-type '*.log': expected PATTERN=TYPE"),
                           ("*.log=text/plane", "did you mean 'text/plain'?")):
        code = main(["run", "--input", f"{tmp_path}/*.txt", "--output", str(tmp_path / "out"),
                     "--content-type", flag])
        err = capsys.readouterr().err
        assert code == EXIT_USAGE and expected in err and err.count("\n") == 1


def test_preview_decodes_legacy_text_and_honours_forced_types(tmp_path, capsys):
    legacy = tmp_path / "notes.txt"
    legacy.write_bytes(FRENCH.encode("cp1252"))
    out = io.StringIO()
    assert preview_command([str(legacy), "--no-color"], stdout=out) == 0
    assert "l’archiviste" in out.getvalue() and " | text/plain | " in out.getvalue().split("\n")[0]
    forced = tmp_path / "report.dat"
    forced.write_bytes(b"# Report\n\nBody.\n")
    out = io.StringIO()
    assert preview_command([str(forced), "--no-color", "--content-type", "*.dat=text/markdown"], stdout=out) == 0
    assert " | text/markdown | " in out.getvalue().split("\n")[0]
    assert preview_command([str(forced), "--content-type", "*.dat=text/markdwn"], stdout=io.StringIO()) == 2
    assert "did you mean 'text/markdown'?" in capsys.readouterr().err
