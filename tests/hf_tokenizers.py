"""Real HF tokenizers for tests, nothing downloaded: the packaged MiniLM (WordPiece, lowercasing)
and small BPE tokenizers trained here on a few sentences and saved as ``tokenizer.json``."""
from __future__ import annotations

import os

import pytest

SENTENCES = [
    "The quick brown fox jumps over the lazy dog.",
    "Dr. Smith went to Washington on 3.14 and met Mrs. Jones there.",
    "Chunks are exact spans of the document, and their sizes are hard ceilings.",
    "日本語のテキストと中文句子。 한국어 문장도 있습니다.",
    "Emoji 👩‍👩‍👧 and 👍🏽 and flags 🇫🇷 and accents é e\u0301 ü.",
    "def chunk(text):\n    return [text[i:i + 8] for i in range(0, len(text), 8)]\n",
]


def minilm_tokenizer() -> str:
    """Path of the packaged all-MiniLM-L6-v2 ``tokenizer.json`` (skips without the minilm extra)."""
    from beam_chunking.errors import MissingExtra

    try:
        from beam_chunking.embeddings.minilm import minilm_paths

        return minilm_paths()[1]
    except MissingExtra as exc:
        pytest.skip(str(exc))


def build_bpe(folder: str, kind: str = "bytelevel") -> str:
    """Train a tiny BPE tokenizer with ``<s>`` and ``</s>`` around each sequence; its path.

    ``kind``: ``"bytelevel"`` (GPT-2 style, every byte in the alphabet) or ``"metaspace"``
    (SentencePiece style, NFKC, an ``<unk>`` for unseen characters: no fast counting path).
    """
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers import decoders, models, normalizers, pre_tokenizers, processors, trainers

    if kind == "bytelevel":
        tok = tokenizers.Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tok.decoder = decoders.ByteLevel()
        alphabet = pre_tokenizers.ByteLevel.alphabet()
    else:
        tok = tokenizers.Tokenizer(models.BPE(unk_token="<unk>"))
        tok.normalizer = normalizers.NFKC()
        tok.pre_tokenizer = pre_tokenizers.Metaspace()
        alphabet = []
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=["<s>", "</s>", "<unk>"], initial_alphabet=alphabet,
                                  show_progress=False)
    tok.train_from_iterator(SENTENCES * 4, trainer)
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", special_tokens=[("<s>", tok.token_to_id("<s>")), ("</s>", tok.token_to_id("</s>"))])
    path = os.path.join(folder, kind, "tokenizer.json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tok.save(path)
    return path
