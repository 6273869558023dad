#include "llm/generation.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "llm/generation_report.h"
#include "llm/reference_session.h"
#include "support/random_model.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/factory.h"

namespace genai {
namespace {

// Byte-level BPE without merges, SmolLM2's special-token layout: <|endoftext|> 0, <|im_start|> 1
// (bos), <|im_end|> 2 (eos), then byte b at id 3 + b.
std::unique_ptr<Tokenizer> byte_tokenizer() {
  BpeVocab v;
  v.tokens = {"<|endoftext|>", "<|im_start|>", "<|im_end|>"};
  v.types.assign(3, TokenType::kControl);
  for (int b = 0; b < 256; ++b) {
    v.tokens.push_back(byte_level::byte_to_chars(static_cast<uint8_t>(b)));
    v.types.push_back(TokenType::kNormal);
  }
  v.pre_tokenizer = "gpt2";
  v.bos_id = 1;
  v.eos_id = 2;
  return make_bpe_tokenizer(std::move(v));
}
int32_t byte_id(char c) { return 3 + static_cast<uint8_t>(c); }
constexpr int32_t kImEnd = 2;

// A decoder whose k-th forward call (counted from reset) makes script[k] the most likely next
// token; it records every token it was fed, to check what the loop sends.
class ScriptedSession : public DecoderSession {
 public:
  ScriptedSession(std::vector<int32_t> script, int64_t context) : script_(std::move(script)), context_(context) {}
  std::span<const float> forward(std::span<const int32_t> tokens) override {
    if (position() + static_cast<int64_t>(tokens.size()) > context_) throw InputError("scripted: context exceeded");
    fed_.insert(fed_.end(), tokens.begin(), tokens.end());
    ++calls_;
    logits_.assign(vocab_size(), 0.0f);
    logits_[script_.at(step_++)] = 10.0f;
    return logits_;
  }
  int64_t position() const override { return static_cast<int64_t>(fed_.size()); }
  int64_t max_context() const override { return context_; }
  int32_t vocab_size() const override { return 259; }
  void reset() override { fed_.clear(); }

  std::vector<int32_t> fed_;
  int calls_ = 0;

