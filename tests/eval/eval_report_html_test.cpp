// The quantization evaluation page: self-contained, escaped, well formed, deterministic.
#include "eval/eval_report_html.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

namespace genai {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
const char* const kSectionIds[] = {"summary", "overrides", "per-tensor", "ranges", "sensitivity"};

EvalReportPage sample_page() {
  EvalReportPage p;
  p.model = "models/SmolLM2-135M-Instruct.Q4_1.gguf";
  p.recipe = "16a4w_block:32 (+2 overrides)";
  p.techniques = {"range search: 20 candidates", "rotation: hadamard"};
  p.overrides = {{"lm_head.*", "16a8w"}, {"layers\\.0\\..*", "16a16w"}};
  p.eval_tokens = 200;
  p.eval_text = "built-in paragraph";
  p.sqnr_db = 18.25;
  p.perplexity_float = 9.5;
  p.perplexity_quantized = 10.25;
  p.top1_agreed = 171;
  p.quantize_seconds = 12.5;
  p.eval_seconds = 3.25;
  p.per_tensor = {{"layers.0.attn.q_proj", 31.5}, {"layers.0.attn.k_proj", 28.0}, {"layers.0.mlp.down_proj", 12.75},
                  {"lm_head", 24.0}};
  p.ranges = {{"layers.0.attn.q_proj", -3.5, 4.25, "uint16 scale 0.00012 zp 29000"},
              {"layers.0.mlp.down_proj", -220.0, 35.0, "uint16 scale 0.0039 zp 56000"},
              {"layers.0.mlp.act", 0.0, 0.002, "uint16 scale 3.1e-08 zp 0"}};
  p.sensitivity = {{"layers.0", 30.0}, {"layers.1", 21.5}, {"layers.2", 26.0}};
  return p;
}

// Non-finite and negative numbers everywhere a number is shown.
EvalReportPage awkward_numbers_page() {
  EvalReportPage p = sample_page();
  p.sqnr_db = kInf;
  p.perplexity_float = 0;  // the ratio divides by it
  p.perplexity_quantized = kInf;
  p.eval_tokens = 0;  // top-1 percentage divides by it
  p.top1_agreed = 0;
  p.per_tensor = {
      {"exact_tensor", kInf}, {"worse_than_nothing", -3.5}, {"unmeasured", kNan}, {"negative_forever", -kInf}};
  p.ranges.push_back({"blown_up", -kInf, kInf, "uint16"});
  p.ranges.push_back({"undefined", kNan, 1.0, "uint16"});
  p.sensitivity = {{"layers.0", kInf}, {"layers.1", -2.0}, {"layers.2", kNan}};
  return p;
}

size_t count(std::string_view text, std::string_view needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string_view::npos; at = text.find(needle, at + needle.size())) ++n;
  return n;
}

