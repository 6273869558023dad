"""Test-side reference: transformers' InternVL image processor (GotOcr2ImageProcessorPil, as
InternVLProcessor calls it: crop_to_patches=True) on the images smolvlm_image_reference.py writes.
Usage: internvl_image_reference.py OUT_DIR

Per (image, config) case the processor's pixel_values as raw float32 (OUT_DIR/<case>.f32) and
OUT_DIR/cases.json: [{image, config, tiles, values}].
"""
import json
import os
import sys

import numpy as np
from PIL import Image
from transformers.models.got_ocr2.image_processing_pil_got_ocr2 import GotOcr2ImageProcessorPil

from smolvlm_image_reference import write_images

CONFIGS = {
    # InternVL3's settings (ImageNet mean and std, BICUBIC), at a tile size a test can afford
    "internvl3": {"size": {"height": 32, "width": 32}, "resample": 3, "min_patches": 1, "max_patches": 12,
                  "image_mean": [0.485, 0.456, 0.406], "image_std": [0.229, 0.224, 0.225],
                  "rescale_factor": 0.00392156862745098},
    "few_patches": {"size": {"height": 24, "width": 24}, "resample": 3, "min_patches": 2, "max_patches": 4},
}


def main():
    out = sys.argv[1]
    images = write_images(out)
    cases = []
    for iname, file in images.items():
        for cname, config in CONFIGS.items():
            proc = GotOcr2ImageProcessorPil(**config)
            with Image.open(os.path.join(out, file)) as im:
                result = proc(images=[im], crop_to_patches=True, return_tensors="np")
            values = np.asarray(result["pixel_values"], dtype=np.float32)
            name = f"{iname}_{cname}"
            values.astype("<f4").tofile(os.path.join(out, name + ".f32"))
            cases.append({"image": file, "config": config, "tiles": int(values.shape[0]), "values": name + ".f32"})
    with open(os.path.join(out, "cases.json"), "w") as f:
        json.dump(cases, f)


if __name__ == "__main__":
    main()
