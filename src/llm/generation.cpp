#include "llm/generation.h"

#include <algorithm>
#include <chrono>

#include "core/error.h"
#include "core/log.h"

namespace genai {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// The whole conversation so far as prompt text, ending where the model's next reply starts.
std::string conversation_text(ChatFormat format, const GenerationOptions& o, const std::vector<TurnResult>& done,
                              const std::string& next_prompt, const Tokenizer& tok) {
  if (format == ChatFormat::kNone) {
    std::string text = o.system_prompt;
    for (const TurnResult& t : done) text += t.prompt + tok.decode(t.tokens);
    return text + next_prompt;
  }
  std::vector<ChatTurn> turns;
  if (!o.system_prompt.empty()) turns.push_back({"system", o.system_prompt});
  for (const TurnResult& t : done) {
    turns.push_back({"user", t.prompt});
    turns.push_back({"assistant", tok.decode(t.tokens)});
  }
  turns.push_back({"user", next_prompt});
  // The model's own template says which system prompt it inserts when none is given (SmolLM2
  // names itself, Qwen2.5 has its own, others none); without a stored template use the default.
  if (!tok.chat_template().empty())
    return apply_chat_template(format, turns, chat_default_system_prompt(tok.chat_template()));
  return apply_chat_template(format, turns);
}


// Token ids of the conversation text. A template that already spells the BOS out (Llama 3's
// "<|begin_of_text|>", ChatML when the BOS is <|im_start|>) must not end up with two.
std::vector<int32_t> encode_conversation(const Tokenizer& tok, const std::string& text) {
  std::vector<int32_t> ids = tok.encode(text, tok.add_bos_by_default(), /*parse_special=*/true);
  const int32_t bos = tok.bos_id();
  if (bos >= 0 && ids.size() >= 2 && ids[0] == bos && ids[1] == bos) ids.erase(ids.begin());
  return ids;
}

}  // namespace

std::string_view stop_reason_name(StopReason r) {
  switch (r) {
    case StopReason::kStopToken:
      return "stop_token";
    case StopReason::kMaxNewTokens:
      return "max_new_tokens";
    case StopReason::kContextFull:
      return "context_full";
  }
  return "unknown";
}

GenerationResult generate(DecoderSession& session, const Tokenizer& tok, ChatFormat format,
                          const GenerationOptions& options, const TextSink& sink) {
  if (options.prompts.empty()) throw_input_error("--prompt: at least one prompt is required");
  if (options.max_new_tokens < 0) throw_input_error("--max_new_tokens must be >= 0, got {}", options.max_new_tokens);
  if (session.vocab_size() < tok.vocab_size())
    log::warn("tokenizer has {} tokens but the model only {} logits", tok.vocab_size(), session.vocab_size());
  Sampler sampler(options.sampler);
  std::vector<int32_t> stop_ids = tok.stop_ids();
  auto is_stop = [&](int32_t id) { return std::find(stop_ids.begin(), stop_ids.end(), id) != stop_ids.end(); };

  GenerationResult result;
  GenerationStats& stats = result.stats;
  std::vector<int32_t> cached;  // the tokens in the session's cache, in order
  session.reset();

  for (size_t turn_index = 0; turn_index < options.prompts.size(); ++turn_index) {
    TurnResult turn;
    turn.prompt = options.prompts[turn_index];
    const std::vector<int32_t> ids =
        encode_conversation(tok, conversation_text(format, options, result.turns, turn.prompt, tok));
    if (ids.empty()) throw_input_error("--prompt: turn {} encodes to no tokens", turn_index + 1);
    if (static_cast<int64_t>(ids.size()) > session.max_context())
      throw_input_error("--prompt: the prompt{} is {} tokens, more than the context of {} tokens",
                        options.prompts.size() > 1 ? fmt::format(" up to turn {}", turn_index + 1) : "", ids.size(),
                        session.max_context());

    // Keep the cache when it holds a prefix of the new prompt; otherwise start over.
    const bool extends = cached.size() < ids.size() && std::equal(cached.begin(), cached.end(), ids.begin()) &&
                         session.position() == static_cast<int64_t>(cached.size());
    if (!extends) {
      session.reset();
      cached.clear();
    }
    const std::span<const int32_t> fresh = std::span(ids).subspan(cached.size());
    turn.prompt_tokens = static_cast<int64_t>(fresh.size());
    stats.prompt_tokens += turn.prompt_tokens;

    const auto prefill_start = Clock::now();
    std::span<const float> logits = session.forward(fresh);
    stats.prefill_ms += ms_since(prefill_start);
    cached.insert(cached.end(), fresh.begin(), fresh.end());

    StreamDecoder stream(tok, cached.back());
    auto emit = [&](const std::string& piece) {
      if (piece.empty()) return;
      turn.text += piece;
      if (sink) sink(piece);
    };
    turn.stop_reason = StopReason::kMaxNewTokens;
    while (static_cast<int64_t>(turn.tokens.size()) < options.max_new_tokens) {
      const int32_t next = sampler.sample(logits);
      if (turn_index == 0 && turn.tokens.empty()) stats.ttft_ms = ms_since(prefill_start);
      if (is_stop(next)) {
        turn.stop_reason = StopReason::kStopToken;
        break;
      }
      turn.tokens.push_back(next);
      emit(stream.push(next));
      if (static_cast<int64_t>(turn.tokens.size()) == options.max_new_tokens) break;
      if (session.position() >= session.max_context()) {
        turn.stop_reason = StopReason::kContextFull;
        break;
      }
      const auto step_start = Clock::now();
      logits = session.forward(std::span(&next, 1));
      stats.decode_ms += ms_since(step_start);
      ++stats.decode_steps;
      cached.push_back(next);
    }
    emit(stream.flush());
    stats.generated_tokens += static_cast<int64_t>(turn.tokens.size());
    if (turn_index > 0) result.text += "\n";
    result.text += turn.text;
    result.tokens.insert(result.tokens.end(), turn.tokens.begin(), turn.tokens.end());
    if (sink && turn_index + 1 < options.prompts.size()) sink("\n");
    result.turns.push_back(std::move(turn));
  }
  return result;
}

}  // namespace genai
