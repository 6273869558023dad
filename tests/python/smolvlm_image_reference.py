"""Test-side reference: transformers' SmolVLM image processor (its Pillow path) on images this
script writes. Usage: smolvlm_image_reference.py OUT_DIR

Writes OUT_DIR/<name>.png|jpg, and per (image, config) case the processor's pixel_values as raw
float32 (OUT_DIR/<case>.f32) and OUT_DIR/cases.json: [{image, config, rows, cols, shape, values}].
"""
import json
import os
import sys

import numpy as np
from PIL import Image
from transformers.models.smolvlm.image_processing_pil_smolvlm import SmolVLMImageProcessorPil


def pattern(h, w, seed):
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w]
    base = np.stack([x * 255 // max(w - 1, 1), y * 255 // max(h - 1, 1), (x + y) * 127 // max(h + w - 2, 1)], -1)
    noise = rng.integers(-40, 41, size=(h, w, 3))
    return np.clip(base + noise, 0, 255).astype(np.uint8)


def write_images(out):
    images = {}
    Image.fromarray(pattern(157, 203, 1)).save(os.path.join(out, "rgb.png"))
    images["rgb"] = "rgb.png"
    Image.fromarray(pattern(260, 190, 2)).save(os.path.join(out, "photo.jpg"), quality=90)
    images["jpeg"] = "photo.jpg"
    Image.fromarray(pattern(90, 120, 3)[:, :, 0]).save(os.path.join(out, "grey.png"))
    images["grey"] = "grey.png"
    rgba = np.concatenate([pattern(67, 101, 4), pattern(67, 101, 5)[:, :, :1]], -1)
    Image.fromarray(rgba, "RGBA").save(os.path.join(out, "rgba.png"))
    images["rgba"] = "rgba.png"
    pal = Image.fromarray(pattern(50, 70, 6)).quantize(colors=16)
    pal.save(os.path.join(out, "palette.png"), transparency=3)
    images["palette"] = "palette.png"
    return images


CONFIGS = {
    "lanczos_split": {"size": {"longest_edge": 96}, "max_image_size": {"longest_edge": 32}, "resample": 1,
                      "do_image_splitting": True, "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5],
                      "rescale_factor": 0.00392156862745098},
    "bicubic_split": {"size": {"longest_edge": 80}, "max_image_size": {"longest_edge": 48}, "resample": 3,
                      "image_mean": [0.48145466, 0.4578275, 0.40821073],
                      "image_std": [0.26862954, 0.26130258, 0.27577711]},
    "no_split": {"size": {"longest_edge": 64}, "max_image_size": {"longest_edge": 40}, "resample": 1,
                 "do_image_splitting": False},
}


def main():
    out = sys.argv[1]
    images = write_images(out)
    cases = []
    for iname, file in images.items():
        for cname, config in CONFIGS.items():
            proc = SmolVLMImageProcessorPil(**config)
            with Image.open(os.path.join(out, file)) as im:
                result = proc(images=[[im]], return_row_col_info=True)
            values = np.asarray(result["pixel_values"], dtype=np.float32)[0]
            case = f"{iname}_{cname}"
            values.tofile(os.path.join(out, case + ".f32"))
            cases.append({"image": file, "config": config, "rows": int(result["rows"][0][0]),
                          "cols": int(result["cols"][0][0]), "shape": list(values.shape), "values": case + ".f32"})
    with open(os.path.join(out, "cases.json"), "w") as f:
        json.dump(cases, f, indent=1)


if __name__ == "__main__":
    main()
