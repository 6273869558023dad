"""Test-side reference: transformers' GraniteSpeechFeatureExtractor on WAV files this script writes.
Usage: speech_features_reference.py OUT_DIR

torchaudio has no build for the torch the tests install, so its MelSpectrogram transform (the one
piece of torchaudio the extractor uses) is stood in for by torchaudio's own definition: torch.stft
(periodic Hann window, centred, reflect padding, power 2) and melscale_fbanks (HTK scale, no
normalisation). Everything after it (log10, the floor, the scaling, dropping an odd frame, stacking
pairs, the audio token count) is the extractor's code.

Writes OUT_DIR/<case>.wav, OUT_DIR/<case>.f32 (input_features [rows, 160] float32) and
OUT_DIR/cases.json: [{wav, rows, width, audio_tokens, values}].
"""
import importlib.machinery
import json
import math
import os
import struct
import sys
import types

import numpy as np
import torch


class MelSpectrogram(torch.nn.Module):
    def __init__(self, sample_rate, n_fft, win_length, hop_length, n_mels):
        super().__init__()
        self.n_fft, self.win, self.hop = n_fft, win_length, hop_length
        self.register_buffer("window", torch.hann_window(win_length, periodic=True))
        freqs = torch.linspace(0, sample_rate // 2, n_fft // 2 + 1)
        mel = lambda f: 2595.0 * math.log10(1.0 + f / 700.0)
        m_pts = torch.linspace(mel(0.0), mel(float(sample_rate // 2)), n_mels + 2)
        f_pts = 700.0 * (10 ** (m_pts / 2595.0) - 1.0)
        f_diff = f_pts[1:] - f_pts[:-1]
        slopes = f_pts.unsqueeze(0) - freqs.unsqueeze(1)
        down = (-1.0 * slopes[:, :-2]) / f_diff[:-1]
        up = slopes[:, 2:] / f_diff[1:]
        self.register_buffer("fb", torch.max(torch.zeros(1), torch.min(down, up)))

    def forward(self, x):
        spec = torch.stft(x, self.n_fft, self.hop, self.win, self.window, center=True, pad_mode="reflect",
                          normalized=False, onesided=True, return_complex=True).abs().pow(2.0)
        return torch.matmul(spec.transpose(-1, -2), self.fb).transpose(-1, -2)


def extractor():
    shim = types.ModuleType("torchaudio")
    shim.__spec__ = importlib.machinery.ModuleSpec("torchaudio", None)
    shim.transforms = types.SimpleNamespace(MelSpectrogram=MelSpectrogram)
    sys.modules["torchaudio"] = shim
    import transformers.utils.import_utils as iu
    iu.BACKENDS_MAPPING["torchaudio"] = (lambda: True, "")
    import transformers.models.granite_speech.feature_extraction_granite_speech as fe
    fe.is_torchaudio_available = lambda: True
    fe.torchaudio = shim
    return fe.GraniteSpeechFeatureExtractor()


def wav_bytes(samples, rate, fmt, bits, extensible=False):
    """A RIFF/WAVE file of mono `samples` (float in [-1, 1)), and the floats a reader gets back."""
    if fmt == 3:
        data = samples.astype("<f4" if bits == 32 else "<f8").tobytes()
        back = samples.astype(np.float32 if bits == 32 else np.float64).astype(np.float32)
    else:
        scale = 2 ** (bits - 1)
        q = np.clip(np.round(samples * scale), -scale, scale - 1).astype(np.int64)
        back = (q / scale).astype(np.float32)
        if bits == 8:
            data = (q + 128).astype(np.uint8).tobytes()
        elif bits == 24:
            data = b"".join(int(v).to_bytes(3, "little", signed=True) for v in q)
        else:
            data = q.astype("<i2" if bits == 16 else "<i4").tobytes()
    block = bits // 8
    if extensible:
        guid = struct.pack("<H", fmt) + b"\x00\x00\x00\x00\x10\x00\x80\x00\x00\xaa\x00\x38\x9b\x71"
        fmt_chunk = struct.pack("<HHIIHHHHI", 0xFFFE, 1, rate, rate * block, block, bits, 22, bits, 4) + guid
    else:
        fmt_chunk = struct.pack("<HHIIHH", fmt, 1, rate, rate * block, block, bits)
    body = b"WAVE" + b"fmt " + struct.pack("<I", len(fmt_chunk)) + fmt_chunk
    body += b"LIST" + struct.pack("<I", 3) + b"abc\x00"  # an odd-sized chunk we skip (padded to even)
    body += b"data" + struct.pack("<I", len(data)) + data + (b"\x00" if len(data) % 2 else b"")
    return b"RIFF" + struct.pack("<I", len(body)) + body, back


def main():
    out = sys.argv[1]
    ex = extractor()
    rng = np.random.default_rng(5)
    cases = []
    specs = {"pcm16": (1, 16, False, 37000), "pcm8": (1, 8, False, 16000), "pcm24": (1, 24, False, 20123),
             "float32": (3, 32, False, 24001), "float64": (3, 64, False, 9000), "extensible16": (1, 16, True, 16160),
             "quiet_tail": (1, 16, False, 30000)}
    for name, (fmt, bits, extensible, n) in specs.items():
        t = np.arange(n) / 16000.0
        x = 0.3 * np.sin(2 * np.pi * 440 * t) * np.sin(2 * np.pi * 3 * t) + 0.05 * rng.standard_normal(n)
        if name == "quiet_tail":
            x[n // 2:] *= 1e-4  # floored at the clip's maximum minus 8
        x = np.clip(x, -0.99, 0.99)
        raw, back = wav_bytes(x, 16000, fmt, bits, extensible)
        with open(os.path.join(out, name + ".wav"), "wb") as f:
            f.write(raw)
        result = ex([back])
        values = result["input_features"][0].numpy().astype("<f4")
        values.tofile(os.path.join(out, name + ".f32"))
        cases.append({"wav": name + ".wav", "rows": int(values.shape[0]), "width": int(values.shape[1]),
                      "audio_tokens": int(result["audio_embed_sizes"][0]), "values": name + ".f32"})
    with open(os.path.join(out, "cases.json"), "w") as f:
        json.dump(cases, f, indent=1)


if __name__ == "__main__":
    main()
