// Small but usable vocabularies for synthetic models (`genai synth`): every byte is encodable,
// common English words merge into few tokens, and the special tokens real models have exist.
#pragma once

#include <cstdint>

#include "tokenizer/vocab.h"

namespace genai {

// Smallest vocab_size the synthetic vocabularies accept (256 byte tokens + 3 special tokens).
inline constexpr int32_t kMinSyntheticVocabSize = 259;

// Byte-level BPE vocabulary of exactly `vocab_size` tokens: the 256 byte tokens (GPT-2 byte
// alphabet), merges learned by a BPE trainer on an embedded English text (GPT-2 pre-tokenizer),
// the special tokens <|endoftext|> (id 0), <|im_start|> (id 1, bos) and <|im_end|> (id 2, eos)
// laid out as in SmolLM2, and unused filler tokens "<|filler_N|>" once the text runs out of merges.
// Same (vocab_size, seed) -> same vocabulary; the seed breaks ties between equally frequent pairs
// during training.
// vocab_size < kMinSyntheticVocabSize is an InputError naming "vocab_size".
BpeVocab make_synthetic_bpe_vocab(int32_t vocab_size, uint64_t seed);

// SentencePiece-style scored vocabulary of exactly `vocab_size` pieces: <unk>, <s>, </s> at ids
// 0, 1, 2, the 256 byte-fallback pieces <0x00>..<0xFF> at ids 3..258 (the llama layout), then
// pieces learned by the same trainer ("▁" marks word starts) with descending scores, then
// unreachable filler pieces. Deterministic in (vocab_size, seed).
SpmVocab make_synthetic_spm_vocab(int32_t vocab_size, uint64_t seed);

}  // namespace genai
