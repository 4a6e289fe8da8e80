"""A tiny but real ONNX embedding model and WordPiece vocabulary, written by the tests.

The model is an ``onnx`` graph (token embedding lookup plus position embeddings, output
``last_hidden_state [batch, sequence, 16]``) run by onnxruntime through the same loading code
as any user model. Its vocabulary has two topics whose words point in two different
directions, so sentences about the same topic are similar and the two topics are not.
"""
from __future__ import annotations

import os
from typing import Optional

import numpy as np

DIM = 16
TOPIC_A = "cat dog bird fish horse cow sheep goat mouse lion tiger bear wolf fox deer".split()
TOPIC_B = "stock bond market price trade bank loan fund cash debt share rate tax profit loss".split()
OTHER = "the a is are and of in on to with about this that it was very".split()
SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
VOCAB = SPECIAL + TOPIC_A + TOPIC_B + OTHER + [".", ",", "!", "?"] + list("abcdefghijklmnopqrstuvwxyz") + [
    "##" + c for c in "abcdefghijklmnopqrstuvwxyz"] + ["日", "本", "語", "中", "文"]


def _table(seed: int = 7) -> np.ndarray:
    rng = np.random.default_rng(seed)
    a, b = rng.normal(size=DIM), rng.normal(size=DIM)
    rows = []
    for word in VOCAB:
        base = a if word in TOPIC_A else b if word in TOPIC_B else np.zeros(DIM)
        rows.append(3 * base + 0.3 * rng.normal(size=DIM))
    return np.asarray(rows, dtype=np.float32)


def write_model(folder, *, positions: int = 512, pooled: bool = False, extra_outputs: bool = False,
                mask_input: bool = True, type_input: bool = False, cls: bool = False,
                name: Optional[str] = None) -> str:
    """Write the tiny model into ``folder`` and return its path.

    With ``cls``, the model is trained for CLS pooling, as BGE is: its first position's
    output is the (attention-masked) mean of the plain model's outputs, the other positions
    are as before. So its CLS vector of a one-window text equals the plain model's
    mean-pooled vector, which the tests use as the known answer.
    """
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    table = numpy_helper.from_array(_table(), "word_embeddings")
    pos = numpy_helper.from_array((0.01 * np.random.default_rng(3).normal(size=(positions, DIM))).astype(np.float32),
                                  "position_embeddings")
    nodes = [
        helper.make_node("Gather", ["word_embeddings", "input_ids"], ["words"], axis=0),
        helper.make_node("Shape", ["input_ids"], ["shape"]),
        helper.make_node("Gather", ["shape", "one"], ["seq_len"], axis=0),
        helper.make_node("Range", ["zero", "seq_len", "one"], ["position_ids"]),
        helper.make_node("Gather", ["position_embeddings", "position_ids"], ["positions"], axis=0),
        helper.make_node("Add", ["words", "positions"], ["last_hidden_state"]),
    ]
    outputs = [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "sequence", DIM])]
    if pooled:
        nodes.append(helper.make_node("ReduceMean", ["last_hidden_state", "axis1"], ["pooled"], keepdims=0))
        outputs = [helper.make_tensor_value_info("pooled", TensorProto.FLOAT, ["batch", DIM])]
    if extra_outputs:
        nodes.append(helper.make_node("Identity", ["words"], ["other"]))
        outputs = [helper.make_tensor_value_info("hidden", TensorProto.FLOAT, ["batch", "sequence", DIM]),
                   helper.make_tensor_value_info("other", TensorProto.FLOAT, ["batch", "sequence", DIM])]
        nodes[5] = helper.make_node("Add", ["words", "positions"], ["hidden"])
    inputs = [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "sequence"])]
    if mask_input:
        inputs.append(helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "sequence"]))
    initializers = [table, pos]
    if type_input:  # BERT-style segment embeddings: the model cannot run unless they are fed
        inputs.append(helper.make_tensor_value_info("token_type_ids", TensorProto.INT64, ["batch", "sequence"]))
        initializers.append(numpy_helper.from_array(np.zeros((2, DIM), dtype=np.float32), "type_embeddings"))
        nodes[-1] = helper.make_node("Add", ["words", "positions"], ["summed"])
        nodes += [helper.make_node("Gather", ["type_embeddings", "token_type_ids"], ["types"], axis=0),
                  helper.make_node("Add", ["summed", "types"], ["last_hidden_state"])]
    constants = [numpy_helper.from_array(np.array(0, dtype=np.int64), "zero"),
                 numpy_helper.from_array(np.array(1, dtype=np.int64), "one"),
                 numpy_helper.from_array(np.array([1], dtype=np.int64), "axis1")]
    if cls:
        last = nodes[-1]
        nodes[-1] = helper.make_node(last.op_type, list(last.input), ["plain"], **{a.name: helper.get_attribute_value(a)
                                                                                   for a in last.attribute})
        if mask_input:
            nodes += [helper.make_node("Cast", ["attention_mask"], ["maskf"], to=TensorProto.FLOAT),
                      helper.make_node("Unsqueeze", ["maskf", "axis2"], ["mask3"]),
                      helper.make_node("Mul", ["plain", "mask3"], ["masked"]),
                      helper.make_node("ReduceSum", ["masked", "axis1"], ["total"], keepdims=1),
                      helper.make_node("ReduceSum", ["mask3", "axis1"], ["count"], keepdims=1),
                      helper.make_node("Div", ["total", "count"], ["first"])]
        else:
            nodes.append(helper.make_node("ReduceMean", ["plain", "axis1"], ["first"], keepdims=1))
        nodes += [helper.make_node("Slice", ["plain", "axis1", "big", "axis1"], ["rest"]),
                  helper.make_node("Concat", ["first", "rest"], ["last_hidden_state"], axis=1)]
        constants += [numpy_helper.from_array(np.array([2], dtype=np.int64), "axis2"),
                      numpy_helper.from_array(np.array([2 ** 62], dtype=np.int64), "big")]
    graph = helper.make_graph(nodes, "tiny", inputs, outputs, [*initializers, *constants])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    os.makedirs(str(folder), exist_ok=True)
    path = os.path.join(str(folder), name or f"tiny-{positions}{'-pooled' if pooled else ''}{'-multi' if extra_outputs else ''}{'-types' if type_input else ''}{'-cls' if cls else ''}{'' if mask_input else '-nomask'}.onnx")
    onnx.save(model, path)
    return path


def write_vocab(folder) -> str:
    path = os.path.join(str(folder), "vocab.txt")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(VOCAB) + "\n")
    return path


def tiny_embedder(folder, **options):
    """An OnnxEmbedder on the tiny model (real onnxruntime session, real WordPiece tokenizer)."""
    from beam_chunking.embeddings import OnnxEmbedder

    return OnnxEmbedder(model_path=write_model(folder), vocab_path=write_vocab(folder), name="tiny", **options)
