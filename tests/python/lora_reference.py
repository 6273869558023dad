#!/usr/bin/env python3
"""Test-side reference for LoRA adapters kept beside the frozen weights (--lora_adapter): small
random decoders of two families, each with two random PEFT adapters of different ranks and target
modules, run by PEFT unmerged. Writes, under OUTDIR:

  <family>/model/            the base model (save_pretrained, safetensors, float32)
  <family>/<adapter>/        the adapter (adapter_config.json + adapter_model.safetensors)
  <family>.base.logits.f32   the base model's logits [n_tokens, vocab]
  <family>.<adapter>.logits.f32  with the adapter active, unmerged
  cases.json                 per family: dirs, adapters (name, rank, targets), tokens, vocab

Usage: lora_reference.py OUTDIR
       lora_reference.py --adapters MODEL_DIR OUTDIR   the two adapters for a Hugging Face folder
                                                       (OUTDIR/<adapter>/), e.g. one genai synth wrote
"""
import copy
import json
import os
import sys

import torch
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM, LlamaConfig, LlamaForCausalLM, Qwen2Config, Qwen2ForCausalLM

N_TOKENS = 24
VOCAB = 320

FAMILIES = {
    "llama": (LlamaConfig, LlamaForCausalLM, dict(tie_word_embeddings=False)),
    "qwen2": (Qwen2Config, Qwen2ForCausalLM, dict(tie_word_embeddings=True)),  # q/k/v biases
}

# name -> (rank, alpha, target modules, rsLoRA)
ADAPTERS = {
    "alpha": (4, 8, ["q_proj", "v_proj"], False),
    "beta": (8, 16, ["k_proj", "o_proj", "gate_proj", "down_proj"], True),
}


def save_adapter(base, index, name, out_dir):
    rank, alpha, targets, rslora = ADAPTERS[name]
    torch.manual_seed(index + 1)
    adapted = get_peft_model(copy.deepcopy(base), LoraConfig(r=rank, lora_alpha=alpha, target_modules=targets,
                                                             use_rslora=rslora, init_lora_weights=False)).eval()
    adapted.save_pretrained(out_dir)
    return adapted


def adapters_for(model_dir, out):
    base = AutoModelForCausalLM.from_pretrained(model_dir, torch_dtype=torch.float32).eval()
    for index, name in enumerate(ADAPTERS):
        save_adapter(base, index, name, os.path.join(out, name))


def main():
    if sys.argv[1] == "--adapters":
        adapters_for(sys.argv[2], sys.argv[3])
        return
    out = sys.argv[1]
    torch.manual_seed(0)
    tokens = [int(t) for t in torch.randint(0, VOCAB, (N_TOKENS,))]
    cases = []
    for family, (config_cls, model_cls, extra) in FAMILIES.items():
        config = config_cls(vocab_size=VOCAB, hidden_size=64, intermediate_size=96, num_hidden_layers=2,
                            num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128,
                            rms_norm_eps=1e-5, rope_theta=10000.0, **extra)
        base = model_cls(config).eval()
        model_dir = os.path.join(out, family, "model")
        base.save_pretrained(model_dir, safe_serialization=True)
        ids = torch.tensor([tokens])
        with torch.no_grad():
            base.forward(ids).logits[0].numpy().astype("<f4").tofile(os.path.join(out, f"{family}.base.logits.f32"))
        adapters = []
        for name, (rank, alpha, targets, rslora) in ADAPTERS.items():
            adapter_dir = os.path.join(out, family, name)
            adapted = save_adapter(base, len(adapters), name, adapter_dir)
            with torch.no_grad():
                logits = adapted(input_ids=ids).logits[0]
            logits.numpy().astype("<f4").tofile(os.path.join(out, f"{family}.{name}.logits.f32"))
            adapters.append({"name": name, "dir": adapter_dir, "rank": rank, "targets": targets,
                             "logits": os.path.join(out, f"{family}.{name}.logits.f32")})
        cases.append({"family": family, "model": model_dir, "tokens": tokens, "vocab": VOCAB,
                      "base_logits": os.path.join(out, f"{family}.base.logits.f32"), "adapters": adapters})
    with open(os.path.join(out, "cases.json"), "w") as f:
        json.dump(cases, f, indent=2)


if __name__ == "__main__":
    main()
