"""Test-side reference: the token ids transformers gives a vision-language prompt with images, from
a folder `genai synth --arch smolvlm|internvl3` wrote.
Usage: vlm_prompt_reference.py MODEL_DIR OUT_JSON IMAGE...

The steps the family's processor (SmolVLMProcessor, InternVLProcessor) composes; their classes
need torchvision for their video side, which the test environment does not install: the
tokenizer's chat template over one user message with an image item per image and the text, the
image processor's tiles per image, each image placeholder replaced as the processor's
replace_image_token does (SmolVLM: get_image_prompt_string, the processor's own function;
InternVL: <img> + <IMG_CONTEXT> x tokens per tile x tiles + </img>), then the tokenizer.
Writes {"text": ..., "ids": [...], "tiles": n}.
"""
import json
import sys

from PIL import Image
from transformers import AutoTokenizer

PROMPT = "What is in these pictures?"


def main():
    model_dir, out, images = sys.argv[1], sys.argv[2], sys.argv[3:]
    tok = AutoTokenizer.from_pretrained(model_dir)
    with open(f"{model_dir}/config.json") as f:
        config = json.load(f)
    vc = config["vision_config"]
    size = lambda v: v[0] if isinstance(v, list) else v
    per_side = size(vc["image_size"]) // size(vc["patch_size"])
    content = [{"type": "image"} for _ in images] + [{"type": "text", "text": PROMPT}]
    text = tok.apply_chat_template([{"role": "user", "content": content}], add_generation_prompt=True, tokenize=False)
    pictures = [Image.open(p).convert("RGB") for p in images]
    if config["model_type"] == "internvl":
        from transformers.models.got_ocr2.image_processing_pil_got_ocr2 import GotOcr2ImageProcessorPil
        processed = GotOcr2ImageProcessorPil.from_pretrained(model_dir)(images=pictures, crop_to_patches=True)
        seq_len = per_side ** 2 * int(round(config["downsample_ratio"] ** 2 * 1e6)) // 1000000
        placeholder = "<IMG_CONTEXT>"
        expansions = ["<img>" + "<IMG_CONTEXT>" * (seq_len * n) + "</img>" for n in processed["num_patches"]]
        tiles = sum(processed["num_patches"])
    else:
        from transformers.models.smolvlm.image_processing_pil_smolvlm import SmolVLMImageProcessorPil
        from transformers.models.smolvlm.processing_smolvlm import get_image_prompt_string
        processed = SmolVLMImageProcessorPil.from_pretrained(model_dir)(images=[pictures], return_row_col_info=True)
        seq_len = per_side ** 2 // config["scale_factor"] ** 2
        placeholder = "<image>"
        expansions = [get_image_prompt_string(processed["rows"][0][i], processed["cols"][0][i], seq_len,
                                              "<fake_token_around_image>", "<image>", "<global-img>")
                      for i in range(len(pictures))]
        tiles = len(processed["pixel_values"][0])
    parts = text.split(placeholder)
    expanded = parts[0]
    for i, part in enumerate(parts[1:]):
        expanded += expansions[i] + part
    ids = tok(expanded, add_special_tokens=True)["input_ids"]
    with open(out, "w") as f:
        json.dump({"text": expanded, "ids": ids, "tiles": int(tiles)}, f)


if __name__ == "__main__":
    main()
