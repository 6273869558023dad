"""Test-side reference: the token ids transformers gives a Granite Speech prompt with audio clips,
from a folder `genai synth --arch granite_speech` wrote.
Usage: speech_prompt_reference.py MODEL_DIR OUT_JSON WAV...

The model card's way: the tokenizer's chat template over one user message whose content is one
"<|audio|>" per clip ahead of the text, then GraniteSpeechProcessor (its feature extractor with
speech_features_reference's torchaudio stand-in) expands each placeholder to the clip's audio
token count and tokenizes. Writes {"text": ..., "ids": [...], "audio_tokens": [n per clip]}.
"""
import json
import os
import sys
import wave

import numpy as np
import torch
from transformers import AutoTokenizer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from speech_features_reference import extractor  # noqa: E402

PROMPT = "What is said in these clips?"


def read_pcm16(path):
    with wave.open(path, "rb") as w:
        assert w.getsampwidth() == 2 and w.getnchannels() == 1, path
        data = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2")
    return torch.from_numpy(data.astype(np.float32) / 32768.0)


def main():
    model_dir, out, clips = sys.argv[1], sys.argv[2], sys.argv[3:]
    from transformers.models.granite_speech.processing_granite_speech import GraniteSpeechProcessor
    tok = AutoTokenizer.from_pretrained(model_dir)
    if tok.pad_token is None:  # the processor pads its batch (one text here: no padding happens)
        tok.pad_token = tok.eos_token
    processor = GraniteSpeechProcessor(audio_processor=extractor(), tokenizer=tok)
    content = "<|audio|>" * len(clips) + PROMPT
    text = tok.apply_chat_template([{"role": "user", "content": content}], add_generation_prompt=True, tokenize=False)
    audio = [read_pcm16(p) for p in clips]
    features = processor.audio_processor(audio)
    inputs = processor(text, audio)
    ids = [int(i) for i in inputs["input_ids"][0]]
    with open(out, "w") as f:
        json.dump({"text": text, "ids": ids, "audio_tokens": [int(n) for n in features["audio_embed_sizes"]]}, f)


if __name__ == "__main__":
    main()
