#!/usr/bin/env python3
"""Test-side reference for the float decoder: small random models of every family we build (llama,
qwen2, qwen3, granite, smollm3, phi3, gemma 1/2/3/4, glm, codegen) run by Hugging Face transformers (PyTorch). For each case it writes, under OUTDIR:

  <case>/               the model saved with save_pretrained (safetensors, float32)
  <case>.gguf           the same weights as a GGUF file, laid out the way llama.cpp's
                        convert_hf_to_gguf.py writes them (llama arch: q/k rows permuted)
  <case>.logits.f32     raw little-endian float32 logits [n_tokens, vocab] of one causal forward
  cases.json            per case: name, arch, dirs/files, tokens, vocab, description

Usage: hf_reference.py OUTDIR
"""
import json
import math
import os
import sys

import numpy as np
import torch
from gguf import GGUFWriter, TokenType
from transformers import (CodeGenConfig, CodeGenForCausalLM, GlmConfig, GlmForCausalLM, Gemma2Config, Gemma2ForCausalLM, Gemma3ForCausalLM, Gemma3TextConfig, Gemma4Config, Gemma4ForCausalLM, Gemma4ForConditionalGeneration, Gemma4TextConfig, GemmaConfig, GemmaForCausalLM, GraniteConfig, GraniteForCausalLM, LlamaConfig, LlamaForCausalLM, Phi3Config,
                          Phi3ForCausalLM, Qwen2Config, Qwen2ForCausalLM, Qwen3Config, Qwen3ForCausalLM, SmolLM3Config,
                          SmolLM3ForCausalLM)

N_TOKENS = 64
VOCAB = 320

# name -> (arch, config kwargs, tied). All have GQA (n_kv < n_heads).
CASES = {
    "llama_tied": ("llama", dict(num_attention_heads=4, num_key_value_heads=2, rope_theta=10000.0), True),
    "llama_untied": ("llama", dict(num_attention_heads=4, num_key_value_heads=1, rope_theta=10000.0), False),
    "llama3_rope": ("llama", dict(num_attention_heads=4, num_key_value_heads=2, rope_theta=500000.0,
                                  rope_scaling=dict(rope_type="llama3", factor=8.0, low_freq_factor=1.0,
                                                    high_freq_factor=4.0, original_max_position_embeddings=64)),
                    False),
    "qwen2_bias": ("qwen2", dict(num_attention_heads=4, num_key_value_heads=2, rope_theta=1000000.0), True),
    # q/k norms per head; head_dim 32 with 4 heads, so q is wider than the hidden size.
    "qwen3_qk_norm": ("qwen3", dict(num_attention_heads=4, num_key_value_heads=2, rope_theta=1000000.0,
                                    extra=dict(head_dim=32)), False),
    # Granite 3.3's multipliers (attention 1 / head_dim as there).
    "granite_scales": ("granite", dict(num_attention_heads=4, num_key_value_heads=2, rope_theta=10000.0,
                                       extra=dict(embedding_multiplier=12.0, residual_multiplier=0.22,
                                                  attention_multiplier=1.0 / 16, logits_scaling=8.0)), True),
    # Every fourth layer without rotary embedding (SmolLM3's default no_rope_layer_interval).
    "smollm3_nope": ("smollm3", dict(num_attention_heads=4, num_key_value_heads=1, rope_theta=50000.0,
                                     extra=dict(num_hidden_layers=4)), True),
    # Phi-4-mini's layout: fused qkv and gate/up, 3/4 of each head rotates, longrope (short factors:
    # the 64 tokens stay within the original context).
    "phi3_longrope": ("phi3", dict(num_attention_heads=4, num_key_value_heads=2, rope_theta=10000.0,
                                   rope_scaling=dict(rope_type="longrope", partial_rotary_factor=0.75,
                                                     short_factor=[1.0 + 0.05 * i for i in range(6)],
                                                     long_factor=[2.0 + 0.25 * i for i in range(6)]),
                                   extra=dict(original_max_position_embeddings=64)), True),
    # GeGLU (tanh GELU), embeddings times sqrt(hidden), (1 + w) norms, multi-query attention with a
    # head wider than hidden / heads.
    "gemma_geglu": ("gemma", dict(num_attention_heads=4, num_key_value_heads=1, rope_theta=10000.0,
                                  extra=dict(head_dim=24, hidden_activation="gelu_pytorch_tanh")), True),
    # Norms after both blocks, soft-capped scores and logits (small caps, so the tanh bends), every
    # even layer over a sliding window of 8 tokens (the 64-token sequence slides well past it).
    "gemma2_caps": ("gemma2", dict(num_attention_heads=4, num_key_value_heads=2, rope_theta=10000.0,
                                   extra=dict(head_dim=16, query_pre_attn_scalar=16, attn_logit_softcapping=2.0,
                                              final_logit_softcapping=5.0, sliding_window=8,
                                              num_hidden_layers=3)), True),
    # query_pre_attn_scalar apart from head_dim (27B-style): HF only, GGUF keeps no such key.
    "gemma2_query_scalar": ("gemma2", dict(num_attention_heads=4, num_key_value_heads=2, rope_theta=10000.0,
                                           extra=dict(head_dim=16, query_pre_attn_scalar=24, sliding_window=8,
                                                      attn_logit_softcapping=None, final_logit_softcapping=None)),
                            True),
}
# Phi-3-mini's layout: every layer over a sliding window (8 of the 64 tokens), full rotary.
CASES["phi3_sliding"] = ("phi3", dict(num_attention_heads=4, num_key_value_heads=2, rope_theta=10000.0,
                                      extra=dict(sliding_window=8)), False)
