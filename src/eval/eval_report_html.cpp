#include "eval/eval_report_html.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <span>
#include <string_view>

#include <fmt/format.h>

#include "core/atomic_file.h"
#include "core/html_escape.h"

namespace genai {
namespace {

template <typename... T>
void put(std::string& out, fmt::format_string<T...> format, T&&... args) {
  fmt::format_to(std::back_inserter(out), format, std::forward<T>(args)...);
}

// ---- Text ----------------------------------------------------------------------------------
// Every string from the caller goes through escape_html (core/html_escape.h). The *_html number
// helpers return markup (they may hold entities), so their results are inserted as they are,
// never escaped again.

// fmt would print "inf" and "nan", which read like a formatting bug; the page uses symbols.
std::string non_finite_html(double v) {
  if (std::isnan(v)) return "n/a";
  return v > 0 ? "&#8734;" : "&#8722;&#8734;";
}

// Negative zero would print as "-0.00"; it carries no meaning in a report.
double without_negative_zero(double v) { return v == 0 ? 0.0 : v; }

std::string fixed_html(double v, int decimals) {
  if (!std::isfinite(v)) return non_finite_html(v);
  return fmt::format("{:.{}f}", without_negative_zero(v), decimals);
}

std::string general_html(double v) {
  if (!std::isfinite(v)) return non_finite_html(v);
  return fmt::format("{:.4g}", without_negative_zero(v));
}

// An SQNR of +inf means the quantized values equal the float ones bit for bit.
std::string sqnr_html(double db) {
  if (std::isinf(db) && db > 0) return "exact";
  if (std::isnan(db)) return non_finite_html(db);
  return fixed_html(db, 2) + " dB";
}

std::string percent_html(int64_t part, int64_t whole) {
  if (whole <= 0) return "n/a";
  return fmt::format("{:.1f}%", 100.0 * static_cast<double>(part) / static_cast<double>(whole));
}

std::string ratio_html(double numerator, double denominator) {
  const double ratio = numerator / denominator;
  if (!(denominator > 0) || !std::isfinite(ratio)) return "n/a";
  return fmt::format("{:.4f}&times;", ratio);
}

bool is_utf8_continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// Long names would push the plot off the page. Both ends are kept because tensor names carry the
// layer near the front and the op near the back; the tooltip keeps the full name. Cuts land on
// UTF-8 character boundaries.
std::string shorten(std::string_view name, size_t max_bytes) {
  if (name.size() <= max_bytes) return std::string(name);
  size_t head = (max_bytes - 1) / 2;
  size_t tail = name.size() - (max_bytes - 1 - head);
  while (head > 0 && is_utf8_continuation(name[head])) --head;
  while (tail < name.size() && is_utf8_continuation(name[tail])) ++tail;
  return std::string(name.substr(0, head)) + "\u2026" + std::string(name.substr(tail));
}

// ---- Chart geometry --------------------------------------------------------------------------
// Every chart is one row per item at a fixed height, so 400 tensors give a tall chart with legible
// rows instead of squeezing them; the page scrolls. Columns: right-aligned names, the plot, and
// printed values. Tick labels repeat below the rows because the top axis scrolls away.

constexpr double kRowHeight = 14;
constexpr double kBarHeight = 10;
constexpr double kAxisBand = 32;      // axis title and tick labels above the rows, tick labels below
constexpr double kPlotWidth = 520;
constexpr double kCharWidth = 6.7;    // advance of the 11px monospace chart font
constexpr size_t kMaxLabelChars = 48;
constexpr double kMinTickGap = 46;    // room for a tick label such as "-0.0001"
constexpr double kSqnrValueWidth = 90;
constexpr double kNoValueWidth = 12;

struct RowChart {
  double label_width = 0;
  double value_width = 0;
  size_t rows = 0;

