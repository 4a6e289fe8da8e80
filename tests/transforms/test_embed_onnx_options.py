"""EmbedChunks with an OnnxEmbedder whose options change its vectors (pooling, prefixes):
vectors made under other options are replaced, and the label records the options."""
from __future__ import annotations

import apache_beam as beam
import numpy as np
import pytest
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to

from beam_chunking.transforms import EmbedChunks
from tests.embeddings.fixtures import DIM, tiny_embedder
from tests.transforms.test_embed import chunked


@pytest.fixture(scope="module")
def e5(tmp_path_factory):
    return tiny_embedder(tmp_path_factory.mktemp("tiny"), pooling="cls", passage_prefix="the bank ")


def test_vectors_of_the_same_model_under_other_options_are_replaced(e5):
    stale = [1.0] + [0.0] * (DIM - 1)
    docs = [chunked("plain", ["the cat"], embedding=stale, model="tiny"),  # made without the prefix
            chunked("same", ["the dog"], embedding=stale, model=e5.identity)]
    expected = np.round(e5.embed(["the cat"])[0].astype(np.float64), 5).tolist()
    with TestPipeline(runner="FnApiRunner") as p:
        out = p | beam.Create(docs) | EmbedChunks(e5) | beam.Map(
            lambda d: (d.document_id, d.chunks[0].metadata["embedding_model"],
                       np.round(np.asarray(d.chunks[0].embedding, dtype=np.float64), 5).tolist()))
        assert_that(out, equal_to([("plain", "tiny[pooling=cls, passage_prefix='the bank ']", expected),
                                   ("same", "tiny[pooling=cls, passage_prefix='the bank ']", stale)]))


def test_beam_yaml_transforms_take_the_options_as_yaml_writes_them(tmp_path):
    from collections import namedtuple

    from beam_chunking.errors import ConfigError
    from beam_chunking.pipelines.yaml_provider import ChunkText
    from tests.embeddings.fixtures import write_model, write_vocab

    # On Dataflow a nested mapping may arrive as a row (a named tuple) and a list as a list.
    Embed = namedtuple("Embed", "model_path vocab_path pooling providers query_prefix")
    row = Embed(write_model(tmp_path), write_vocab(tmp_path), "cls", ["CUDAExecutionProvider", "CPUExecutionProvider"],
                "query: ")
    embed = ChunkText(id_field="id", text_field="body", embed=row).config.embed
    assert (embed.pooling, embed.query_prefix, embed.providers) == ("cls", "query: ", tuple(row.providers))
    with pytest.raises(ConfigError, match="^embed: unknown OnnxEmbedder option 'pool'; the options are: model_path"):
        ChunkText(id_field="id", text_field="body", embed={"model_path": row.model_path, "pool": "cls"})
