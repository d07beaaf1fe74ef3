// Plain HTML and SVG text for `kacct report` (tools/cmd_report.cpp): escaping, the page frame
// (inline CSS, a tiny error hook, no external URL), number formats and a time axis. No model
// header: only strings and numbers.
#pragma once
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kacct::cli::report {

inline std::string esc(std::string_view s) {
  std::string o;
  o.reserve(s.size());
  for (char c : s) switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      default: o += c;
    }
  return o;
}

// Time in the unit that fits the span of the axis it is on.
struct TimeUnit {
  double div;
  const char* name;
};
inline TimeUnit unit_for(double span_ns) {
  if (span_ns >= 2e9) return {1e9, "s"};
  if (span_ns >= 2e6) return {1e6, "ms"};
  if (span_ns >= 2e3) return {1e3, "µs"};
  return {1, "ns"};
}
inline std::string num(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e15) return fmt::format("{}", std::int64_t(v));
  return fmt::format("{:.6g}", v);
}
inline std::string fmt_ns(double ns) {
  const auto u = unit_for(std::fabs(ns));
  return num(ns / u.div) + " " + u.name;
}
// 1, 2 or 5 times a power of ten, about `want` steps over `span`.
inline double nice_step(double span, int want = 8) {
  if (span <= 0) return 1;
  const double raw = span / want, p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * p >= raw) return m * p;
  return 10 * p;
}

// A linear scale from [d0, d1] onto [r0, r1] pixels.
struct Scale {
  double d0, d1, r0, r1;
  double operator()(double v) const { return d1 == d0 ? r0 : r0 + (v - d0) / (d1 - d0) * (r1 - r0); }
};

// Ticks and labels of a horizontal time axis (ns) at y, with the unit in the last label.
inline std::string time_axis(const Scale& x, double y, double grid_top = -1) {
  std::string o;
  const auto u = unit_for(x.d1 - x.d0);
  const double step = nice_step(x.d1 - x.d0);
  o += fmt::format(R"(<line class="axis" x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}"/>)", x.r0, y, x.r1, y);
  for (double t = std::ceil(x.d0 / step) * step; t <= x.d1 + step * 1e-9; t += step) {
    const double px = x(t);
    if (grid_top >= 0)
      o += fmt::format(R"(<line class="grid" x1="{0:.1f}" y1="{1:.1f}" x2="{0:.1f}" y2="{2:.1f}"/>)", px, grid_top, y);
    o += fmt::format(R"(<line class="axis" x1="{0:.1f}" y1="{1:.1f}" x2="{0:.1f}" y2="{2:.1f}"/>)", px, y, y + 4);
    o += fmt::format(R"(<text class="tick" x="{:.1f}" y="{:.1f}" text-anchor="middle">{} {}</text>)", px, y + 16,
                     num(std::round(t / u.div * 1e6) / 1e6), u.name);
  }
  return o;
}
// A vertical value axis at x with labels formatted by `label`.
template <class F>
std::string value_axis(const Scale& y, double x, double x_right, F&& label) {
  std::string o;
  const double lo = std::min(y.d0, y.d1), hi = std::max(y.d0, y.d1);
  const double step = nice_step(hi - lo, 5);
  o += fmt::format(R"(<line class="axis" x1="{0:.1f}" y1="{1:.1f}" x2="{0:.1f}" y2="{2:.1f}"/>)", x, y.r0, y.r1);
  for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) {
    const double py = y(v);
    o += fmt::format(R"(<line class="grid" x1="{0:.1f}" y1="{1:.1f}" x2="{2:.1f}" y2="{1:.1f}"/>)", x, py, x_right);
    o += fmt::format(R"(<text class="tick" x="{:.1f}" y="{:.1f}" text-anchor="end">{}</text>)", x - 4, py + 4,
                     esc(label(std::fabs(v) < step * 1e-9 ? 0.0 : v)));
  }
  return o;
}

// Bucket colours (kernel enum cpu_usage_stat order), shared by the truth and the charges.
inline constexpr const char* kBucketColour[] = {"#4e79a7", "#a0cbe8", "#f28e2b", "#ffbe7d", "#e15759",
                                                "#dcdcdc", "#b07aa1", "#7f5539", "#59a14f", "#8cd17d"};
// Series colours for configs and cgroups.
inline constexpr const char* kSeriesColour[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                                                "#8c564b", "#e377c2", "#7f7f7f", "#17becf"};

inline std::string page_head(std::string_view title) {
  std::string o = R"(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'">
<title>)";
  o += esc(title);
  o += R"(</title>
<script>window.addEventListener('error',function(e){document.documentElement.setAttribute('data-error',String(e.message||e));});</script>
<style>
body{font-family:DejaVu Sans,Helvetica,Arial,sans-serif;margin:16px 24px;color:#222;background:#fff;font-size:14px}
h1{font-size:22px;margin:4px 0 8px} h2{font-size:18px;margin:22px 0 6px;border-bottom:1px solid #ccc}
h3{font-size:15px;margin:14px 0 4px} p.note{color:#555;margin:4px 0}
table{border-collapse:collapse;margin:6px 0} td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}
th{background:#f3f3f3} td.l,th.l{text-align:left}
svg{display:block;margin:4px 0} text{font-size:12px;fill:#222} text.tick{font-size:11px;fill:#444}
text.row{font-size:12px} text.title{font-size:13px;font-weight:bold}
line.axis{stroke:#444;stroke-width:1} line.grid{stroke:#e6e6e6;stroke-width:1}
line.read{stroke:#000;stroke-width:1;stroke-dasharray:3,2} path.read{fill:#000}
.legend span.sw{display:inline-block;width:12px;height:12px;margin:0 4px -2px 10px;border:1px solid #888}
.verdict{display:inline-block;padding:1px 8px;border-radius:3px;color:#fff;font-weight:bold}
.v-holds{background:#2e7d32} .v-violated{background:#c62828} .v-unknown{background:#f9a825;color:#222} .v-error{background:#555}
.a-exact{color:#2e7d32} .a-within_bounds{color:#1565c0} .a-off{color:#c62828;font-weight:bold} .a-unverifiable{color:#777}
text.a-exact{fill:#2e7d32} text.a-within_bounds{fill:#1565c0} text.a-off{fill:#c62828;font-weight:bold} text.a-unverifiable{fill:#777}
pre{background:#f7f7f7;border:1px solid #ddd;padding:6px;max-height:260px;overflow:auto;font-size:12px}
details{margin:4px 0}
</style></head><body>
)";
  return o;
}
inline std::string page_tail() {
  return "<script>document.body.setAttribute('data-ready','1');</script>\n</body></html>\n";
}

}  // namespace kacct::cli::report
