#include "sweep/sweep_report_html.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>
#include <map>
#include <optional>
#include <string_view>

#include <fmt/format.h>

#include "core/html_escape.h"
#include "sweep/sweep_results.h"

namespace genai::sweep {
namespace {

using nlohmann::json;

template <typename... T>
void put(std::string& out, fmt::format_string<T...> format, T&&... args) {
  fmt::format_to(std::back_inserter(out), format, std::forward<T>(args)...);
}

std::optional<double> metric(const json& r, const std::string& name) {
  auto m = r.find("metrics");
  if (m == r.end() || !m->is_object()) return std::nullopt;
  auto v = m->find(name);
  if (v == m->end() || !v->is_number()) return std::nullopt;
  const double d = v->get<double>();
  return std::isfinite(d) ? std::optional<double>(d) : std::nullopt;
}

std::string axis(const json& r, const std::string& name) {
  auto a = r.find("axes");
  if (a == r.end() || !a->is_object() || !a->contains(name) || !(*a)[name].is_string()) return "";
  return (*a)[name].get<std::string>();
}

std::string number_html(std::optional<double> v, const std::string& name) {
  if (!v) return "&#8212;";
  if (name == "program_bytes") return fmt::format("{:.1f}&nbsp;MB", *v / 1e6);
  if (name == "top1_agreed" || name == "eval_tokens") return fmt::format("{:.0f}", *v);
  if (name == "perplexity_ratio") return fmt::format("{:.4f}", *v);
  return fmt::format("{:.3f}", *v);
}

// How a column sorts: figures where more is better first from the top, the others from the bottom.
bool higher_is_better(const std::string& name) {
  return name == "sqnr_db" || name == "top1_agreed" || name == "prefill_tok_s" || name == "decode_tok_s";
}

struct Column {
  std::string key, title;
};

std::vector<Column> columns() {
  std::vector<Column> c = {{"cell", "cell"}};
  for (const auto& a : axis_names()) c.push_back({a, a});
  c.push_back({"status", "status"});
  for (const auto& m : metric_names()) c.push_back({m, m});
  return c;
}

// The table in one order: by `key` (a metric, an axis or "cell"); cells without the figure last.
void table(std::string& out, const std::vector<json>& results, const std::string& key, bool default_order) {
  std::vector<const json*> rows;
  for (const json& r : results) rows.push_back(&r);
  const bool is_metric = std::find(metric_names().begin(), metric_names().end(), key) != metric_names().end();
  std::stable_sort(rows.begin(), rows.end(), [&](const json* a, const json* b) {
    if (is_metric) {
      const auto x = metric(*a, key), y = metric(*b, key);
      if (!x || !y) return x.has_value() && !y.has_value();
      return higher_is_better(key) ? *x > *y : *x < *y;
    }
    const std::string x = key == "cell" || key == "status" ? a->value(key, "") : axis(*a, key);
    const std::string y = key == "cell" || key == "status" ? b->value(key, "") : axis(*b, key);
    return x < y;
  });
  put(out, "<table id=\"by-{}\" class=\"sorted{}\">\n<thead><tr>", key, default_order ? " default" : "");
  for (const Column& c : columns())
    put(out, "<th><a href=\"#by-{}\"{}>{}</a></th>", c.key, c.key == key ? " class=\"on\"" : "", escape_html(c.title));
  out += "</tr></thead>\n<tbody>\n";
  for (const json* r : rows) {
    const bool ok = r->value("status", "") == "ok";
    put(out, "<tr{}><td><code>{}</code></td>", ok ? "" : " class=\"failed\"", escape_html(r->value("cell", "")));
    for (const auto& a : axis_names()) put(out, "<td>{}</td>", escape_html(axis(*r, a)));
    put(out, "<td>{}</td>", escape_html(r->value("status", "?")));
    for (const auto& m : metric_names()) put(out, "<td class=\"num\">{}</td>", number_html(metric(*r, m), m));
    out += "</tr>\n";
  }
  out += "</tbody></table>\n";
}

constexpr std::array<std::string_view, 8> kPalette = {"#4c78a8", "#f58518", "#54a24b", "#e45756",
                                                     "#72b7b2", "#b279a2", "#ff9da6", "#9d755d"};

struct Point {
  double x = 0, y = 0;
  std::string cell, soc;
};

// The points no other point beats on both axes (y: lower is better; x: higher is better when
// `x_higher`, else lower), ordered by x.
std::vector<Point> frontier(std::vector<Point> pts, bool x_higher) {
  std::vector<Point> f;
  for (const Point& p : pts) {
    bool dominated = false;
    for (const Point& q : pts) {
      const bool x_no_worse = x_higher ? q.x >= p.x : q.x <= p.x;
      const bool strictly = (x_higher ? q.x > p.x : q.x < p.x) || q.y < p.y;
      if (x_no_worse && q.y <= p.y && strictly) dominated = true;
    }
    if (!dominated) f.push_back(p);
  }
  std::sort(f.begin(), f.end(), [](const Point& a, const Point& b) { return a.x != b.x ? a.x < b.x : a.y < b.y; });
  return f;
}

struct Range {
  double lo = 0, hi = 1;
  explicit Range(const std::vector<double>& v) {
    if (v.empty()) return;
    lo = *std::min_element(v.begin(), v.end());
    hi = *std::max_element(v.begin(), v.end());
    const double pad = hi > lo ? (hi - lo) * 0.08 : std::max(std::abs(lo) * 0.05, 1e-6);
    lo -= pad;
    hi += pad;
  }
};

void scatter(std::string& out, const std::vector<Point>& pts, const std::map<std::string, size_t>& soc_colour,
             const std::string& x_title, bool x_higher, double x_scale, const std::string& description) {
  constexpr double W = 640, H = 340, L = 70, R = 20, T = 16, B = 46;
  std::vector<double> xs, ys;
  for (const Point& p : pts) {
    xs.push_back(p.x * x_scale);
    ys.push_back(p.y);
  }
  const Range rx(xs), ry(ys);
  auto sx = [&](double x) { return L + (x * x_scale - rx.lo) / (rx.hi - rx.lo) * (W - L - R); };
  auto sy = [&](double y) { return T + (ry.hi - y) / (ry.hi - ry.lo) * (H - T - B); };
  put(out, "<div class=\"chart\"><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" role=\"img\" "
           "aria-label=\"{}\">\n",
      W, H, escape_html(description));
  for (int i = 0; i <= 4; ++i) {
    const double fx = rx.lo + (rx.hi - rx.lo) * i / 4, fy = ry.lo + (ry.hi - ry.lo) * i / 4;
    const double px = L + (W - L - R) * i / 4, py = T + (H - T - B) * (4 - i) / 4;
    put(out, "<line class=\"grid\" x1=\"{:.1f}\" y1=\"{}\" x2=\"{:.1f}\" y2=\"{}\"/>", px, T, px, H - B);
    put(out, "<line class=\"grid\" x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\"/>\n", L, py, W - R, py);
    put(out, "<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{:.5g}</text>", px, H - B + 14, fx);
    put(out, "<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{:.5g}</text>\n", L - 6, py + 4, fy);
  }
  put(out, "<text class=\"axis-title\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{} ({} is better)</text>\n", (L + W - R) / 2,
      H - 8, escape_html(x_title), x_higher ? "right" : "left");
  put(out, "<text class=\"axis-title\" transform=\"translate(14 {}) rotate(-90)\" text-anchor=\"middle\">perplexity "
           "ratio (lower is better)</text>\n",
      (T + H - B) / 2);
  const std::vector<Point> f = frontier(pts, x_higher);
  if (f.size() > 1) {
    out += "<polyline class=\"frontier\" points=\"";
    for (const Point& p : f) put(out, "{:.1f},{:.1f} ", sx(p.x), sy(p.y));
    out += "\"/>\n";
  }
  // Each SoC a smaller disc than the one before, so cells at the same place (one program compiled
  // for two SoCs: the same size and perplexity) show as rings, not as one point.
  for (const Point& p : pts) {
    const bool on = std::any_of(f.begin(), f.end(), [&](const Point& q) { return q.cell == p.cell; });
    const size_t c = soc_colour.at(p.soc);
    const double r = std::max(2.5, 7.0 - 1.5 * static_cast<double>(c));
    put(out, "<circle{} cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{}\" fill=\"{}\"><title>{}: {:.5g}, ratio {:.5f}{}</title></circle>\n",
        on ? " class=\"pareto\"" : "", sx(p.x), sy(p.y), r, kPalette[c % kPalette.size()], escape_html(p.cell), p.x * x_scale,
        p.y, on ? " (Pareto)" : "");
  }
  out += "</svg></div>\n";
}

void pareto_section(std::string& out, const std::vector<json>& results) {
  out += "<section id=\"pareto\">\n<h2>Pareto charts</h2>\n";
  std::map<std::string, size_t> soc_colour;
  for (const json& r : results) soc_colour.emplace(axis(r, "soc_model"), 0);
  size_t i = 0;
  for (auto& [soc, c] : soc_colour) c = i++;
  out += "<p class=\"legend\">";
  for (const auto& [soc, c] : soc_colour)
    put(out, "<span><svg width=\"12\" height=\"12\"><circle cx=\"6\" cy=\"6\" r=\"5\" fill=\"{}\"/></svg> {}</span> ",
        kPalette[c % kPalette.size()], escape_html(soc));
  out += "&#183; outlined: the Pareto frontier (no other cell is better on both axes), joined by the dashed line</p>\n";
  std::vector<std::string> models;
  for (const json& r : results)
    if (std::find(models.begin(), models.end(), axis(r, "model")) == models.end()) models.push_back(axis(r, "model"));
  for (const std::string& model : models) {
    put(out, "<h3>{}</h3>\n", escape_html(model));
    std::vector<Point> speed, size;
    for (const json& r : results) {
      if (axis(r, "model") != model) continue;
      const auto ratio = metric(r, "perplexity_ratio");
      if (!ratio) continue;
      if (auto t = metric(r, "decode_tok_s")) speed.push_back({*t, *ratio, r.value("cell", ""), axis(r, "soc_model")});
      if (auto b = metric(r, "program_bytes")) size.push_back({*b, *ratio, r.value("cell", ""), axis(r, "soc_model")});
    }
    if (speed.empty()) {
      out += "<p class=\"note\">No cell of this model has both a perplexity ratio and a decode speed.</p>\n";
    } else {
      scatter(out, speed, soc_colour, "decode tokens/s", true, 1.0,
              fmt::format("{}: perplexity ratio against decode tokens per second", model));
    }
    if (!size.empty()) {
      scatter(out, size, soc_colour, "program size (MB)", false, 1e-6,
              fmt::format("{}: perplexity ratio against program size", model));
    }
  }
  out += "</section>\n";
}

void failures_section(std::string& out, const std::vector<json>& results) {
  std::vector<const json*> failed;
  for (const json& r : results)
    if (r.value("status", "") != "ok") failed.push_back(&r);
  if (failed.empty()) return;
  out += "<section id=\"failed\">\n<h2>Failed cells</h2>\n<table>\n<thead><tr><th>cell</th><th>step</th><th>exit "
         "code</th><th>message</th></tr></thead>\n<tbody>\n";
  for (const json* r : failed) {
    const json code = r->value("exit_code", json(nullptr));
    put(out, "<tr><td><code>{}</code></td><td>{}</td><td class=\"num\">{}</td><td>{}</td></tr>\n",
        escape_html(r->value("cell", "")), escape_html(r->value("failed_step", "")),
        code.is_number_integer() ? std::to_string(code.get<int64_t>()) : "&#8212;", escape_html(r->value("error", "")));
  }
  out += "</tbody></table>\n</section>\n";
}

constexpr std::string_view kStyle = R"(body { font: 14px/1.45 system-ui, sans-serif; color: #1d2330; background: #fff;
  max-width: 1400px; margin: 0 auto; padding: 0 16px 48px; }
h1 { font-size: 22px; margin: 24px 0 4px; }
h2 { font-size: 17px; margin: 32px 0 8px; padding-bottom: 4px; border-bottom: 1px solid #d8dde6; }
h3 { font-size: 15px; margin: 20px 0 4px; }
nav a { margin-right: 14px; }
table { border-collapse: collapse; margin: 8px 0; }
th, td { text-align: left; vertical-align: top; padding: 3px 8px; border-bottom: 1px solid #e6e9ef; }
th a { color: inherit; text-decoration: none; border-bottom: 1px dotted #8a93a3; }
th a.on { border-bottom: 2px solid #1d2330; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr.failed td { color: #b42318; }
code { font: 12.5px ui-monospace, Menlo, Consolas, monospace; }
.note, .sub, .legend { color: #4b5563; }
.legend span { margin-right: 12px; }
.chart { overflow-x: auto; }
table.sorted { display: none; }
table.sorted:target, table.sorted.default { display: table; }
table.sorted:target ~ table.sorted.default { display: none; }
svg text { font: 11px ui-monospace, Menlo, Consolas, monospace; fill: #1d2330; }
svg .axis-title { font-weight: bold; }
svg .grid { stroke: #e3e6ec; }
svg .frontier { fill: none; stroke: #1d2330; stroke-width: 1.5; stroke-dasharray: 5 3; }
svg .pareto { stroke: #1d2330; stroke-width: 1.5; }
)";

}  // namespace

std::string render_sweep_report_html(const SweepMatrix& matrix, const std::vector<json>& results) {
  int failed = 0;
  for (const json& r : results) failed += r.value("status", "") == "ok" ? 0 : 1;
  std::string out;
  out += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  put(out, "<title>Sweep: {}</title>\n", escape_html(matrix.file.string()));
  put(out, "<style>\n{}</style>\n</head>\n<body>\n", kStyle);
  put(out, "<header>\n<h1>Sweep</h1>\n<p class=\"sub\"><code>{}</code> &middot; {} cell(s), {} failed</p>\n",
      escape_html(matrix.file.string()), results.size(), failed);
  out += "<nav><a href=\"#cells\">Cells</a><a href=\"#pareto\">Pareto charts</a>";
  if (failed) out += "<a href=\"#failed\">Failed cells</a>";
  out += "</nav>\n</header>\n<main>\n<section id=\"cells\">\n<h2>Cells</h2>\n"
         "<p class=\"note\">A column's name sorts the table by it (best first for the figures).</p>\n";
  // The targetable orders first, the default (by cell) last: CSS hides it when another is shown.
  for (const Column& c : columns())
    if (c.key != "cell") table(out, results, c.key, false);
  table(out, results, "cell", true);
  out += "</section>\n";
  pareto_section(out, results);
  failures_section(out, results);
  out += "</main>\n</body>\n</html>\n";
  return out;
}

}  // namespace genai::sweep
