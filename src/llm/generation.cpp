#include "llm/generation.h"

#include <algorithm>
#include <chrono>

#include "core/error.h"
#include "core/log.h"
#include "llm/media_embeddings.h"
#include "llm/lookahead_decoding.h"

namespace genai {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// Each placeholder of `text` replaced by its item's expansion, in order. InputError when the text
// holds more placeholders than there are items (a prompt that spells one out).
std::string expand_media_placeholders(const std::string& text, const PromptMedia& media) {
  std::string out;
  size_t from = 0, item = 0;
  for (size_t at; (at = text.find(media.placeholder, from)) != std::string::npos; from = at + media.placeholder.size()) {
    if (item == media.expansions.size())
      throw_input_error("--prompt: the conversation holds more {} placeholders than the {} item(s) of --image_path / "
                        "--audio_path",
                        media.placeholder, media.expansions.size());
    out.append(text, from, at - from);
    out += media.expansions[item++];
  }
  return out + text.substr(from);
}

// The whole conversation so far as prompt text, ending where the model's next reply starts.
std::string conversation_text(ChatFormat format, const GenerationOptions& o, std::span<const TurnResult> done,
                              const std::string& next_prompt, const Tokenizer& tok) {
  // The first user turn carries the images or clips, as placeholders ahead of its text.
  std::string placeholders;
  if (o.media)
    for (size_t i = 0; i < o.media->expansions.size(); ++i) placeholders += o.media->content_item;
  auto user_text = [&](size_t turn, const std::string& prompt) { return turn == 0 ? placeholders + prompt : prompt; };
  std::string text;
  if (format == ChatFormat::kNone) {
    text = o.system_prompt;
    for (size_t i = 0; i < done.size(); ++i) text += user_text(i, done[i].prompt) + tok.decode(done[i].tokens);
    text += user_text(done.size(), next_prompt);
  } else {
    std::vector<ChatTurn> turns;
    if (!o.system_prompt.empty()) turns.push_back({"system", o.system_prompt});
    for (size_t i = 0; i < done.size(); ++i) {
      turns.push_back({"user", user_text(i, done[i].prompt)});
      turns.push_back({"assistant", tok.decode(done[i].tokens)});
    }
    turns.push_back({"user", user_text(done.size(), next_prompt)});
    // The model's own template says which system prompt it inserts when none is given (SmolLM2
    // names itself, Qwen2.5 has its own, others none); without a stored template use the default.
    text = !tok.chat_template().empty() ? apply_chat_template(format, turns, chat_default_system_prompt(tok.chat_template()))
                                        : apply_chat_template(format, turns);
  }
  return o.media ? expand_media_placeholders(text, *o.media) : text;
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

Conversation::Conversation(DecoderSession& session, const Tokenizer& tok, ChatFormat format, GenerationOptions options)
    : session_(session), tok_(tok), format_(format), options_(std::move(options)), sampler_(options_.sampler),
      stop_ids_(tok.stop_ids()) {
  if (options_.max_new_tokens < 0) throw_input_error("--max_new_tokens must be >= 0, got {}", options_.max_new_tokens);
  if (session.vocab_size() < tok.vocab_size())
    log::warn("tokenizer has {} tokens but the model only {} logits", tok.vocab_size(), session.vocab_size());
  if (options_.lookahead) {
    auto* tree = dynamic_cast<TreeDecoderSession*>(&session);
    if (!tree)
      throw_input_error("--model_mode lookahead runs on static graphs: compiled programs, or a checkpoint with "
                        "--model_mode (not the float reference forward)");
    lookahead_ = std::make_unique<LookaheadDecoder>(*tree, *options_.lookahead, options_.sampler.seed);
  }
  session_.reset();
}

Conversation::~Conversation() = default;

bool Conversation::is_stop(int32_t id) const {
  return std::find(stop_ids_.begin(), stop_ids_.end(), id) != stop_ids_.end();
}

void Conversation::start_over() {
  history_begin_ = result_.turns.size();
  session_.reset();
  cached_.clear();
}

const TurnResult& Conversation::turn(const std::string& prompt, const TextSink& sink) {
  const size_t turn_index = result_.turns.size();
  GenerationStats& stats = result_.stats;
  TurnResult turn;
  turn.prompt = prompt;
  const std::vector<int32_t> ids = encode_conversation(tok_, conversation_text(format_, options_, std::span(result_.turns).subspan(history_begin_), prompt, tok_));
  if (ids.empty()) throw_input_error("--prompt: turn {} encodes to no tokens", turn_index + 1);
  if (static_cast<int64_t>(ids.size()) > session_.max_context())
    throw_input_error("--prompt: the prompt{} is {} tokens, more than the context of {} tokens",
                      turn_index > 0 ? fmt::format(" up to turn {}", turn_index + 1) : "", ids.size(),
                      session_.max_context());

  // Keep the cache when it holds a prefix of the new prompt; otherwise start over.
  const bool extends = cached_.size() < ids.size() && std::equal(cached_.begin(), cached_.end(), ids.begin()) &&
                       session_.position() == static_cast<int64_t>(cached_.size());
  if (!extends) {
    session_.reset();
    cached_.clear();
  }
  const std::span<const int32_t> fresh = std::span(ids).subspan(cached_.size());
  turn.prompt_tokens = static_cast<int64_t>(fresh.size());
  turn.prompt_ids.assign(fresh.begin(), fresh.end());
  stats.prompt_tokens += turn.prompt_tokens;

  // The image tokens in this prefill (the first turn's, or all of them after a reset) take the
  // encoder's features.
  const bool media_here = options_.media && std::find(fresh.begin(), fresh.end(), options_.media->token_id) != fresh.end();
  const EmbeddingRows replaced =
      media_here ? media_embedding_rows(fresh, options_.media->token_id, options_.media->features, options_.media->dim)
                  : EmbeddingRows{};
  const auto prefill_start = Clock::now();
  std::span<const float> logits = media_here ? session_.forward_replacing(fresh, replaced) : session_.forward(fresh);
  stats.prefill_ms += ms_since(prefill_start);
  cached_.insert(cached_.end(), fresh.begin(), fresh.end());
  if (lookahead_) lookahead_->start(cached_, extends);

  StreamDecoder stream(tok_, cached_.back());
  auto emit = [&](const std::string& piece) {
    if (piece.empty()) return;
    turn.text += piece;
    if (sink) sink(piece);
  };
  const int64_t max_new = options_.max_new_tokens;
  turn.stop_reason = StopReason::kMaxNewTokens;
  int32_t next = max_new > 0 ? sampler_.sample(logits) : 0;
  if (turn_index == 0 && max_new > 0) stats.ttft_ms = ms_since(prefill_start);
  while (static_cast<int64_t>(turn.tokens.size()) < max_new) {
    if (is_stop(next)) {
      turn.stop_reason = StopReason::kStopToken;
      break;
    }
    turn.tokens.push_back(next);
    emit(stream.push(next));
    const int64_t budget = max_new - static_cast<int64_t>(turn.tokens.size());
    if (budget == 0) break;
    if (session_.position() >= session_.max_context()) {
      turn.stop_reason = StopReason::kContextFull;
      break;
    }
    const auto step_start = Clock::now();
    cached_.push_back(next);
    if (lookahead_) {
      // Up to ngram tokens from one call; all but the last are already in the cache.
      const std::vector<int32_t> got =
          lookahead_->step(cached_, sampler_, std::min(budget, session_.max_context() - session_.position()),
                           [this](int32_t id) { return is_stop(id); });
      stats.decode_ms += ms_since(step_start);
      ++stats.decode_steps;
      stats.decode_tokens += static_cast<int64_t>(got.size());
      for (size_t i = 0; i + 1 < got.size(); ++i) {
        turn.tokens.push_back(got[i]);
        emit(stream.push(got[i]));
        cached_.push_back(got[i]);
      }
      next = got.back();
    } else {
      logits = session_.forward(std::span(&next, 1));
      stats.decode_ms += ms_since(step_start);
      ++stats.decode_steps;
      ++stats.decode_tokens;
      next = sampler_.sample(logits);
    }
  }
  emit(stream.flush());
  stats.generated_tokens += static_cast<int64_t>(turn.tokens.size());
  if (turn_index > 0) result_.text += "\n";
  result_.text += turn.text;
  result_.tokens.insert(result_.tokens.end(), turn.tokens.begin(), turn.tokens.end());
  if (lookahead_) {
    stats.lookahead_calls = lookahead_->stats().calls;
    stats.lookahead_accepted = lookahead_->stats().accepted;
  }
  result_.turns.push_back(std::move(turn));
  return result_.turns.back();
}

GenerationResult generate(DecoderSession& session, const Tokenizer& tok, ChatFormat format,
                          const GenerationOptions& options, const TextSink& sink) {
  if (options.prompts.empty()) throw_input_error("--prompt: at least one prompt is required");
  Conversation conversation(session, tok, format, options);
  for (size_t i = 0; i < options.prompts.size(); ++i) {
    conversation.turn(options.prompts[i], sink);
    if (sink && i + 1 < options.prompts.size()) sink("\n");
  }
  return conversation.result();
}

}  // namespace genai
