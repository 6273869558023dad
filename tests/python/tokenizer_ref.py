#!/usr/bin/env python3
"""Reference tokenizations for tests/tokenizer: the Python `tokenizers` and `sentencepiece`
packages, driven from the same vocabulary data the C++ side uses. Prints one JSON object.

Modes:
  gguf-bpe GGUF CORPUS [--save-json OUT]   byte-level BPE built from the GGUF's tokens/merges with
                                           SmolLM2's pre-tokenizer (Digits + ByteLevel)
  bpe-config TOKENIZER_JSON PRESET CORPUS [--save-json OUT]
                                           vocab/merges of a tokenizer.json, pre-tokenizer built
                                           here from PRESET (gpt2, smollm, llama3, qwen2, gpt-4o); OUT gets
                                           that tokenizer plus a BOS template and <|eot_id|>
  load-json TOKENIZER_JSON CORPUS          tokenizers.Tokenizer.from_file
  spm-train CORPUS PREFIX VOCAB_SIZE       trains a sentencepiece BPE model (PREFIX.model)
  spm MODEL CORPUS                         sentencepiece encode/decode + the model's pieces
  gemma-json MODEL OUT_DIR                 the sentencepiece model as Gemma's tokenizer.json
                                           (transformers' GemmaTokenizer: " " -> "▁", byte fallback)
  gemma-gguf TOKENIZER_JSON OUT            that tokenizer.json's vocabulary in a GGUF file the way
                                           llama.cpp's converter keeps Gemma 4's (tokenizer.ggml.model
                                           gemma4: tokens, token types, merges; add_bos)
Output: {"ids": [[...], ...], "decoded": [...], ...}
"""
import json
import sys

LLAMA3_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|"
                r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN2_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}|"
               r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")

GPT4O_REGEX = (r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|"
               r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|"
               r"\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+")


def load_corpus(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def pre_tokenizer_for(preset):
    from tokenizers import Regex, pre_tokenizers as pt
    if preset in ("gpt2", "default"):
        return pt.ByteLevel(add_prefix_space=False, use_regex=True), False
    if preset == "smollm":
        return pt.Sequence([pt.Digits(individual_digits=True),
                            pt.ByteLevel(add_prefix_space=False, use_regex=True)]), False
    if preset in ("llama3", "llama-bpe"):
        return pt.Sequence([pt.Split(Regex(LLAMA3_REGEX), behavior="isolated", invert=False),
                            pt.ByteLevel(add_prefix_space=False, use_regex=False)]), True
    if preset == "qwen2":
        return pt.Sequence([pt.Split(Regex(QWEN2_REGEX), behavior="isolated", invert=False),
                            pt.ByteLevel(add_prefix_space=False, use_regex=False)]), False
    if preset == "gpt-4o":
        return pt.Sequence([pt.Split(Regex(GPT4O_REGEX), behavior="isolated", invert=False),
                            pt.ByteLevel(add_prefix_space=False, use_regex=False)]), False
    raise SystemExit(f"unknown preset {preset}")


def build_bpe(tokens, merges, special_ids, preset):
    from tokenizers import AddedToken, Tokenizer, decoders, models
    vocab = {t: i for i, t in enumerate(tokens)}
    pre, ignore_merges = pre_tokenizer_for(preset)
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges, ignore_merges=ignore_merges))
    tok.pre_tokenizer = pre
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens([AddedToken(tokens[i], special=True, normalized=False) for i in special_ids])
    return tok


def run_hf(tok, corpus):
    ids = [tok.encode(s, add_special_tokens=False).ids for s in corpus]
    decoded = [tok.decode(x, skip_special_tokens=False) for x in ids]
    return {"ids": ids, "decoded": decoded}


def gguf_bpe(path, corpus, save_json):
    from gguf import GGUFReader
    r = GGUFReader(path)

    def strings(key):
        f = r.fields[key]
        return [bytes(f.parts[i]).decode("utf-8") for i in f.data]

    tokens = strings("tokenizer.ggml.tokens")
    merges = [tuple(m.split(" ", 1)) for m in strings("tokenizer.ggml.merges")]
    f = r.fields["tokenizer.ggml.token_type"]
    types = [int(f.parts[i][0]) for i in f.data]
    tok = build_bpe(tokens, merges, [i for i, t in enumerate(types) if t == 3], "smollm")
    if save_json:
        tok.save(save_json)
    return run_hf(tok, corpus)


