// plots.h - the two pictures examples draw: an attention heatmap and a loss curve (PNG).
//
//   attention_heatmap  weights alpha_tj (T_out rows, S columns): output characters down the
//                      left, source characters along the top, a colour scale on the right
//   loss_curve         loss per training step on a log scale, with its moving mean
//   line_chart         a few named series y(x) on linear axes, with a legend
#pragma once
#include <cstdio>
#include <string>
#include <vector>

#include "canvas.h"

namespace plot {

// Viridis (the matplotlib colour map), sampled at 9 points and interpolated: dark blue at
// 0, green at 0.5, yellow at 1; readable in grey and by colour-blind readers.
inline Rgb viridis(float t) {
  static const Rgb stops[] = {{68, 1, 84},    {71, 45, 123},  {59, 82, 139},  {44, 114, 142}, {33, 145, 140},
                              {39, 173, 129}, {92, 200, 99},  {170, 220, 50}, {253, 231, 37}};
  t = std::min(1.f, std::max(0.f, t)) * 8;
  int i = std::min(7, int(t));
  float f = t - i;
  auto mix = [&](uint8_t a, uint8_t b) { return uint8_t(a + (b - a) * f + 0.5f); };
  return {mix(stops[i].r, stops[i + 1].r), mix(stops[i].g, stops[i + 1].g), mix(stops[i].b, stops[i + 1].b)};
}

// A label for one source character: a space shows as a middle dot.
inline std::string char_label(char c) { return c == ' ' ? "\xC2\xB7" : std::string(1, c); }

// Writes the heatmap of weights[t][j] in [0, 1] and returns its size (width, height).
inline std::pair<int, int> attention_heatmap(const std::string& path, const std::vector<std::vector<float>>& weights,
                                             const std::vector<std::string>& source_labels,
                                             const std::vector<std::string>& output_labels,
                                             const std::string& title, const Font& font,
                                             const std::string& x_title = "source character j",
                                             const std::string& y_title = "output t") {
  const int T = weights.size(), S = source_labels.size(), cell = 22;
  int left = 20 + 16;  // the axis title, then the widest output label
  for (const auto& l : output_labels) left = std::max(left, 36 + 8 + Canvas(1, 1).text_width(font, l, 14));
  const int top = 74, bar_w = 14, right = 70;
  const int W = std::max(left + S * cell + right, Canvas(1, 1).text_width(font, title, 15) + 20), H = top + T * cell + 14;
  Canvas c(W, H);
  c.text(font, title, 10, 6, 15, kBlack);
  c.text_centred(font, x_title, left + S * cell / 2, 36, 13, kDarkGrey);
  c.text_centred(font, y_title, 12, top + T * cell / 2, 13, kDarkGrey, true);
  for (int j = 0; j < S; ++j) c.text_centred(font, source_labels[j], left + j * cell + cell / 2, top - 12, 14, kBlack);
  for (int t = 0; t < T; ++t) {
    int w = c.text_width(font, output_labels[t], 14);
    c.text(font, output_labels[t], left - 6 - w, top + t * cell + 2, 14, kBlack);
    for (int j = 0; j < S; ++j) {
      float a = j < int(weights[t].size()) ? weights[t][j] : 0;
      c.fill_rect(left + j * cell, top + t * cell, cell - 1, cell - 1, viridis(a));
    }
  }
  // colour scale: alpha from 0 (bottom) to 1 (top), with three ticks
  const int bx = left + S * cell + 14, by = top, bh = T * cell;
  for (int y = 0; y < bh; ++y) c.fill_rect(bx, by + y, bar_w, 1, viridis(1 - float(y) / (bh - 1)));
  for (float v : {0.f, 0.5f, 1.f}) {
    int y = by + int((1 - v) * (bh - 1));
    c.line(bx + bar_w, y, bx + bar_w + 4, y, kBlack);
    char s[8];
    std::snprintf(s, sizeof s, "%.1f", v);
    c.text(font, s, bx + bar_w + 6, y - 9, 12, kBlack);
  }
  c.text_centred(font, "\xCE\xB1", bx + bar_w / 2, by - 12, 14, kBlack);  // alpha
  c.write_png(path);
  return {W, H};
}

// Writes the curve of losses[step] (log scale, with a moving mean) and returns its size.
inline std::pair<int, int> loss_curve(const std::string& path, const std::vector<double>& losses,
                                      const std::string& title, const Font& font) {
  const int W = 640, H = 400, left = 78, right = 20, top = 40, bottom = 56;
  const int pw = W - left - right, ph = H - top - bottom;
  Canvas c(W, H);
  c.text(font, title, left, 10, 15, kBlack);
  c.text_centred(font, "training step", left + pw / 2, H - 14, 13, kDarkGrey);
  c.text_centred(font, "cross-entropy loss (log scale)", 14, top + ph / 2, 13, kDarkGrey, true);
  double lo = 1e300, hi = 0;
  for (double l : losses) if (l > 0) lo = std::min(lo, l), hi = std::max(hi, l);
  if (losses.empty() || hi <= 0) lo = 0.01, hi = 1;
  const double e_lo = std::floor(std::log10(lo)), e_hi = std::max(e_lo + 1, std::ceil(std::log10(hi)));
  const int n = std::max<int>(2, losses.size());
  auto X = [&](double step) { return left + float(step / (n - 1) * pw); };
  auto Y = [&](double l) { return top + float((e_hi - std::log10(std::max(l, 1e-300))) / (e_hi - e_lo) * ph); };
  // grid and y ticks at 1, 2, 5 x 10^k
  for (double e = e_lo; e <= e_hi; ++e)
    for (double m : {1.0, 2.0, 5.0}) {
      double v = m * std::pow(10.0, e);
      if (std::log10(v) > e_hi + 1e-9) continue;
      float y = Y(v);
      c.line(left, y, left + pw, y, m == 1 ? kGrey : Rgb{235, 235, 235});
      char s[16];
      std::snprintf(s, sizeof s, "%g", v);
      c.text(font, s, left - 8 - c.text_width(font, s, 12), int(y) - 9, 12, kBlack);
    }
  // x ticks at a round step
  double dx = std::pow(10.0, std::floor(std::log10(std::max(1, n - 1))));
  if ((n - 1) / dx < 4) dx /= 2;
  for (double s = 0; s <= n - 1 + 1e-9; s += dx) {
    float x = X(s);
    c.line(x, top + ph, x, top + ph + 4, kBlack);
    char t[16];
    std::snprintf(t, sizeof t, "%g", s);
    c.text_centred(font, t, int(x), top + ph + 14, 12, kBlack);
  }
  // raw losses light; their mean over a window of 1/25 of the run, centred, dark
  const int half = std::max<int>(1, losses.size() / 50);
  std::vector<double> mean(losses.size());
  for (int i = 0; i < int(losses.size()); ++i) {
    int lo_i = std::max(0, i - half), hi_i = std::min<int>(losses.size() - 1, i + half);
    double sum = 0;
    for (int k = lo_i; k <= hi_i; ++k) sum += losses[k];
    mean[i] = sum / (hi_i - lo_i + 1);
  }
  for (size_t i = 1; i < losses.size(); ++i) c.line(X(i - 1), Y(losses[i - 1]), X(i), Y(losses[i]), {160, 190, 230});
  for (size_t i = 1; i < losses.size(); ++i) c.line(X(i - 1), Y(mean[i - 1]), X(i), Y(mean[i]), {20, 60, 160});
  c.line(left, top, left, top + ph, kBlack);
  c.line(left, top + ph, left + pw, top + ph, kBlack);
  c.text(font, "per step", left + pw - 150, top + 6, 12, {120, 150, 200});
  c.text(font, "moving mean", left + pw - 150, top + 22, 12, {20, 60, 160});
  c.write_png(path);
  return {W, H};
}

// One series of a line chart: its name in the legend, its colour, its points.
struct Series {
  std::string name;
  Rgb colour;
  std::vector<double> y;  // one per x
};

// Writes series[k].y against x (linear axes, y from y_lo to y_hi, 5 ticks each way) with
// a dot at every point and a legend, and returns the size.
inline std::pair<int, int> line_chart(const std::string& path, const std::vector<double>& x, const std::vector<Series>& series,
                                      double y_lo, double y_hi, const std::string& title, const std::string& x_label,
                                      const std::string& y_label, const Font& font) {
  const int W = 640, H = 400, left = 78, right = 20, top = 40, bottom = 56;
  const int pw = W - left - right, ph = H - top - bottom;
  Canvas c(W, H);
  c.text(font, title, left, 10, 15, kBlack);
  c.text_centred(font, x_label, left + pw / 2, H - 14, 13, kDarkGrey);
  c.text_centred(font, y_label, 14, top + ph / 2, 13, kDarkGrey, true);
  double x_lo = x.empty() ? 0 : *std::min_element(x.begin(), x.end()), x_hi = x.empty() ? 1 : *std::max_element(x.begin(), x.end());
  if (x_hi <= x_lo) x_hi = x_lo + 1;
  auto X = [&](double v) { return left + float((v - x_lo) / (x_hi - x_lo) * pw); };
  auto Y = [&](double v) { return top + float((y_hi - v) / (y_hi - y_lo) * ph); };
  for (int k = 0; k <= 4; ++k) {
    const double v = y_lo + (y_hi - y_lo) * k / 4;
    c.line(left, Y(v), left + pw, Y(v), k == 0 ? kBlack : Rgb{235, 235, 235});
    char s[16];
    std::snprintf(s, sizeof s, "%g", v);
    c.text(font, s, left - 8 - c.text_width(font, s, 12), int(Y(v)) - 9, 12, kBlack);
  }
  for (double v : x) {
    c.line(X(v), top + ph, X(v), top + ph + 4, kBlack);
    char s[16];
    std::snprintf(s, sizeof s, "%g", v);
    c.text_centred(font, s, int(X(v)), top + ph + 14, 12, kBlack);
  }
  c.line(left, top, left, top + ph, kBlack);
  for (size_t k = 0; k < series.size(); ++k) {
    const Series& s = series[k];
    for (size_t i = 0; i < s.y.size() && i < x.size(); ++i) {
      if (i > 0) c.line(X(x[i - 1]), Y(s.y[i - 1]), X(x[i]), Y(s.y[i]), s.colour);
      c.fill_rect(int(X(x[i])) - 3, int(Y(s.y[i])) - 3, 7, 7, s.colour);
    }
    c.fill_rect(left + pw - 190, top + 10 + 18 * k, 14, 4, s.colour);
    c.text(font, s.name, left + pw - 170, top + 1 + 18 * k, 12, kBlack);
  }
  c.write_png(path);
  return {W, H};
}

}  // namespace plot