# q/k norms (1 + w), five of six layers sliding with their own rope base (10000; global 1e6).
CASES["gemma3_local_rope"] = ("gemma3", dict(num_attention_heads=4, num_key_value_heads=1, rope_theta=1000000.0,
                                             rope_nested=dict(sliding_attention=dict(rope_type="default", rope_theta=10000.0),
                                                              full_attention=dict(rope_type="default", rope_theta=1000000.0)),
                                             extra=dict(head_dim=16, query_pre_attn_scalar=16, sliding_window=8,
                                                        num_hidden_layers=6)), True)
# Interleaved rotary pairs on half of each head, q/k/v biases, fused gate/up.
CASES["glm_interleaved"] = ("glm", dict(num_attention_heads=4, num_key_value_heads=2, rope_theta=10000.0,
                                        extra=dict(head_dim=16, attention_bias=True)), False)
# CodeGen (codegen2): LayerNorms, attention and MLP in parallel off one norm, qkv_proj in four
# groups of [q; v; k], rope on interleaved pairs of a quarter of each head (rotary_dim 4 of 16),
# biased fc_in / fc_out / lm_head. llama.cpp has no codegen architecture: no GGUF copy.
CASES["codegen_parallel"] = ("codegen", dict(num_attention_heads=4, num_key_value_heads=4,
                                             extra=dict(rotary_dim=4)), False)
# Gemma 4 (E2B's layout, shrunk): per-layer embeddings, sliding layers of head 16 and global
# layers of head 32 rotating proportionally (a quarter of each half), the last two layers reading
# the keys and values of the last earlier layer of their kind with a double-wide MLP, weightless
# value norms, layer scalars, soft-capped logits, attention scale 1.
GEMMA4_ROPE = dict(sliding_attention=dict(rope_type="default", rope_theta=10000.0),
                   full_attention=dict(rope_type="proportional", partial_rotary_factor=0.25, rope_theta=1000000.0))
CASES["gemma4_ple_shared_kv"] = ("gemma4", dict(num_attention_heads=4, num_key_value_heads=1, rope_nested=GEMMA4_ROPE,
                                                extra=dict(head_dim=16, global_head_dim=32, num_hidden_layers=5,
                                                           layer_types=["sliding_attention", "sliding_attention",
                                                                        "full_attention", "sliding_attention",
                                                                        "full_attention"],
                                                           sliding_window=8, num_kv_shared_layers=2,
                                                           use_double_wide_mlp=True, hidden_size_per_layer_input=8,
                                                           vocab_size_per_layer_input=VOCAB,
                                                           final_logit_softcapping=5.0)), True)
# attention_k_eq_v: the global layers' values are their keys (no v_proj), with their own KV heads.
CASES["gemma4_k_eq_v"] = ("gemma4", dict(num_attention_heads=4, num_key_value_heads=1, rope_nested=GEMMA4_ROPE,
                                         extra=dict(head_dim=16, global_head_dim=32, num_global_key_value_heads=2,
                                                    attention_k_eq_v=True, num_hidden_layers=3,
                                                    layer_types=["sliding_attention", "full_attention",
                                                                 "full_attention"],
                                                    sliding_window=8, hidden_size_per_layer_input=0)), True)