def bpe_config(path, preset, corpus, save_json=None):
    with open(path, encoding="utf-8") as f:
        j = json.load(f)
    vocab = j["model"]["vocab"]
    tokens = [None] * len(vocab)
    for t, i in vocab.items():
        tokens[i] = t
    merges = [tuple(m) if isinstance(m, list) else tuple(m.split(" ", 1)) for m in j["model"]["merges"]]
    specials = [a["id"] for a in j.get("added_tokens", []) if a.get("special")]
    tok = build_bpe(tokens, merges, specials, preset)
    if save_json:
        # A Llama-3-like file: a BOS template post-processor and a special token beyond model.vocab.
        from tokenizers import AddedToken, processors
        bos = tokens[1]
        tok.post_processor = processors.TemplateProcessing(single=f"{bos} $A", pair=f"{bos} $A {bos} $B",
                                                           special_tokens=[(bos, 1)])
        tok.add_special_tokens([AddedToken("<|eot_id|>", special=True, normalized=False)])
        tok.save(save_json)
    return run_hf(tok, corpus)


def load_json(path, corpus):
    from tokenizers import Tokenizer
    return run_hf(Tokenizer.from_file(path), corpus)


def spm_train(corpus, prefix, vocab_size):
    import sentencepiece as spm
    lines = [line for s in corpus for line in s.split("\n") if line.strip()]
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(lines), model_prefix=prefix, vocab_size=vocab_size, model_type="bpe",
        byte_fallback=True, character_coverage=0.98, normalization_rule_name="identity",
        remove_extra_whitespaces=False, add_dummy_prefix=True, hard_vocab_limit=False,
        split_digits=False, minloglevel=2)
    return {"model": prefix + ".model"}


def spm_run(model, corpus):
    import sentencepiece as spm
    sp = spm.SentencePieceProcessor(model_file=model)
    ids = [sp.encode(s) for s in corpus]
    n = sp.get_piece_size()
    types = []
    for i in range(n):
        if sp.is_unknown(i):
            types.append(2)
        elif sp.is_control(i):
            types.append(3)
        elif sp.is_byte(i):
            types.append(6)
        elif sp.is_unused(i):
            types.append(5)
        else:
            types.append(1)
    return {"ids": ids, "decoded": [sp.decode(x) for x in ids],
            "pieces": [sp.id_to_piece(i) for i in range(n)],
            "scores": [sp.get_score(i) for i in range(n)], "types": types,
            "bos_id": sp.bos_id(), "eos_id": sp.eos_id(), "unk_id": sp.unk_id()}


def gemma_json(model, out_dir):
    from tokenizers.models import BPE
    from transformers.convert_slow_tokenizer import SentencePieceExtractor
    from transformers.models.gemma.tokenization_gemma import GemmaTokenizer
    extracted = SentencePieceExtractor(model).extract(BPE)
    tok = GemmaTokenizer(vocab=extracted["vocab"], merges=extracted["merges"], unk_token="<unk>", bos_token="<s>",
                         eos_token="</s>", pad_token="<unk>", mask_token="<unk>")
    tok.save_pretrained(out_dir)
    return {"path": out_dir + "/tokenizer.json"}


def gemma_gguf(tokenizer_json, out):
    from gguf import GGUFWriter, TokenType
    j = json.load(open(tokenizer_json))
    vocab = j["model"]["vocab"]
    tokens = [None] * (max(vocab.values()) + 1)
    for t, i in vocab.items():
        tokens[i] = t
    types = [TokenType.NORMAL] * len(tokens)
    for a in j["added_tokens"]:
        types[a["id"]] = TokenType.CONTROL if a["special"] else TokenType.USER_DEFINED
    for i, t in enumerate(tokens):
        if len(t) == 6 and t.startswith("<0x") and t.endswith(">"):
            types[i] = TokenType.BYTE
    merges = [m if isinstance(m, str) else " ".join(m) for m in j["model"]["merges"]]
    w = GGUFWriter(out, "gemma4")
    w.add_tokenizer_model("gemma4")
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges(merges)
    w.add_bos_token_id(vocab.get("<s>", 1))
    w.add_eos_token_id(vocab.get("</s>", 2))
    w.add_add_bos_token(True)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return {"path": out}


def main(argv):
    if len(argv) < 2:
        raise SystemExit(__doc__)
    mode = argv[1]
    if mode == "gguf-bpe":
        save = argv[argv.index("--save-json") + 1] if "--save-json" in argv else None
        out = gguf_bpe(argv[2], load_corpus(argv[3]), save)
    elif mode == "bpe-config":
        save = argv[argv.index("--save-json") + 1] if "--save-json" in argv else None
        out = bpe_config(argv[2], argv[3], load_corpus(argv[4]), save)
    elif mode == "load-json":
        out = load_json(argv[2], load_corpus(argv[3]))
    elif mode == "spm-train":
        out = spm_train(load_corpus(argv[2]), argv[3], int(argv[4]))
    elif mode == "spm":
        out = spm_run(argv[2], load_corpus(argv[3]))
    elif mode == "gemma-json":
        out = gemma_json(argv[2], argv[3])
    elif mode == "gemma-gguf":
        out = gemma_gguf(argv[2], argv[3])
    else:
        raise SystemExit(f"unknown mode {mode}\n{__doc__}")
    json.dump(out, sys.stdout, ensure_ascii=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv)