  double plot_left() const { return label_width; }
  double plot_right() const { return label_width + kPlotWidth; }
  double width() const { return plot_right() + value_width; }
  double rows_top() const { return kAxisBand; }
  double rows_bottom() const { return kAxisBand + static_cast<double>(rows) * kRowHeight; }
  double height() const { return rows_bottom() + kAxisBand; }
  double row_top(size_t i) const { return rows_top() + static_cast<double>(i) * kRowHeight; }
  double bar_top(size_t i) const { return row_top(i) + (kRowHeight - kBarHeight) / 2; }
  double text_baseline(size_t i) const { return row_top(i) + kRowHeight - 3; }
};

RowChart row_chart(std::span<const std::string_view> labels, double value_width) {
  size_t longest = 8;
  for (const std::string_view label : labels) longest = std::max(longest, std::min(label.size(), kMaxLabelChars));
  return RowChart{.label_width = 10 + static_cast<double>(longest) * kCharWidth, .value_width = value_width,
                  .rows = labels.size()};
}

// Data value to x. linthresh 0 is a linear axis; otherwise a symmetric log axis that is linear
// within +-linthresh, so activation ranges from 1e-3 to 1e3 are all visible on one axis.
struct Scale {
  double lo = 0, hi = 1;
  double linthresh = 0;