# The same decoder as google/gemma-4-e2b-it ships it: Gemma4ForConditionalGeneration (model_type
# gemma4, a text_config, the decoder's tensors under model.language_model.), without its towers.
CASES["gemma4_multimodal_folder"] = ("gemma4_cond",) + CASES["gemma4_ple_shared_kv"][1:]
NO_GGUF = {"gemma2_query_scalar", "codegen_parallel", "gemma4_multimodal_folder"}

MODELS = {
    "llama": (LlamaConfig, LlamaForCausalLM),
    "qwen2": (Qwen2Config, Qwen2ForCausalLM),
    "qwen3": (Qwen3Config, Qwen3ForCausalLM),
    "granite": (GraniteConfig, GraniteForCausalLM),
    "smollm3": (SmolLM3Config, SmolLM3ForCausalLM),
    "phi3": (Phi3Config, Phi3ForCausalLM),
    "gemma": (GemmaConfig, GemmaForCausalLM),
    "gemma2": (Gemma2Config, Gemma2ForCausalLM),
    "gemma3": (Gemma3TextConfig, Gemma3ForCausalLM),
    "gemma4": (Gemma4TextConfig, Gemma4ForCausalLM),
    "gemma4_cond": (Gemma4TextConfig, Gemma4ForConditionalGeneration),
    "glm": (GlmConfig, GlmForCausalLM),
    "codegen": (CodeGenConfig, CodeGenForCausalLM),
}
# llama.cpp's converter permutes q/k rows into its interleaved rope order for these.
PERMUTED = {"llama", "granite", "smollm3"}


def make_model(arch, kw, tied, seed):
    rope = kw.get("rope_nested") or {"rope_type": "default", "rope_theta": kw.get("rope_theta", 10000.0)}
    if "rope_scaling" in kw:
        rope = dict(kw["rope_scaling"], rope_theta=kw["rope_theta"])
        if rope["rope_type"] == "longrope":
            rope["original_max_position_embeddings"] = kw["extra"]["original_max_position_embeddings"]
    common = dict(hidden_size=64, intermediate_size=160, num_hidden_layers=2,
                  num_attention_heads=kw["num_attention_heads"], num_key_value_heads=kw["num_key_value_heads"],
                  vocab_size=VOCAB, max_position_embeddings=256, rms_norm_eps=1e-5, rope_parameters=rope,
                  tie_word_embeddings=tied, bos_token_id=1, eos_token_id=2, pad_token_id=None)
    common.update(kw.get("extra", {}))
    if arch == "codegen":  # GPT-J's config names
        common = dict(n_embd=64, n_inner=160, n_layer=2, n_head=kw["num_attention_heads"], vocab_size=VOCAB,
                      n_positions=256, layer_norm_epsilon=1e-5, activation_function="gelu_new",
                      tie_word_embeddings=tied, bos_token_id=1, eos_token_id=2, **kw.get("extra", {}))
    torch.manual_seed(seed)
    config_cls, model_cls = MODELS[arch]
    if arch == "gemma4_cond":  # its forward masks multimodal ids with the pad id
        common["pad_token_id"] = 0
    config = config_cls(**common)
    if arch == "gemma4_cond":
        config = Gemma4Config(text_config=config.to_dict(), vision_config=None, audio_config=None)
    config._attn_implementation = "eager"  # the reference form (sdpa cannot soft-cap gemma2's scores)
    model = model_cls(config)
    # Default init gives zero biases and unit norms; randomise everything so every term matters.
    gen = torch.Generator().manual_seed(seed + 1)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if ".ln_" in name and name.endswith(".weight"):  # codegen's LayerNorms
                p.copy_(1.0 + 0.2 * torch.randn(p.shape, generator=gen))
            elif name.endswith("norm.weight"):  # gemma 1-3 store w - 1: their norms multiply by 1 + w
                offset = 0.0 if arch in ("gemma", "gemma2", "gemma3") else 1.0  # gemma4 stores w
                p.copy_(offset + 0.2 * torch.randn(p.shape, generator=gen))
            elif name.endswith(".bias"):
                p.copy_(0.3 * torch.randn(p.shape, generator=gen))
            elif "embed_tokens" in name or ".wte." in name:
                p.copy_(torch.randn(p.shape, generator=gen))
            else:
                p.copy_(torch.randn(p.shape, generator=gen) / math.sqrt(p.shape[1]) * 1.5)
        for name, b in model.named_buffers():
            if name.endswith("layer_scalar"):  # gemma4: each layer's output times its scalar
                b.copy_(0.5 + torch.rand(b.shape, generator=gen))
    model.eval()
    return model.float()


