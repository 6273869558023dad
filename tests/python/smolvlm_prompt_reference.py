"""Test-side reference: the token ids transformers gives a SmolVLM prompt with images, from a
folder `genai synth --arch smolvlm` wrote. Usage: smolvlm_prompt_reference.py MODEL_DIR OUT_JSON IMAGE...

The steps SmolVLMProcessor composes (its class needs torchvision for its video side, which the
test environment does not install): the tokenizer's chat template over one user message with an
image item per image and the text, the image processor's tile grid per image, each "<image>"
replaced by get_image_prompt_string (the processor's own expansion), then the tokenizer.
Writes {"text": ..., "ids": [...], "tiles": n}.
"""
import json
import sys

from PIL import Image
from transformers import AutoTokenizer
from transformers.models.smolvlm.image_processing_pil_smolvlm import SmolVLMImageProcessorPil
from transformers.models.smolvlm.processing_smolvlm import get_image_prompt_string

PROMPT = "What is in these pictures?"


def main():
    model_dir, out, images = sys.argv[1], sys.argv[2], sys.argv[3:]
    tok = AutoTokenizer.from_pretrained(model_dir)
    processor = SmolVLMImageProcessorPil.from_pretrained(model_dir)
    with open(f"{model_dir}/config.json") as f:
        config = json.load(f)
    vc = config["vision_config"]
    seq_len = (vc["image_size"] // vc["patch_size"]) ** 2 // config["scale_factor"] ** 2
    content = [{"type": "image"} for _ in images] + [{"type": "text", "text": PROMPT}]
    text = tok.apply_chat_template([{"role": "user", "content": content}], add_generation_prompt=True, tokenize=False)
    pictures = [Image.open(p).convert("RGB") for p in images]
    processed = processor(images=[pictures], return_row_col_info=True)
    parts = text.split("<image>")
    expanded = parts[0]
    for i, part in enumerate(parts[1:]):
        expanded += get_image_prompt_string(processed["rows"][0][i], processed["cols"][0][i], seq_len,
                                            "<fake_token_around_image>", "<image>", "<global-img>") + part
    ids = tok(expanded, add_special_tokens=True)["input_ids"]
    with open(out, "w") as f:
        json.dump({"text": expanded, "ids": ids, "tiles": int(len(processed["pixel_values"][0]))}, f)


if __name__ == "__main__":
    main()