std::string lowercase(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// From the section's opening tag to the next section's; empty when the section is missing.
std::string_view section(std::string_view page, std::string_view id) {
  const size_t begin = page.find("<section id=\"" + std::string(id) + "\"");
  if (begin == std::string_view::npos) return {};
  const size_t end = page.find("</section>", begin);
  return page.substr(begin, end == std::string_view::npos ? std::string_view::npos : end - begin);
}

// From the section's first "<svg" to the following "</svg>"; empty when there is no chart.
std::string_view section_svg(std::string_view page, std::string_view id) {
  const std::string_view s = section(page, id);
  const size_t begin = s.find("<svg");
  const size_t end = s.find("</svg>", begin);
  if (begin == std::string_view::npos || end == std::string_view::npos) return {};
  return s.substr(begin, end - begin);
}

// Every attr="..." value in `text`, in order.
std::vector<std::string> attribute_values(std::string_view text, std::string_view attr) {
  std::vector<std::string> values;
  const std::string key = " " + std::string(attr) + "=\"";
  for (size_t at = text.find(key); at != std::string_view::npos; at = text.find(key, at + 1)) {
    const size_t begin = at + key.size();
    values.emplace_back(text.substr(begin, text.find('"', begin) - begin));
  }
  return values;
}

// A minimal well-formedness check: walks the tags and requires every opened element to be closed,
// innermost first. Skips <!DOCTYPE>, void elements and self-closing tags. Returns "" when the
// tags balance, otherwise what went wrong.
std::string tag_balance_error(std::string_view html) {
  const std::vector<std::string> kVoid = {"meta", "br", "hr"};
  std::vector<std::string> open;
  for (size_t lt = html.find('<'); lt != std::string_view::npos; lt = html.find('<', lt + 1)) {
    const size_t gt = html.find('>', lt);
    if (gt == std::string_view::npos) return "unterminated tag at offset " + std::to_string(lt);
    const std::string_view tag = html.substr(lt + 1, gt - lt - 1);
    if (tag.starts_with("!")) continue;
    const bool closing = tag.starts_with("/");
    const std::string_view rest = tag.substr(closing ? 1 : 0);
    const size_t name_end = std::min(rest.find_first_of(" \t\n/"), rest.size());
    const std::string name = lowercase(rest.substr(0, name_end));
    if (name.empty()) return "tag without a name at offset " + std::to_string(lt);
    if (closing) {
      if (open.empty()) return "</" + name + "> closes nothing";
      if (open.back() != name) return "</" + name + "> closes <" + open.back() + ">";
      open.pop_back();
    } else if (!tag.ends_with("/") && std::find(kVoid.begin(), kVoid.end(), name) == kVoid.end()) {
      open.push_back(name);
    }
  }
  return open.empty() ? "" : "<" + open.back() + "> is never closed";
}

std::string read_text(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<std::string> file_names(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// A fresh directory under the system temp dir, removed on destruction.
class ScratchDir {
 public:
  ScratchDir()
      : path_(std::filesystem::temp_directory_path() / ("genai_eval_report_html_" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() { std::filesystem::remove_all(path_); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

TEST(EvalReportHtml, PageHasDoctypeSectionsAndOneBarPerTensor) {
  const EvalReportPage p = sample_page();
  const std::string html = render_eval_report_html(p);
  EXPECT_TRUE(html.starts_with("<!DOCTYPE html>")) << html.substr(0, 80);
  EXPECT_EQ(count(html, "<html"), 1u);
  EXPECT_EQ(count(html, "<html lang=\"en\">"), 1u);
  EXPECT_EQ(count(html, "<meta charset=\"utf-8\">"), 1u);
  EXPECT_EQ(count(html, "<title>Quantization evaluation"), 1u);
  for (const char* id : kSectionIds) EXPECT_EQ(count(html, "id=\"" + std::string(id) + "\""), 1u) << id;

  const std::string_view svg = section_svg(html, "per-tensor");
  ASSERT_FALSE(svg.empty());
  EXPECT_EQ(count(svg, "<rect"), p.per_tensor.size());
  for (const auto& row : p.per_tensor)
    EXPECT_NE(svg.find("<title>" + row.name + ": "), std::string_view::npos) << row.name;
  EXPECT_FALSE(section_svg(html, "ranges").empty());
  EXPECT_FALSE(section_svg(html, "sensitivity").empty());

  // Self-contained: nothing runs and nothing is fetched.
  EXPECT_EQ(count(lowercase(html), "<script"), 0u);
  EXPECT_EQ(count(lowercase(html), "http"), 0u);
  EXPECT_EQ(count(html, "src="), 0u);
  for (const std::string& href : attribute_values(html, "href")) EXPECT_TRUE(href.starts_with("#")) << href;
}

TEST(EvalReportHtml, UserStringsAppearOnlyEscaped) {
  const std::string nasty = "a<b&\"c";
  EvalReportPage p = sample_page();
  p.model = nasty;
  p.recipe = "it's <b>bold</b>";
  p.techniques.push_back(nasty);
  p.overrides.push_back({nasty, nasty});
  p.eval_text = nasty;
  p.per_tensor.push_back({nasty, 5.0});
  p.ranges.push_back({nasty, -1.0, 1.0, nasty});
  p.sensitivity.push_back({nasty, 7.0});
  const std::string html = render_eval_report_html(p);

  EXPECT_EQ(html.find(nasty), std::string::npos);
  EXPECT_EQ(html.find("<b>"), std::string::npos);
  EXPECT_NE(html.find("a&lt;b&amp;&quot;c"), std::string::npos);
  EXPECT_NE(html.find("it&#39;s &lt;b&gt;bold&lt;/b&gt;"), std::string::npos);
  for (const char* id : kSectionIds)
    EXPECT_NE(section(html, id).find("a&lt;b&amp;&quot;c"), std::string_view::npos) << id;
}

TEST(EvalReportHtml, InfiniteAndNegativeSqnrRenderWithoutInfOrNan) {
  const EvalReportPage p = awkward_numbers_page();
  const std::string html = render_eval_report_html(p);
  // fmt spells non-finite doubles "inf" and "nan"; no word of the page's own text contains them.
  const std::string lower = lowercase(html);
  for (const std::string_view word : {"inf", "nan"}) {
    const size_t at = lower.find(word);
    EXPECT_EQ(at, std::string::npos) << "near: " << lower.substr(at - std::min<size_t>(at, 80), 160);
  }

  const std::string_view svg = section_svg(html, "per-tensor");
  EXPECT_EQ(count(svg, "<rect"), p.per_tensor.size());
  EXPECT_NE(svg.find("exact"), std::string_view::npos);
  EXPECT_NE(svg.find("-3.50 dB"), std::string_view::npos);
  for (const std::string_view id : {"per-tensor", "ranges", "sensitivity"}) {
    for (const std::string& w : attribute_values(section_svg(html, id), "width")) {
      EXPECT_FALSE(w.starts_with("-")) << id << " width " << w;
    }
    for (const std::string& x : attribute_values(section_svg(html, id), "x")) {
      EXPECT_FALSE(x.starts_with("-")) << id << " x " << x;
    }
  }
}

TEST(EvalReportHtml, TagsAreBalanced) {
  EvalReportPage empty;
  for (const EvalReportPage& p : {sample_page(), awkward_numbers_page(), empty}) {
    const std::string html = render_eval_report_html(p);
    EXPECT_EQ(tag_balance_error(html), "");
  }
  // The checker itself catches what it should.
  EXPECT_NE(tag_balance_error("<div><p></div></p>"), "");
  EXPECT_NE(tag_balance_error("<svg><rect></svg>"), "");
  EXPECT_EQ(tag_balance_error("<!DOCTYPE html><p><meta charset=\"utf-8\"><br><line x=\"1\"/></p>"), "");
}

TEST(EvalReportHtml, WriteProducesTheRenderedBytes) {
  const ScratchDir dir;
  const std::filesystem::path file = dir.path() / "eval.html";
  const EvalReportPage p = sample_page();
  write_eval_report_html(p, file);
  EXPECT_EQ(read_text(file), render_eval_report_html(p));

  // Overwriting replaces the file and leaves no temp file behind.
  const EvalReportPage awkward = awkward_numbers_page();
  write_eval_report_html(awkward, file);
  EXPECT_EQ(read_text(file), render_eval_report_html(awkward));
  EXPECT_EQ(file_names(dir.path()), std::vector<std::string>{"eval.html"});
}

TEST(EvalReportHtml, RenderingIsDeterministic) {
  for (const EvalReportPage& p : {sample_page(), awkward_numbers_page()}) {
    const EvalReportPage copy = p;
    EXPECT_EQ(render_eval_report_html(p), render_eval_report_html(p));
    EXPECT_EQ(render_eval_report_html(p), render_eval_report_html(copy));
  }
}

TEST(EvalReportHtml, EmptyListsSayNoneAndNotRun) {
  EvalReportPage p = sample_page();
  p.overrides.clear();
  p.sensitivity.clear();
  const std::string html = render_eval_report_html(p);
  EXPECT_NE(section(html, "overrides").find("<p>none</p>"), std::string_view::npos);
  EXPECT_EQ(section(html, "overrides").find("<table"), std::string_view::npos);
  EXPECT_NE(section(html, "sensitivity").find("not run"), std::string_view::npos);
  EXPECT_TRUE(section_svg(html, "sensitivity").empty());
}

TEST(EvalReportHtml, SensitivityIsOrderedWorstFirst) {
  const std::string html = render_eval_report_html(sample_page());  // layers.0 30 dB, layers.1 21.5, layers.2 26
  const std::string_view svg = section_svg(html, "sensitivity");
  const size_t l0 = svg.find("<title>layers.0: ");
  const size_t l1 = svg.find("<title>layers.1: ");
  const size_t l2 = svg.find("<title>layers.2: ");
  ASSERT_NE(l0, std::string_view::npos);
  ASSERT_NE(l1, std::string_view::npos);
  ASSERT_NE(l2, std::string_view::npos);
  EXPECT_LT(l1, l2);
  EXPECT_LT(l2, l0);
}

TEST(EvalReportHtml, FourHundredTensorsGiveATallChartWithFixedRows) {
  EvalReportPage p = sample_page();
  p.per_tensor.clear();
  for (int i = 0; i < 400; ++i)
    p.per_tensor.push_back({"layers." + std::to_string(i / 8) + ".op" + std::to_string(i % 8), 5.0 + (i % 37)});
  const std::string html = render_eval_report_html(p);
  const std::string_view svg = section_svg(html, "per-tensor");
  EXPECT_EQ(count(svg, "<rect"), 400u);
  const std::vector<std::string> heights = attribute_values(svg.substr(0, svg.find('>')), "height");
  ASSERT_EQ(heights.size(), 1u);
  EXPECT_GE(std::stod(heights[0]), 400 * 12.0);  // at least 12 px per row: every name stays readable
  EXPECT_EQ(tag_balance_error(html), "");
}

}  // namespace
}  // namespace genai