def legacy_rope_keys(folder, kw):
    """Hub checkpoints written by transformers 4.x carry rope_theta / rope_scaling; add them so the
    folder looks like a real one (rope_parameters from transformers 5 stays too)."""
    path = os.path.join(folder, "config.json")
    with open(path) as f:
        cfg = json.load(f)
    if "rope_theta" not in kw:  # codegen: a fixed base, no rope keys
        return
    cfg["rope_theta"] = kw["rope_theta"]
    if "rope_scaling" in kw:
        cfg["rope_scaling"] = kw["rope_scaling"]
    with open(path, "w") as f:
        json.dump(cfg, f, indent=2, sort_keys=True)


def permute_llama(w, n_head, n_head_kv):
    """convert_hf_to_gguf.py LlamaModel.permute: HF rotate-half rows -> GGML interleaved rows."""
    if n_head_kv is not None and n_head != n_head_kv:
        n_head = n_head_kv
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def llama3_rope_factors(head_dim, theta, s):
    """convert_hf_to_gguf.py LlamaModel.generate_extra_tensors: the rope_freqs.weight tensor."""
    freqs = 1.0 / (theta ** (np.arange(0, head_dim, 2, dtype=np.float32) / head_dim))
    low_wavelen = s["original_max_position_embeddings"] / s["low_freq_factor"]
    high_wavelen = s["original_max_position_embeddings"] / s["high_freq_factor"]
    factors = []
    for f in freqs:
        wavelen = 2 * math.pi / f
        if wavelen < high_wavelen:
            factors.append(1.0)
        elif wavelen > low_wavelen:
            factors.append(s["factor"])
        else:
            smooth = (s["original_max_position_embeddings"] / wavelen - s["low_freq_factor"]) / (
                s["high_freq_factor"] - s["low_freq_factor"])
            factors.append(1.0 / ((1 - smooth) / s["factor"] + smooth))
    return np.array(factors, dtype=np.float32)