  double warp(double v) const {
    if (linthresh == 0) return v;
    return std::copysign(std::log10(1 + std::abs(v) / linthresh), v);
  }
  // Clamped to the plot: +-inf (a capped bar) ends at the axis edge.
  double x(double v, const RowChart& chart) const {
    const double t = (warp(v) - warp(lo)) / (warp(hi) - warp(lo));
    return chart.plot_left() + std::clamp(t, 0.0, 1.0) * kPlotWidth;
  }
};

struct Tick {
  double value = 0;
  std::string label;
};

struct Axis {
  Scale scale;
  std::vector<Tick> ticks;
};

// Keeps the candidates whose labels would not overlap an already kept one, so callers list the
// ticks that matter most first (zero, then outward); returns them left to right.
std::vector<Tick> spaced_ticks(std::vector<Tick> candidates, const Scale& scale, const RowChart& chart) {
  std::vector<Tick> kept;
  for (Tick& tick : candidates) {
    const double x = scale.x(tick.value, chart);
    const bool crowded = std::any_of(kept.begin(), kept.end(), [&](const Tick& k) {
      return std::abs(scale.x(k.value, chart) - x) < kMinTickGap;
    });
    if (!crowded) kept.push_back(std::move(tick));
  }
  std::sort(kept.begin(), kept.end(), [](const Tick& a, const Tick& b) { return a.value < b.value; });
  return kept;
}

// 1, 2 or 5 times a power of ten, about `span / target`: round tick labels.
double nice_step(double span, int target) {
  const double raw = span / target;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  const double normalized = raw / magnitude;
  const double multiple = normalized <= 1 ? 1 : normalized <= 2 ? 2 : normalized <= 5 ? 5 : 10;
  return multiple * magnitude;
}

// Linear dB axis over the finite values and zero (bars start at zero, so lengths compare). A +inf
// (exact) or -inf value gets one more step beyond the finite ones: its capped bar must not look
// like a measured value.
Axis sqnr_axis(std::span<const double> values, const RowChart& chart) {
  double lo = 0, hi = 0;
  bool has_pos_inf = false, has_neg_inf = false;
  for (const double v : values) {
    if (std::isfinite(v)) {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    } else if (std::isinf(v) && v > 0) {
      has_pos_inf = true;
    } else if (std::isinf(v)) {
      has_neg_inf = true;
    }
  }
  if (hi == lo) hi = lo + 10;  // nothing finite but zero: still a readable dB scale
  const double step = nice_step(hi - lo, 6);
  // Tick values are integer multiples of the step, so accumulated rounding cannot print "1e-17".
  const auto first = static_cast<int64_t>(std::floor(lo / step)) - (has_neg_inf ? 1 : 0);
  const auto last = static_cast<int64_t>(std::ceil(hi / step)) + (has_pos_inf ? 1 : 0);
  const Scale scale{.lo = static_cast<double>(first) * step, .hi = static_cast<double>(last) * step};
  std::vector<Tick> candidates{{0.0, "0"}};
  for (int64_t k = first; k <= last; ++k) {
    const double value = static_cast<double>(k) * step;
    if (k != 0) candidates.push_back({value, fmt::format("{:g}", value)});
  }
  return Axis{scale, spaced_ticks(std::move(candidates), scale, chart)};
}

double decade_at_or_above(double v) { return std::pow(10.0, std::ceil(std::log10(v))); }

// Symmetric log axis sized to the data. The linear region is the decade of the smallest nonzero
// tensor extent, so the narrowest range is still wider than a hairline, but at most kMaxDecades
// below the largest, so a near-zero tensor cannot stretch the axis into unreadable decades.
Axis range_axis(std::span<const EvalReportPage::RangeRow> rows, const RowChart& chart) {
  constexpr int kMaxDecades = 6;
  double min_value = 0, max_value = 0;
  double smallest_extent = std::numeric_limits<double>::infinity();
  for (const auto& r : rows) {
    double extent = 0;
    for (const double v : {r.min, r.max}) {
      if (!std::isfinite(v)) continue;
      min_value = std::min(min_value, v);
      max_value = std::max(max_value, v);
      extent = std::max(extent, std::abs(v));
    }
    if (extent > 0) smallest_extent = std::min(smallest_extent, extent);
  }
  const double largest = std::max(-min_value, max_value);
  const int top_exp = largest > 0 ? static_cast<int>(std::ceil(std::log10(largest))) : 0;
  const int floor_exp = largest > 0 ? static_cast<int>(std::floor(std::log10(smallest_extent))) : top_exp - 1;
  const int low_exp = std::clamp(floor_exp, top_exp - kMaxDecades, top_exp - 1);
  Scale scale{.lo = min_value < 0 ? -decade_at_or_above(-min_value) : 0.0,
              .hi = max_value > 0 ? decade_at_or_above(max_value) : 0.0,
              .linthresh = std::pow(10.0, low_exp)};
  if (scale.lo == scale.hi) scale.hi = std::pow(10.0, top_exp);  // all ranges are [0, 0]
  std::vector<Tick> candidates{{0.0, "0"}};
  for (int e = top_exp; e >= low_exp; --e) {
    const double decade = std::pow(10.0, e);
    if (decade <= scale.hi) candidates.push_back({decade, fmt::format("{:g}", decade)});
    if (-decade >= scale.lo) candidates.push_back({-decade, fmt::format("{:g}", -decade)});
  }
  return Axis{scale, spaced_ticks(std::move(candidates), scale, chart)};
}

// ---- SVG pieces --------------------------------------------------------------------------------

void open_svg(std::string& out, const RowChart& chart, std::string_view description) {
  put(out,
      "<div class=\"chart\"><svg width=\"{0:.0f}\" height=\"{1:.0f}\" viewBox=\"0 0 {0:.0f} {1:.0f}\" role=\"img\" "
      "aria-label=\"{2}\">\n",
      std::ceil(chart.width()), std::ceil(chart.height()), escape_html(description));
}

void close_svg(std::string& out) { out += "</svg></div>\n"; }

// Grid lines through the rows, tick labels above and below them, and a darker line at zero when
// the axis crosses it (the reference for negative values).
void draw_axis(std::string& out, const RowChart& chart, const Axis& axis, std::string_view title) {
  out += "<g class=\"axis\">\n";
  put(out, "<text class=\"axis-title\" x=\"{:.1f}\" y=\"12\" text-anchor=\"middle\">{}</text>\n",
      chart.plot_left() + kPlotWidth / 2, escape_html(title));
  for (const Tick& tick : axis.ticks) {
    const double x = axis.scale.x(tick.value, chart);
    put(out, "<line class=\"grid\" x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\"/>\n", x,
        chart.rows_top() - 4, chart.rows_bottom() + 4);
    put(out, "<text x=\"{0:.1f}\" y=\"{1:.1f}\" text-anchor=\"middle\">{3}</text>"
             "<text x=\"{0:.1f}\" y=\"{2:.1f}\" text-anchor=\"middle\">{3}</text>\n",
        x, chart.rows_top() - 7, chart.rows_bottom() + 16, tick.label);
  }
  if (axis.scale.lo < 0 && axis.scale.hi > 0) {
    put(out, "<line class=\"zero\" x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\"/>\n",
        axis.scale.x(0, chart), chart.rows_top(), chart.rows_bottom());
  }
  out += "</g>\n";
}

// The row's name, shortened to fit the label column; a shortened one keeps the full name as its
// tooltip.
void draw_row_label(std::string& out, const RowChart& chart, size_t row, std::string_view name) {
  const std::string shown = shorten(name, kMaxLabelChars);
  put(out, "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">", chart.label_width - 6, chart.text_baseline(row));
  if (shown.size() != name.size()) put(out, "<title>{}</title>", escape_html(name));
  put(out, "{}</text>\n", escape_html(shown));
}

// ---- Charts ------------------------------------------------------------------------------------

struct SqnrBar {
  std::string_view name;
  double db = 0;
};

const char* bar_class(double db) {
  if (std::isinf(db) && db > 0) return "bar exact";
  return db < 0 ? "bar neg" : "bar";
}

// Horizontal SQNR bars from zero: negative values extend left of the zero line, +inf is a capped
// bar labelled "exact", NaN an empty bar labelled "n/a". Exactly one <rect> per bar.
std::string sqnr_bar_chart(std::span<const SqnrBar> bars, std::string_view description) {
  std::vector<std::string_view> names;
  std::vector<double> values;
  for (const SqnrBar& bar : bars) {
    names.push_back(bar.name);
    values.push_back(bar.db);
  }
  const RowChart chart = row_chart(names, kSqnrValueWidth);
  const Axis axis = sqnr_axis(values, chart);
  std::string out;
  open_svg(out, chart, description);
  draw_axis(out, chart, axis, "SQNR (dB)");
  const double zero = axis.scale.x(0, chart);
  for (size_t i = 0; i < bars.size(); ++i) {
    const SqnrBar& bar = bars[i];
    draw_row_label(out, chart, i, bar.name);
    const double end = std::isnan(bar.db) ? zero : axis.scale.x(bar.db, chart);
    put(out,
        "<rect class=\"{}\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{}\"><title>{}: {}</title></rect>"
        "<text class=\"value\" x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n",
        bar_class(bar.db), std::min(zero, end), chart.bar_top(i), std::abs(end - zero), kBarHeight,
        escape_html(bar.name), sqnr_html(bar.db), chart.plot_right() + 8, chart.text_baseline(i), sqnr_html(bar.db));
  }
  close_svg(out);
  return out;
}

// Each tensor's [min, max] as an interval. A constant tensor (min == max) still gets a visible
// sliver; a range with a NaN end has no interval to draw.
std::string range_chart(std::span<const EvalReportPage::RangeRow> rows, const RowChart& chart, const Axis& axis) {
  constexpr double kMinSpanWidth = 1.5;
  std::string out;
  open_svg(out, chart, "Calibration activation ranges");
  draw_axis(out, chart, axis, "activation value (symmetric log)");
  for (size_t i = 0; i < rows.size(); ++i) {
    const EvalReportPage::RangeRow& r = rows[i];
    draw_row_label(out, chart, i, r.name);
    if (std::isnan(r.min) || std::isnan(r.max)) continue;
    const double left = axis.scale.x(std::min(r.min, r.max), chart);
    const double right = axis.scale.x(std::max(r.min, r.max), chart);
    put(out,
        "<rect class=\"span\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{}\"><title>{}: [{}, {}]</title>"
        "</rect>\n",
        std::min(left, chart.plot_right() - kMinSpanWidth), chart.bar_top(i), std::max(right - left, kMinSpanWidth),
        kBarHeight, escape_html(r.name), general_html(r.min), general_html(r.max));
  }
  close_svg(out);
  return out;
}

// ---- Sections ----------------------------------------------------------------------------------

void table_row(std::string& out, std::string_view header, std::string_view value_html) {
  put(out, "<tr><th scope=\"row\">{}</th><td>{}</td></tr>\n", header, value_html);
}

std::string techniques_html(const std::vector<std::string>& techniques) {
  if (techniques.empty()) return "none";
  std::string out = "<ul>";
  for (const std::string& t : techniques) put(out, "<li>{}</li>", escape_html(t));
  return out + "</ul>";
}

void summary_section(std::string& out, const EvalReportPage& page) {
  out += "<section id=\"summary\">\n<h2>Summary</h2>\n<table class=\"summary\">\n";
  table_row(out, "Model", "<code>" + escape_html(page.model) + "</code>");
  table_row(out, "Recipe", escape_html(page.recipe));
  table_row(out, "Techniques", techniques_html(page.techniques));
  table_row(out, "Evaluation text", escape_html(page.eval_text));
  table_row(out, "Evaluation tokens", fmt::format("{}", page.eval_tokens));
  table_row(out, "Logits SQNR", sqnr_html(page.sqnr_db));
  table_row(out, "Perplexity, float", fixed_html(page.perplexity_float, 3));
  table_row(out, "Perplexity, quantized", fixed_html(page.perplexity_quantized, 3));
  table_row(out, "Perplexity ratio (quantized / float)", ratio_html(page.perplexity_quantized, page.perplexity_float));
  table_row(out, "Top-1 agreement", fmt::format("{} / {} ({})", page.top1_agreed, page.eval_tokens,
                                                percent_html(page.top1_agreed, page.eval_tokens)));
  table_row(out, "Quantize time", fixed_html(page.quantize_seconds, 2) + " s");
  table_row(out, "Evaluation time", fixed_html(page.eval_seconds, 2) + " s");
  out += "</table>\n</section>\n";
}

void overrides_section(std::string& out, const EvalReportPage& page) {
  out += "<section id=\"overrides\">\n<h2>Overrides</h2>\n";
  if (page.overrides.empty()) {
    out += "<p>none</p>\n</section>\n";
    return;
  }
  out += "<p class=\"note\">Tensor-name patterns, in match order.</p>\n<table>\n"
         "<thead><tr><th>#</th><th>Pattern (regex)</th><th>Scheme</th></tr></thead>\n<tbody>\n";
  for (size_t i = 0; i < page.overrides.size(); ++i) {
    const auto& [pattern, scheme] = page.overrides[i];
    put(out, "<tr><td class=\"num\">{}</td><td><code>{}</code></td><td>{}</td></tr>\n", i + 1, escape_html(pattern),
        escape_html(scheme));
  }
  out += "</tbody>\n</table>\n</section>\n";
}

// The lowest SQNR, ignoring NaN; null when there is none.
const EvalReportPage::TensorRow* worst_tensor(const std::vector<EvalReportPage::TensorRow>& rows) {
  const EvalReportPage::TensorRow* worst = nullptr;
  for (const auto& r : rows)
    if (!std::isnan(r.sqnr_db) && (worst == nullptr || r.sqnr_db < worst->sqnr_db)) worst = &r;
  return worst;
}

void per_tensor_section(std::string& out, const EvalReportPage& page) {
  out += "<section id=\"per-tensor\">\n<h2>Per-tensor SQNR</h2>\n";
  if (page.per_tensor.empty()) {
    out += "<p>No quantized op results.</p>\n</section>\n";
    return;
  }
  put(out, "<p class=\"note\">{} quantized op results, in graph order.", page.per_tensor.size());
  if (const auto* worst = worst_tensor(page.per_tensor))
    put(out, " Worst: <code>{}</code> at {}.", escape_html(worst->name), sqnr_html(worst->sqnr_db));
  out += "</p>\n";
  std::vector<SqnrBar> bars;
  for (const auto& r : page.per_tensor) bars.push_back({r.name, r.sqnr_db});
  out += sqnr_bar_chart(bars, "Per-tensor SQNR in dB");
  out += "</section>\n";
}

void ranges_section(std::string& out, const EvalReportPage& page) {
  out += "<section id=\"ranges\">\n<h2>Calibration ranges</h2>\n";
  if (page.ranges.empty()) {
    out += "<p>No calibration ranges recorded.</p>\n</section>\n";
    return;
  }
  std::vector<std::string_view> names;
  for (const auto& r : page.ranges) names.push_back(r.name);
  const RowChart chart = row_chart(names, kNoValueWidth);
  const Axis axis = range_axis(page.ranges, chart);
  put(out, "<p class=\"note\">Activation [min, max] per tensor, in graph order; the axis is logarithmic beyond "
           "&#177;{} and linear within.</p>\n",
      general_html(axis.scale.linthresh));
  out += range_chart(page.ranges, chart, axis);
  out += "<table>\n<thead><tr><th>Tensor</th><th>Min</th><th>Max</th><th>Encoding</th></tr></thead>\n<tbody>\n";
  for (const auto& r : page.ranges)
    put(out, "<tr><td><code>{}</code></td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>\n",
        escape_html(r.name), general_html(r.min), general_html(r.max), escape_html(r.encoding));
  out += "</tbody>\n</table>\n</section>\n";
}

// Worst (lowest SQNR) first: the layers whose quantization alone costs the most lead. NaN rows go
// last; the sort is stable so ties keep graph order and the page stays deterministic.
std::vector<SqnrBar> worst_first(const std::vector<EvalReportPage::LayerCost>& costs) {
  std::vector<SqnrBar> bars;
  for (const auto& c : costs) bars.push_back({c.layer, c.sqnr_db});
  std::stable_sort(bars.begin(), bars.end(), [](const SqnrBar& a, const SqnrBar& b) {
    if (std::isnan(a.db) || std::isnan(b.db)) return !std::isnan(a.db) && std::isnan(b.db);
    return a.db < b.db;
  });
  return bars;
}

void sensitivity_section(std::string& out, const EvalReportPage& page) {
  out += "<section id=\"sensitivity\">\n<h2>Layer sensitivity</h2>\n";
  if (page.sensitivity.empty()) {
    out += "<p>Sensitivity analysis not run.</p>\n</section>\n";
    return;
  }
  out += "<p class=\"note\">Logits SQNR with only this layer quantized, worst first.</p>\n";
  out += sqnr_bar_chart(worst_first(page.sensitivity), "Logits SQNR per layer quantized alone, in dB");
  out += "</section>\n";
}

// Kept in one constant so the page is self-contained; no word here may contain "inf" or "nan"
// (the tests check that non-finite numbers never leak into the page as those words).
constexpr std::string_view kStyle = R"(body { font: 14px/1.45 system-ui, sans-serif; color: #1d2330; background: #fff;
  max-width: 1100px; margin: 0 auto; padding: 0 16px 48px; }
h1 { font-size: 22px; margin: 24px 0 4px; }
h2 { font-size: 17px; margin: 32px 0 8px; padding-bottom: 4px; border-bottom: 1px solid #d8dde6; }
nav a { margin-right: 14px; }
table { border-collapse: collapse; margin: 8px 0; }
th, td { text-align: left; vertical-align: top; padding: 3px 10px; border-bottom: 1px solid #e6e9ef; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
code { font: 12.5px ui-monospace, Menlo, Consolas, monospace; word-break: break-all; }
ul { margin: 0; padding-left: 18px; }
.note, .sub { color: #4b5563; }
.chart { overflow-x: auto; }
svg text { font: 11px ui-monospace, Menlo, Consolas, monospace; fill: #1d2330; }
svg .axis-title { font-weight: bold; }
svg .grid { stroke: #e3e6ec; }
svg .zero { stroke: #6b7280; }
svg .bar { fill: #4c78a8; }
svg .bar.neg { fill: #d9534f; }
svg .bar.exact { fill: #59a14f; }
svg .span { fill: #f28e2b; }
svg .value { fill: #4b5563; }
)";

}  // namespace

std::string render_eval_report_html(const EvalReportPage& page) {
  std::string out;
  out += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  put(out, "<title>Quantization evaluation: {}</title>\n", escape_html(page.model));
  put(out, "<style>\n{}</style>\n</head>\n<body>\n", kStyle);
  put(out, "<header>\n<h1>Quantization evaluation</h1>\n<p class=\"sub\"><code>{}</code> &middot; {}</p>\n",
      escape_html(page.model), escape_html(page.recipe));
  out += "<nav><a href=\"#summary\">Summary</a><a href=\"#overrides\">Overrides</a>"
         "<a href=\"#per-tensor\">Per-tensor SQNR</a><a href=\"#ranges\">Calibration ranges</a>"
         "<a href=\"#sensitivity\">Layer sensitivity</a></nav>\n</header>\n<main>\n";
  summary_section(out, page);
  overrides_section(out, page);
  per_tensor_section(out, page);
  ranges_section(out, page);
  sensitivity_section(out, page);
  out += "</main>\n</body>\n</html>\n";
  return out;
}

void write_eval_report_html(const EvalReportPage& page, const std::filesystem::path& file) {
  const std::string html = render_eval_report_html(page);
  AtomicFileWriter writer(file);
  writer.write(std::string_view(html));
  writer.commit();
}

}  // namespace genai
