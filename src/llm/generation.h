// The generation loop: prompt text -> (chat template) -> tokens -> prefill -> sample/decode until
// a stop token, the token budget or the context end. Several prompts are the user turns of one
// conversation; each reply becomes an assistant turn before the next user turn, and the KV cache
// is kept across turns whenever the new prompt extends the tokens already in it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llm/decoder_session.h"
#include "llm/generation_stats.h"
#include "llm/lookahead_decoding.h"
#include "core/sampler.h"
#include "tokenizer/chat_template.h"
#include "tokenizer/tokenizer.h"

namespace genai {

// Images (--image_path) or audio clips (--audio_path) of the first turn: the prompt gets one
// `content_item` per item ahead of its text (what the model's chat template writes for one:
// SmolVLM "<image>", InternVL "<IMG_CONTEXT>\n", Granite Speech "<|audio|>"); after the template
// each `placeholder` becomes that item's `expansions` entry (its tokens, as the model's processor
// lays them out), and the encoder's `features` replace those tokens' embeddings in order.
struct PromptMedia {
  std::string content_item = "<image>";
  std::string placeholder = "<image>";
  std::vector<std::string> expansions;  // one per item
  int32_t token_id = -1;                // the token the features replace (an image or audio token)
  std::vector<float> features;          // [media tokens, dim]
  int64_t dim = 0;
  int64_t tiles = 0;                    // image tiles encoded (stats)
};

struct GenerationOptions {
  std::vector<std::string> prompts;  // user turns, in order (at least one)
  std::string system_prompt;         // chat models: a system turn first; base models: text prefix
  int64_t max_new_tokens = 128;      // per turn
  SamplerConfig sampler;
  // Lookahead decoding (the session must take token trees: TreeDecoderSession); absent: one
  // token per decode call.
  std::optional<LookaheadOptions> lookahead = std::nullopt;
  std::optional<PromptMedia> media = std::nullopt;
};

enum class StopReason { kStopToken, kMaxNewTokens, kContextFull };
std::string_view stop_reason_name(StopReason r);  // "stop_token", "max_new_tokens", "context_full"

struct TurnResult {
  std::string prompt;
  std::string text;             // the reply as streamed
  std::vector<int32_t> tokens;  // generated ids, stop token excluded
  int64_t prompt_tokens = 0;    // tokens prefilled for this turn
  std::vector<int32_t> prompt_ids;  // those tokens (what the cache did not already hold)
  StopReason stop_reason = StopReason::kMaxNewTokens;
};

struct GenerationResult {
  std::vector<TurnResult> turns;
  std::string text;             // replies of all turns, joined by "\n"
  std::vector<int32_t> tokens;  // generated ids of all turns
  GenerationStats stats;
};

// Receives generated text as it becomes complete UTF-8 (for streaming to a terminal).
using TextSink = std::function<void(std::string_view)>;

// One conversation on a session, a turn at a time (an interactive chat reads the next prompt
// after the last reply): each turn prefills only what the cache does not already hold — the
// template's text between the last reply and the new prompt — then generates the reply.
// `chat_format` kNone means plain text continuation. options.prompts is not used.
class Conversation {
 public:
  Conversation(DecoderSession& session, const Tokenizer& tokenizer, ChatFormat chat_format, GenerationOptions options);
  ~Conversation();
  // Runs one user turn, streaming the reply to `sink`. InputError, before any work, when the
  // conversation up to this prompt does not fit in the session's context.
  const TurnResult& turn(const std::string& prompt, const TextSink& sink = {});
  // The turns so far, their replies joined by "\n", and the stats.
  const GenerationResult& result() const { return result_; }
  // The next turn starts a new conversation (the turns so far stay in result(), out of the
  // prompt), on an empty cache.
  void start_over();

 private:
  bool is_stop(int32_t id) const;

  DecoderSession& session_;
  const Tokenizer& tok_;
  ChatFormat format_;
  GenerationOptions options_;
  Sampler sampler_;
  std::vector<int32_t> stop_ids_;
  std::unique_ptr<LookaheadDecoder> lookahead_;
  std::vector<int32_t> cached_;  // the tokens in the session's cache, in order
  GenerationResult result_;
  size_t history_begin_ = 0;  // the first of result_.turns in this conversation
};

// Runs options.prompts as the turns of one Conversation.
GenerationResult generate(DecoderSession& session, const Tokenizer& tokenizer, ChatFormat chat_format,
                          const GenerationOptions& options, const TextSink& sink = {});

}  // namespace genai