def write_gemma4_gguf(path, name, model, kw):
    """llama.cpp's gemma4 layout (conversion/gemma.py Gemma4Model): head sizes per layer kind,
    per-layer arrays where layers differ, the proportional rope as rope_freqs (1 where a pair
    rotates, 1e30 where not), plain norm weights, the per-layer embedding tensors."""
    cfg = model.config
    n = cfg.num_hidden_layers
    types = cfg.layer_types
    glob = next(i for i, t in enumerate(types) if t == "full_attention")
    swa = next(i for i, t in enumerate(types) if t == "sliding_attention")
    ghd, hd = cfg.per_layer_config[glob].head_dim, cfg.per_layer_config[swa].head_dim
    gkv, skv = cfg.per_layer_config[glob].num_key_value_heads, cfg.per_layer_config[swa].num_key_value_heads
    first_shared = n - cfg.num_kv_shared_layers
    w = GGUFWriter(path, "gemma4")
    w.add_name(name)
    w.add_context_length(cfg.max_position_embeddings)
    w.add_embedding_length(cfg.hidden_size)
    w.add_block_count(n)
    ff = [cfg.intermediate_size * (2 if cfg.use_double_wide_mlp and i >= first_shared else 1) for i in range(n)]
    w.add_feed_forward_length(ff if len(set(ff)) > 1 else ff[0])
    w.add_head_count(cfg.num_attention_heads)
    kv = [gkv if t == "full_attention" else skv for t in types]
    w.add_head_count_kv(kv if len(set(kv)) > 1 else kv[0])
    w.add_key_length(ghd)
    w.add_value_length(ghd)
    w.add_uint32("gemma4.attention.key_length_swa", hd)
    w.add_uint32("gemma4.attention.value_length_swa", hd)
    w.add_rope_dimension_count(ghd)
    w.add_uint32("gemma4.rope.dimension_count_swa", hd)
    rope = kw["rope_nested"]
    w.add_rope_freq_base(rope["full_attention"]["rope_theta"])
    w.add_float32("gemma4.rope.freq_base_swa", rope["sliding_attention"]["rope_theta"])
    w.add_sliding_window(cfg.sliding_window)
    w.add_array("gemma4.attention.sliding_window_pattern", [t == "sliding_attention" for t in types])
    w.add_uint32("gemma4.attention.shared_kv_layers", cfg.num_kv_shared_layers)
    w.add_uint32("gemma4.embedding_length_per_layer_input", cfg.hidden_size_per_layer_input)
    if cfg.final_logit_softcapping:
        w.add_final_logit_softcapping(cfg.final_logit_softcapping)
    w.add_layer_norm_rms_eps(cfg.rms_norm_eps)
    w.add_vocab_size(cfg.vocab_size)
    w.add_file_type(0)
    add_byte_vocab(w)
    sd = {k: v.detach().float().numpy() for k, v in model.state_dict().items()}
    w.add_tensor("token_embd.weight", sd["model.embed_tokens.weight"])
    angles = int(rope["full_attention"]["partial_rotary_factor"] * ghd // 2)
    w.add_tensor("rope_freqs.weight", np.array([1.0] * angles + [1e30] * (ghd // 2 - angles), dtype=np.float32))
    if cfg.hidden_size_per_layer_input:
        w.add_tensor("per_layer_token_embd.weight", sd["model.embed_tokens_per_layer.weight"])
        w.add_tensor("per_layer_model_proj.weight", sd["model.per_layer_model_projection.weight"])
        w.add_tensor("per_layer_proj_norm.weight", sd["model.per_layer_projection_norm.weight"])
    names = {"input_layernorm.weight": "attn_norm.weight", "self_attn.q_proj.weight": "attn_q.weight",
             "self_attn.q_norm.weight": "attn_q_norm.weight", "self_attn.k_proj.weight": "attn_k.weight",
             "self_attn.k_norm.weight": "attn_k_norm.weight", "self_attn.v_proj.weight": "attn_v.weight",
             "self_attn.o_proj.weight": "attn_output.weight",
             "post_attention_layernorm.weight": "post_attention_norm.weight",
             "pre_feedforward_layernorm.weight": "ffn_norm.weight",
             "post_feedforward_layernorm.weight": "post_ffw_norm.weight", "mlp.gate_proj.weight": "ffn_gate.weight",
             "mlp.up_proj.weight": "ffn_up.weight", "mlp.down_proj.weight": "ffn_down.weight",
             "per_layer_input_gate.weight": "inp_gate.weight", "per_layer_projection.weight": "proj.weight",
             "post_per_layer_input_norm.weight": "post_norm.weight", "layer_scalar": "layer_output_scale.weight"}
    for i in range(n):
        for hf, gg in names.items():
            if f"model.layers.{i}.{hf}" in sd:
                w.add_tensor(f"blk.{i}.{gg}", sd[f"model.layers.{i}.{hf}"])
    w.add_tensor("output_norm.weight", sd["model.norm.weight"])
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def add_byte_vocab(w):
    """Minimal byte-level BPE vocabulary: 256 byte tokens, then control tokens up to VOCAB."""
    byte_chars = bytes_to_unicode()
    tokens = [byte_chars[b] for b in range(256)] + [f"<|extra_{i}|>" for i in range(VOCAB - 256)]
    types = [TokenType.NORMAL] * 256 + [TokenType.CONTROL] * (VOCAB - 256)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("default")
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges([])
    w.add_bos_token_id(256)
    w.add_eos_token_id(257)


def write_gguf(path, name, arch, model, kw, tied):
    if arch == "gemma4":
        return write_gemma4_gguf(path, name, model, kw)
    cfg = model.config
    n_head, n_kv = cfg.num_attention_heads, cfg.num_key_value_heads
    head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // n_head
    w = GGUFWriter(path, "chatglm" if arch == "glm" else arch)
    if arch == "gemma3":
        w.add_rope_freq_base_swa(kw["rope_nested"]["sliding_attention"]["rope_theta"]) if hasattr(w, "add_rope_freq_base_swa") else None
    w.add_name(name)
    w.add_context_length(cfg.max_position_embeddings)
    w.add_embedding_length(cfg.hidden_size)
    w.add_block_count(cfg.num_hidden_layers)
    w.add_feed_forward_length(cfg.intermediate_size)
    w.add_head_count(n_head)
    w.add_head_count_kv(n_kv)
    w.add_rope_freq_base(kw["rope_theta"])
    rot = int(head_dim * kw.get("rope_scaling", {}).get("partial_rotary_factor", 0.5 if arch == "glm" else 1.0))
    w.add_rope_dimension_count(rot)
    if head_dim * n_head != cfg.hidden_size:
        w.add_key_length(head_dim)
        w.add_value_length(head_dim)
    if arch == "gemma3" or (arch == "phi3" and cfg.sliding_window):
        w.add_sliding_window(cfg.sliding_window)
    if arch == "gemma2":
        w.add_attn_logit_softcapping(cfg.attn_logit_softcapping or 0.0)
        w.add_final_logit_softcapping(cfg.final_logit_softcapping or 0.0)
        w.add_sliding_window(cfg.sliding_window)
    if arch == "granite":
        w.add_embedding_scale(cfg.embedding_multiplier)
        w.add_residual_scale(cfg.residual_multiplier)
        w.add_attention_scale(cfg.attention_multiplier)
        w.add_logit_scale(cfg.logits_scaling)
    w.add_layer_norm_rms_eps(cfg.rms_norm_eps)
    w.add_vocab_size(cfg.vocab_size)
    w.add_file_type(0)  # ALL_F32
    add_byte_vocab(w)

    sd = {k: v.detach().float().numpy() for k, v in model.state_dict().items()}
    if arch.startswith("gemma"):  # convert_hf_to_gguf's Gemma models: every norm weight + 1
        sd = {k: (v + 1.0 if k.endswith("norm.weight") else v) for k, v in sd.items()}
    w.add_tensor("token_embd.weight", sd["model.embed_tokens.weight"])
    longrope = "rope_scaling" in kw and kw["rope_scaling"]["rope_type"] == "longrope"
    if longrope:
        # llama.cpp's phi3 keys and tensors for longrope (convert_hf_to_gguf Phi3MiniModel).
        orig = kw["extra"]["original_max_position_embeddings"]
        w.add_rope_scaling_orig_ctx_len(orig)
        factor = cfg.max_position_embeddings / orig
        w.add_rope_scaling_attn_factors(math.sqrt(1 + math.log(factor) / math.log(orig)))
        w.add_tensor("rope_factors_long.weight", np.array(kw["rope_scaling"]["long_factor"], dtype=np.float32))
        w.add_tensor("rope_factors_short.weight", np.array(kw["rope_scaling"]["short_factor"], dtype=np.float32))
    elif "rope_scaling" in kw:
        # The divisors alone do not pin the original context length; llama.cpp's key for it.
        w.add_rope_scaling_orig_ctx_len(kw["rope_scaling"]["original_max_position_embeddings"])
        w.add_tensor("rope_freqs.weight", llama3_rope_factors(head_dim, kw["rope_theta"], kw["rope_scaling"]))
    for i in range(cfg.num_hidden_layers):
        p = f"model.layers.{i}."
        q, k = sd.get(p + "self_attn.q_proj.weight"), sd.get(p + "self_attn.k_proj.weight")
        if arch in PERMUTED:
            q, k = permute_llama(q, n_head, n_head), permute_llama(k, n_head, n_kv)
        w.add_tensor(f"blk.{i}.attn_norm.weight", sd[p + "input_layernorm.weight"])
        if arch == "glm":  # llama.cpp's chatglm: rows as HF has them (interleaved), ffn_up = [gate; up]
            for x in "qkv":
                w.add_tensor(f"blk.{i}.attn_{x}.weight", sd[p + f"self_attn.{x}_proj.weight"])
                w.add_tensor(f"blk.{i}.attn_{x}.bias", sd[p + f"self_attn.{x}_proj.bias"])
            w.add_tensor(f"blk.{i}.attn_output.weight", sd[p + "self_attn.o_proj.weight"])
            w.add_tensor(f"blk.{i}.ffn_norm.weight", sd[p + "post_attention_layernorm.weight"])
            w.add_tensor(f"blk.{i}.ffn_up.weight", sd[p + "mlp.gate_up_proj.weight"])
            w.add_tensor(f"blk.{i}.ffn_down.weight", sd[p + "mlp.down_proj.weight"])
            continue
        if arch == "phi3":  # fused as llama.cpp keeps them: attn_qkv, and ffn_up = [gate; up]
            w.add_tensor(f"blk.{i}.attn_qkv.weight", sd[p + "self_attn.qkv_proj.weight"])
            w.add_tensor(f"blk.{i}.attn_output.weight", sd[p + "self_attn.o_proj.weight"])
            w.add_tensor(f"blk.{i}.ffn_norm.weight", sd[p + "post_attention_layernorm.weight"])
            w.add_tensor(f"blk.{i}.ffn_up.weight", sd[p + "mlp.gate_up_proj.weight"])
            w.add_tensor(f"blk.{i}.ffn_down.weight", sd[p + "mlp.down_proj.weight"])
            continue
        w.add_tensor(f"blk.{i}.attn_q.weight", np.ascontiguousarray(q))
        w.add_tensor(f"blk.{i}.attn_k.weight", np.ascontiguousarray(k))
        w.add_tensor(f"blk.{i}.attn_v.weight", sd[p + "self_attn.v_proj.weight"])
        if arch == "qwen2":
            for x in "qkv":
                w.add_tensor(f"blk.{i}.attn_{x}.bias", sd[p + f"self_attn.{x}_proj.bias"])
        if arch in ("qwen3", "gemma3"):
            w.add_tensor(f"blk.{i}.attn_q_norm.weight", sd[p + "self_attn.q_norm.weight"])
            w.add_tensor(f"blk.{i}.attn_k_norm.weight", sd[p + "self_attn.k_norm.weight"])
        w.add_tensor(f"blk.{i}.attn_output.weight", sd[p + "self_attn.o_proj.weight"])
        if arch in ("gemma2", "gemma3"):  # llama.cpp's names by role around both blocks
            w.add_tensor(f"blk.{i}.post_attention_norm.weight", sd[p + "post_attention_layernorm.weight"])
            w.add_tensor(f"blk.{i}.ffn_norm.weight", sd[p + "pre_feedforward_layernorm.weight"])
            w.add_tensor(f"blk.{i}.post_ffw_norm.weight", sd[p + "post_feedforward_layernorm.weight"])
        else:
            w.add_tensor(f"blk.{i}.ffn_norm.weight", sd[p + "post_attention_layernorm.weight"])
        w.add_tensor(f"blk.{i}.ffn_gate.weight", sd[p + "mlp.gate_proj.weight"])
        w.add_tensor(f"blk.{i}.ffn_up.weight", sd[p + "mlp.up_proj.weight"])
        w.add_tensor(f"blk.{i}.ffn_down.weight", sd[p + "mlp.down_proj.weight"])
    w.add_tensor("output_norm.weight", sd["model.norm.weight"])
    if not tied:
        w.add_tensor("output.weight", sd["lm_head.weight"])
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def bytes_to_unicode():
    """GPT-2's byte -> printable unicode character table."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    torch.set_num_threads(1)
    meta = []
    for seed, (name, (arch, kw, tied)) in enumerate(CASES.items()):
        model = make_model(arch, kw, tied, 1000 + seed)
        folder = os.path.join(out, name)
        model.save_pretrained(folder, safe_serialization=True)
        legacy_rope_keys(folder, kw)
        gguf_path = None if name in NO_GGUF else os.path.join(out, name + ".gguf")
        if gguf_path:
            write_gguf(gguf_path, name, arch, model, kw, tied)
        gen = torch.Generator().manual_seed(7 + seed)
        tokens = torch.randint(0, VOCAB, (1, N_TOKENS), generator=gen)
        with torch.no_grad():
            logits = model(tokens).logits[0].float().numpy()
        logits.astype("<f4").tofile(os.path.join(out, name + ".logits.f32"))
        meta.append(dict(name=name, arch=arch, hf_dir=folder, gguf=gguf_path, tied=tied,
                         rope_scaling="rope_scaling" in kw and kw["rope_scaling"]["rope_type"] == "llama3", tokens=tokens[0].tolist(), vocab=VOCAB,
                         logits=os.path.join(out, name + ".logits.f32")))
    with open(os.path.join(out, "cases.json"), "w") as f:
        json.dump(meta, f, indent=2)


if __name__ == "__main__":
    main()
