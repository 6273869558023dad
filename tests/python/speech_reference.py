"""Test-side reference: a tiny random-weight Granite Speech run by transformers (PyTorch).
Usage: speech_reference.py OUT_DIR

Writes OUT_DIR/model (save_pretrained, float32, with the feature extractor's
preprocessor_config.json), OUT_DIR/clip.wav (16 kHz mono PCM), and from that clip (the extractor
as speech_features_reference.py runs it):
  features.f32  the projector's output, [audio tokens, text_hidden] float32
  logits.f32    the logits of one forward over a token sequence whose <|audio|> tokens take them
  text_logits.f32  the logits of a text-only sequence (the text model alone)
  lora_logits.f32  the merged sequence's logits with a random PEFT LoRA adapter on the text model's
                q_proj and v_proj (as Granite Speech ships one), the model and adapter in
                OUT_DIR/model_lora (has_lora_adapter true, adapter_config.json,
                adapter_model.safetensors); PEFT runs the adapter unmerged
  case.json     tokens, audio_tokens, rows (the extractor's feature rows), text_hidden, vocab, audio_token_id
"""
import json
import os
import shutil
import sys

import numpy as np
import torch

from speech_features_reference import extractor, wav_bytes

AUDIO_TOKEN = 300
TEXT_TOKENS = [1, 17, 18, 9, 10, 11, 12]  # the text model alone


def main():
    out = sys.argv[1]
    ex = extractor()
    from transformers import GraniteSpeechConfig, GraniteSpeechForConditionalGeneration
    config = GraniteSpeechConfig(
        encoder_config=dict(input_dim=160, num_layers=4, hidden_dim=32, feedforward_mult=2, num_heads=2, dim_head=16,
                            output_dim=12, context_size=20, max_pos_emb=24, conv_kernel_size=5, conv_expansion_factor=2),
        projector_config=dict(model_type="blip_2_qformer", hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                              intermediate_size=64, encoder_hidden_size=32, cross_attention_frequency=1),
        text_config=dict(model_type="granite", hidden_size=64, intermediate_size=160, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, vocab_size=320, embedding_multiplier=12.0,
                         residual_multiplier=0.22, attention_multiplier=1.0 / 16, logits_scaling=8.0,
                         max_position_embeddings=512, tie_word_embeddings=False),
        audio_token_index=AUDIO_TOKEN, window_size=15, downsample_rate=5, has_lora_adapter=False,
        tie_word_embeddings=False)  # an output head of its own, saved with the model
    torch.manual_seed(0)
    model = GraniteSpeechForConditionalGeneration(config).eval()
    with torch.no_grad():  # every tensor perturbed, BatchNorm's statistics off 0 and 1
        for p in model.parameters():
            p.add_(0.05 * torch.randn_like(p))
        for name, b in model.named_buffers():
            if name.endswith("running_mean"):
                b.copy_(0.1 * torch.randn_like(b))
            elif name.endswith("running_var"):
                b.copy_(0.5 + torch.rand_like(b))
    model_dir = os.path.join(out, "model")
    model.save_pretrained(model_dir)
    ex.save_pretrained(model_dir)

    n = 16000 + 5000  # 1.3 s: 66 feature rows, the last attention block partly filled
    t = np.arange(n) / 16000.0
    rng = np.random.default_rng(3)
    x = np.clip(0.3 * np.sin(2 * np.pi * 300 * t) + 0.05 * rng.standard_normal(n), -0.99, 0.99)
    raw, back = wav_bytes(x, 16000, 1, 16)
    with open(os.path.join(out, "clip.wav"), "wb") as f:
        f.write(raw)
    extracted = ex([back])
    features_in = extracted["input_features"]
    audio_tokens = int(extracted["audio_embed_sizes"][0])
    with torch.no_grad():
        projected = model.get_audio_features(features_in)
        if not torch.is_tensor(projected):
            projected = projected.pooler_output if getattr(projected, "pooler_output", None) is not None else projected[0]
        projected = projected.reshape(-1, config.text_config.hidden_size)[:audio_tokens]
        tokens = [1, 17, 18] + [AUDIO_TOKEN] * audio_tokens + [9, 10, 11, 12]
        logits = model(input_ids=torch.tensor([tokens]), input_features=features_in,
                       input_features_mask=extracted["input_features_mask"]).logits[0]
        text_logits = model(input_ids=torch.tensor([TEXT_TOKENS])).logits[0]
    lora_dir = os.path.join(out, "model_lora")
    shutil.copytree(model_dir, lora_dir)
    with open(os.path.join(lora_dir, "config.json")) as f:
        lora_config = json.load(f)
    lora_config["has_lora_adapter"] = True
    with open(os.path.join(lora_dir, "config.json"), "w") as f:
        json.dump(lora_config, f, indent=2)
    from peft import LoraConfig, get_peft_model
    torch.manual_seed(1)
    adapted = get_peft_model(model, LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"],
                                               init_lora_weights=False)).eval()  # B random, not zero
    adapted.save_pretrained(lora_dir)
    with torch.no_grad():
        lora_logits = adapted(input_ids=torch.tensor([tokens]), input_features=features_in,
                              input_features_mask=extracted["input_features_mask"]).logits[0]
    lora_logits.numpy().astype("<f4").tofile(os.path.join(out, "lora_logits.f32"))
    text_logits.numpy().astype("<f4").tofile(os.path.join(out, "text_logits.f32"))
    projected.numpy().astype("<f4").tofile(os.path.join(out, "features.f32"))
    logits.numpy().astype("<f4").tofile(os.path.join(out, "logits.f32"))
    with open(os.path.join(out, "case.json"), "w") as f:
        json.dump({"tokens": tokens, "text_tokens": TEXT_TOKENS, "audio_tokens": audio_tokens, "rows": int(features_in.shape[1]),
                   "text_hidden": config.text_config.hidden_size, "vocab": config.text_config.vocab_size,
                   "audio_token_id": AUDIO_TOKEN}, f)


if __name__ == "__main__":
    main()