 private:
  std::vector<int32_t> script_;
  size_t step_ = 0;
  int64_t context_;
  std::vector<float> logits_;
};

GenerationOptions options(std::vector<std::string> prompts, int64_t max_new, float temperature, uint64_t seed = 0) {
  GenerationOptions o;
  o.prompts = std::move(prompts);
  o.max_new_tokens = max_new;
  o.sampler = SamplerConfig{.temperature = temperature, .top_p = 0.9f, .seed = seed};
  return o;
}

ModelConfig byte_model_config() {
  ModelConfig c = testing::small_config();
  c.vocab_size = 259;
  return c;
}

TEST(Generation, GreedyIsDeterministicAndFollowsTheArgmax) {
  const auto tok = byte_tokenizer();
  const ModelConfig c = byte_model_config();
  const Weights w = testing::random_weights(c, 17);
  ReferenceSession session(c, w);
  const auto a = generate(session, *tok, ChatFormat::kNone, options({"hello there"}, 12, 0.0f));
  const auto b = generate(session, *tok, ChatFormat::kNone, options({"hello there"}, 12, 0.0f, 5));
  EXPECT_EQ(a.tokens, b.tokens);  // the seed does not matter at temperature 0
  ASSERT_FALSE(a.tokens.empty());

  // The same by hand: prefill, then feed back the argmax.
  ReferenceDecoder d(c, w);
  std::vector<int32_t> ids;
  for (char ch : std::string("hello there")) ids.push_back(byte_id(ch));
  std::vector<float> logits = d.forward_last(ids);
  std::vector<int32_t> expected;
  const auto stops = tok->stop_ids();
  while (expected.size() < 12) {
    const int32_t next = argmax(logits);
    if (std::find(stops.begin(), stops.end(), next) != stops.end()) break;
    expected.push_back(next);
    logits = d.forward_last(std::vector<int32_t>{next});
  }
  EXPECT_EQ(a.tokens, expected);
  EXPECT_EQ(a.stats.prompt_tokens, 11);
  EXPECT_EQ(a.stats.generated_tokens, static_cast<int64_t>(a.tokens.size()));
}

TEST(Generation, SeedReproducesSampling) {
  const auto tok = byte_tokenizer();
  const ModelConfig c = byte_model_config();
  const Weights w = testing::random_weights(c, 4);
  ReferenceSession session(c, w);
  auto run = [&](uint64_t seed) {
    auto o = options({"abc"}, 24, 1.0f, seed);
    o.sampler.top_p = 1.0f;
    return generate(session, *tok, ChatFormat::kNone, o).tokens;
  };
  const auto first = run(1);
  EXPECT_EQ(first, run(1));
  EXPECT_NE(first, run(2));
}

TEST(Generation, StopsAtStopTokenAndStreamsTheSameText) {
  const auto tok = byte_tokenizer();
  ScriptedSession session({byte_id('H'), byte_id('i'), kImEnd, byte_id('x')}, 100);
  std::string streamed;
  const auto r = generate(session, *tok, ChatFormat::kNone, options({"Say hi"}, 50, 0.0f),
                          [&](std::string_view s) { streamed += s; });
  EXPECT_EQ(r.tokens, (std::vector<int32_t>{byte_id('H'), byte_id('i')}));
  EXPECT_EQ(r.text, "Hi");
  EXPECT_EQ(streamed, "Hi");
  ASSERT_EQ(r.turns.size(), 1u);
  EXPECT_EQ(r.turns[0].stop_reason, StopReason::kStopToken);
  EXPECT_EQ(r.stats.decode_steps, 2);  // H and i fed back; the stop token is not
  EXPECT_EQ(session.fed_.size(), 6u + 2u);
  const auto j = generation_json(r, 1.0);
  EXPECT_EQ(j["text"], "Hi");
  EXPECT_EQ(j["prompt_tokens"], 6);
  EXPECT_EQ(j["turns"][0]["prompt_ids"], nlohmann::json(std::vector<int32_t>(session.fed_.begin(), session.fed_.begin() + 6)));
  EXPECT_EQ(j["stats"]["generated_tokens"], 2);
  EXPECT_EQ(j["stop_reason"], "stop_token");
}

TEST(Generation, HonoursMaxNewTokens) {
  const auto tok = byte_tokenizer();
  ScriptedSession session(std::vector<int32_t>(10, byte_id('a')), 100);
  const auto r = generate(session, *tok, ChatFormat::kNone, options({"go"}, 3, 0.0f));
  EXPECT_EQ(r.text, "aaa");
  EXPECT_EQ(r.turns[0].stop_reason, StopReason::kMaxNewTokens);
  EXPECT_EQ(r.stats.decode_steps, 2);
}

TEST(Generation, PromptLongerThanContextFailsBeforeAnyWork) {
  const auto tok = byte_tokenizer();
  ScriptedSession session(std::vector<int32_t>(10, byte_id('a')), 8);
  EXPECT_THROW(generate(session, *tok, ChatFormat::kNone, options({"way too long a prompt"}, 3, 0.0f)), InputError);
  EXPECT_EQ(session.calls_, 0);
  // And with the real decoder.
  ModelConfig c = byte_model_config();
  c.max_positions = 16;
  ReferenceSession ref(c, testing::random_weights(c, 1));
  try {
    generate(ref, *tok, ChatFormat::kNone, options({std::string(40, 'z')}, 3, 0.0f));
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("context of 16"), std::string::npos) << e.what();
  }
  EXPECT_EQ(ref.position(), 0);
}

TEST(Generation, StopsWhenTheContextIsFull) {
  const auto tok = byte_tokenizer();
  ScriptedSession session(std::vector<int32_t>(20, byte_id('a')), 8);
  const auto r = generate(session, *tok, ChatFormat::kNone, options({"12345"}, 100, 0.0f));
  // 5 prompt positions + 3 decoded = 8; the 4th sampled token is returned but never fed.
  EXPECT_EQ(r.tokens.size(), 4u);
  EXPECT_EQ(r.turns[0].stop_reason, StopReason::kContextFull);
  EXPECT_EQ(session.position(), 8);
}

TEST(Generation, MultiTurnChatKeepsTheCacheAndAppendsReplies) {
  const auto tok = byte_tokenizer();
  ScriptedSession session({byte_id('H'), byte_id('i'), kImEnd, byte_id('O'), byte_id('k'), kImEnd}, 4096);
  auto o = options({"Hello", "Again"}, 10, 0.0f);
  o.system_prompt = "Be brief.";
  const auto r = generate(session, *tok, ChatFormat::kChatML, o);
  ASSERT_EQ(r.turns.size(), 2u);
  EXPECT_EQ(r.turns[0].text, "Hi");
  EXPECT_EQ(r.turns[1].text, "Ok");
  EXPECT_EQ(r.text, "Hi\nOk");

  // Everything fed = the full two-turn conversation (with the first reply as an assistant turn)
  // followed by the second reply's fed-back tokens.
  const std::string conversation = apply_chat_template(
      ChatFormat::kChatML, {{"system", "Be brief."}, {"user", "Hello"}, {"assistant", "Hi"}, {"user", "Again"}});
  std::vector<int32_t> expected = tok->encode(conversation, false, true);
  expected.push_back(byte_id('O'));
  expected.push_back(byte_id('k'));
  ASSERT_EQ(session.fed_.size(), expected.size()) << tok->decode(session.fed_) << "\n----\n" << tok->decode(expected);
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(session.fed_[i], expected[i]) << "token " << i;
  EXPECT_EQ(expected.front(), 1);  // starts with <|im_start|> once, no doubled bos
  EXPECT_NE(expected[1], 1);
  // The second turn only prefilled what the first had not already put in the cache.
  EXPECT_EQ(r.stats.prompt_tokens, r.turns[0].prompt_tokens + r.turns[1].prompt_tokens);
  // Fed: turn 1 prompt, "H" "i" (the stop token is not fed), turn 2's new tokens, "O" "k".
  EXPECT_EQ(r.turns[0].prompt_tokens + 2 + r.turns[1].prompt_tokens + 2, static_cast<int64_t>(expected.size()));
  // Each turn reports the ids it prefilled: the first the conversation so far, the second only its tail.
  EXPECT_EQ(r.turns[0].prompt_ids, std::vector<int32_t>(expected.begin(), expected.begin() + r.turns[0].prompt_tokens));
  EXPECT_EQ(r.turns[1].prompt_ids,
            std::vector<int32_t>(expected.end() - 2 - r.turns[1].prompt_tokens, expected.end() - 2));
}

}  // namespace
}  // namespace genai
