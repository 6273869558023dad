#!/usr/bin/env python3
"""Writes a tiny model the way llama.cpp's convert_hf_to_gguf.py does, with the `gguf` package:
random Hugging Face-layout float32 weights, q_proj/k_proj rows permuted for llama (not for
qwen2), HF -> GGUF tensor names. Also saves the HF-layout weights to OUT_DIR/ref_ARCH.safetensors so
the C++ test can check that loading undoes the permutation.
Usage: gguf_write_model.py OUT_DIR llama|qwen2"""
import os
import sys

import numpy as np
import gguf
from safetensors.numpy import save_file

DIM, LAYERS, HEADS, KV, FFN, VOCAB, CTX = 64, 2, 4, 2, 128, 300, 96
HEAD_DIM = DIM // HEADS


def permute(w: np.ndarray, n_head: int) -> np.ndarray:
    # convert_hf_to_gguf.LlamaModel.permute
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def main() -> None:
    out, arch = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(7 if arch == "llama" else 8)

    def rand(*shape):
        return (rng.standard_normal(shape) * 0.02).astype(np.float32)

    hf = {"model.embed_tokens.weight": rand(VOCAB, DIM), "model.norm.weight": 1 + rand(DIM)}
    tied = arch == "qwen2"
    if not tied:
        hf["lm_head.weight"] = rand(VOCAB, DIM)
    for i in range(LAYERS):
        p = f"model.layers.{i}."
        hf[p + "input_layernorm.weight"] = 1 + rand(DIM)
        hf[p + "post_attention_layernorm.weight"] = 1 + rand(DIM)
        hf[p + "self_attn.q_proj.weight"] = rand(HEADS * HEAD_DIM, DIM)
        hf[p + "self_attn.k_proj.weight"] = rand(KV * HEAD_DIM, DIM)
        hf[p + "self_attn.v_proj.weight"] = rand(KV * HEAD_DIM, DIM)
        hf[p + "self_attn.o_proj.weight"] = rand(DIM, HEADS * HEAD_DIM)
        hf[p + "mlp.gate_proj.weight"] = rand(FFN, DIM)
        hf[p + "mlp.up_proj.weight"] = rand(FFN, DIM)
        hf[p + "mlp.down_proj.weight"] = rand(DIM, FFN)
        if arch == "qwen2":
            hf[p + "self_attn.q_proj.bias"] = rand(HEADS * HEAD_DIM)
            hf[p + "self_attn.k_proj.bias"] = rand(KV * HEAD_DIM)
            hf[p + "self_attn.v_proj.bias"] = rand(KV * HEAD_DIM)
    save_file(hf, os.path.join(out, f"ref_{arch}.safetensors"))

    w = gguf.GGUFWriter(os.path.join(out, f"{arch}.gguf"), arch)
    w.add_name(f"tiny-{arch}")
    w.add_context_length(CTX)
    w.add_embedding_length(DIM)
    w.add_block_count(LAYERS)
    w.add_feed_forward_length(FFN)
    w.add_head_count(HEADS)
    w.add_head_count_kv(KV)
    w.add_rope_freq_base(1000000.0 if arch == "qwen2" else 10000.0)
    w.add_layer_norm_rms_eps(1e-6 if arch == "qwen2" else 1e-5)
    w.add_rope_dimension_count(HEAD_DIM)
    w.add_file_type(0)
    tokens = ["<unk>", "<s>", "</s>"] + [f"t{i}" for i in range(VOCAB - 3)]
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("default")
    w.add_token_list(tokens)
    w.add_token_types([3, 3, 3] + [1] * (VOCAB - 3))
    w.add_token_merges(["t 1", "t 2"])
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_add_bos_token(False)
    w.add_chat_template("{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}")

    names = {"input_layernorm.weight": "attn_norm.weight", "post_attention_layernorm.weight": "ffn_norm.weight",
             "self_attn.q_proj.weight": "attn_q.weight", "self_attn.k_proj.weight": "attn_k.weight",
             "self_attn.v_proj.weight": "attn_v.weight", "self_attn.o_proj.weight": "attn_output.weight",
             "self_attn.q_proj.bias": "attn_q.bias", "self_attn.k_proj.bias": "attn_k.bias",
             "self_attn.v_proj.bias": "attn_v.bias", "mlp.gate_proj.weight": "ffn_gate.weight",
             "mlp.up_proj.weight": "ffn_up.weight", "mlp.down_proj.weight": "ffn_down.weight"}
    for name, t in hf.items():
        if name == "model.embed_tokens.weight":
            g = "token_embd.weight"
        elif name == "model.norm.weight":
            g = "output_norm.weight"
        elif name == "lm_head.weight":
            g = "output.weight"
        else:
            layer, suffix = name[len("model.layers."):].split(".", 1)
            g = f"blk.{layer}.{names[suffix]}"
        if arch == "llama" and suffix_is(name, "q_proj.weight"):
            t = permute(t, HEADS)
        elif arch == "llama" and suffix_is(name, "k_proj.weight"):
            t = permute(t, KV)
        w.add_tensor(g, t)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def suffix_is(name: str, suffix: str) -> bool:
    return name.endswith(suffix)


if __name__ == "__main__":
    main()
