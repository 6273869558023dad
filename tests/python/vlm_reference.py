"""Test-side reference: a tiny random-weight vision-language model (SmolVLM or InternVL) run by
transformers (PyTorch). Usage: vlm_reference.py smolvlm|internvl OUT_DIR

Writes OUT_DIR/model (save_pretrained, float32, with the image processor's preprocessor_config.json),
OUT_DIR/image.png, and from the processor's pixel values of that image:
  features.f32  the connector's output per tile, [tiles * tokens_per_tile, text_hidden] float32
  logits.f32    the logits of one forward over a token sequence whose <image> tokens take those
                features, [tokens, vocab] float32
  case.json     tokens, tiles, rows, cols, tokens_per_tile, text_hidden, vocab, image_token_id
"""
import json
import os
import sys

import numpy as np
import torch
from PIL import Image
from transformers import InternVLConfig, InternVLForConditionalGeneration, SmolVLMConfig, SmolVLMForConditionalGeneration
from transformers.models.got_ocr2.image_processing_pil_got_ocr2 import GotOcr2ImageProcessorPil
from transformers.models.smolvlm.image_processing_pil_smolvlm import SmolVLMImageProcessorPil

IMAGE_TOKEN = 300


def smolvlm():
    config = SmolVLMConfig(
        vision_config=dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
                           image_size=64, patch_size=16),
        text_config=dict(model_type="llama", hidden_size=64, intermediate_size=160, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, vocab_size=320, max_position_embeddings=256,
                         rope_theta=10000.0, rms_norm_eps=1e-5, tie_word_embeddings=False),
        scale_factor=2, image_token_id=IMAGE_TOKEN, tie_word_embeddings=False)
    processor = SmolVLMImageProcessorPil(size={"longest_edge": 128}, max_image_size={"longest_edge": 64}, resample=1)
    return SmolVLMForConditionalGeneration(config).eval(), processor, {"return_row_col_info": True}


def internvl():
    # InternVL3's features (CLS token, layer scales, exact GELU, the LayerNorm-MLP projector) on a
    # Qwen2 text model, in tiles of 56 pixels: patches of 14, 4 tokens per tile.
    config = InternVLConfig(
        vision_config=dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
                           image_size=[56, 56], patch_size=[14, 14], attention_bias=True),
        text_config=dict(model_type="qwen2", hidden_size=64, intermediate_size=160, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, vocab_size=320, max_position_embeddings=256,
                         rope_theta=1000000.0, rms_norm_eps=1e-6),
        image_token_id=IMAGE_TOKEN, downsample_ratio=0.5, image_seq_length=4, tie_word_embeddings=False)
    processor = GotOcr2ImageProcessorPil(size={"height": 56, "width": 56}, max_patches=6,
                                         image_mean=[0.485, 0.456, 0.406], image_std=[0.229, 0.224, 0.225])
    return InternVLForConditionalGeneration(config).eval(), processor, {"crop_to_patches": True}


def main():
    family, out = sys.argv[1], sys.argv[2]
    torch.manual_seed(0)
    model, processor, call = {"smolvlm": smolvlm, "internvl": internvl}[family]()
    config = model.config
    with torch.no_grad():  # every tensor perturbed: norms off 1, biases off 0
        for p in model.parameters():
            p.add_(0.05 * torch.randn_like(p))
    model_dir = os.path.join(out, "model")
    model.save_pretrained(model_dir)
    processor.save_pretrained(model_dir)

    rng = np.random.default_rng(7)
    h, w = 75, 100
    y, x = np.mgrid[0:h, 0:w]
    base = np.stack([x * 255 // (w - 1), y * 255 // (h - 1), (x + y) * 127 // (h + w - 2)], -1)
    pixels = np.clip(base + rng.integers(-40, 41, size=(h, w, 3)), 0, 255).astype(np.uint8)
    Image.fromarray(pixels).save(os.path.join(out, "image.png"))
    with Image.open(os.path.join(out, "image.png")) as im:
        processed = processor(images=[[im.convert("RGB")]], return_tensors="pt", **call)
    pixel_values = processed["pixel_values"]  # smolvlm [1, tiles, 3, M, M], internvl [tiles, 3, M, M]
    tiles = pixel_values.shape[-4]

    with torch.no_grad():
        features = model.model.get_image_features(pixel_values=pixel_values)
        if not torch.is_tensor(features):  # transformers 5: an output object whose pooler_output is the features
            features = features.pooler_output
        if isinstance(features, (list, tuple)):
            features = torch.cat([f.reshape(-1, config.text_config.hidden_size) for f in features])
        features = features.reshape(-1, config.text_config.hidden_size)
        per_tile = features.shape[0] // tiles
        tokens = [1, 17, 18]
        for t in range(tiles):  # a marker token, then the tile's <image> tokens, as the processor lays them out
            tokens += [40 + t] + [IMAGE_TOKEN] * per_tile
        tokens += [9, 10, 11, 12]
        logits = model(input_ids=torch.tensor([tokens]), pixel_values=pixel_values).logits[0]
    features.numpy().astype("<f4").tofile(os.path.join(out, "features.f32"))
    logits.numpy().astype("<f4").tofile(os.path.join(out, "logits.f32"))
    with open(os.path.join(out, "case.json"), "w") as f:
        json.dump({"tokens": tokens, "tiles": int(tiles), "tokens_per_tile": int(per_tile),
                   "text_hidden": config.text_config.hidden_size, "vocab": config.text_config.vocab_size,
                   "image_token_id": IMAGE_TOKEN}, f)


if __name__ == "__main__":
    main()
