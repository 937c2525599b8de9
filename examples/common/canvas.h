// canvas.h - an RGB image to draw plots on: rectangles, lines, text, and PNG output.
//
// Text is rendered from a TrueType font with stb_truetype, PNG is encoded with
// stb_image_write; both come from Debian's libstb-dev, whose libstb already holds their
// implementations (link with -lstb; no STB_*_IMPLEMENTATION here). The default font is
// DejaVu Sans from Debian's fonts-dejavu-core. Both are installed by `make deps`.
//
// Errors (a missing font) throw std::runtime_error naming the path. A PNG is written as heed
// writes every file (heed/core/atomic_file.h): whole or not at all, through a symlink to its
// target, never over a FIFO or a device; heed::Error naming plot::write_png and the path.
#pragma once
#include <heed/core/atomic_file.h>
#include <stb/stb_image_write.h>
#include <stb/stb_truetype.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

namespace plot {

constexpr const char* kDefaultFont = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";

struct Rgb {
  uint8_t r, g, b;
};
constexpr Rgb kBlack{0, 0, 0}, kWhite{255, 255, 255}, kGrey{200, 200, 200}, kDarkGrey{90, 90, 90};

// Code points of a UTF-8 string (labels may hold e.g. U+00B7 or Greek letters).
inline std::vector<int> code_points(const std::string& s) {
  std::vector<int> out;
  for (size_t i = 0; i < s.size();) {
    unsigned char c = s[i];
    int n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : 4;
    int cp = n == 1 ? c : c & (0xff >> (n + 1));
    for (int k = 1; k < n && i + k < s.size(); ++k) cp = (cp << 6) | (s[i + k] & 0x3f);
    out.push_back(cp);
    i += n;
  }
  return out;
}

class Font {
 public:
  explicit Font(const std::string& path = kDefaultFont) {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw std::runtime_error("cannot read font " + path + " (Debian package fonts-dejavu-core)");
    data_.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    if (!stbtt_InitFont(&info_, data_.data(), stbtt_GetFontOffsetForIndex(data_.data(), 0)))
      throw std::runtime_error("not a TrueType font: " + path);
  }
  const stbtt_fontinfo* info() const { return &info_; }

 private:
  std::vector<unsigned char> data_;
  stbtt_fontinfo info_;
};

// A grey-level mask of `text` at pixel height `px`: coverage 0..255, w * h, row-major.
struct TextMask {
  int w = 0, h = 0;
  std::vector<uint8_t> a;
};

inline TextMask render_text(const Font& font, const std::string& text, float px) {
  const stbtt_fontinfo* f = font.info();
  const float scale = stbtt_ScaleForPixelHeight(f, px);
  int ascent, descent, gap;
  stbtt_GetFontVMetrics(f, &ascent, &descent, &gap);
  const std::vector<int> cps = code_points(text);
  float width = 0;
  for (size_t i = 0; i < cps.size(); ++i) {
    int adv, lsb;
    stbtt_GetCodepointHMetrics(f, cps[i], &adv, &lsb);
    width += adv * scale + (i + 1 < cps.size() ? stbtt_GetCodepointKernAdvance(f, cps[i], cps[i + 1]) * scale : 0);
  }
  TextMask m;
  m.w = int(std::ceil(width)) + 2;
  m.h = int(std::ceil((ascent - descent) * scale)) + 2;
  m.a.assign(size_t(m.w) * m.h, 0);
  const int baseline = int(std::round(ascent * scale));
  float x = 1;
  for (size_t i = 0; i < cps.size(); ++i) {
    int x0, y0, x1, y1, adv, lsb;
    stbtt_GetCodepointBitmapBox(f, cps[i], scale, scale, &x0, &y0, &x1, &y1);
    std::vector<uint8_t> g(size_t(std::max(0, x1 - x0)) * std::max(0, y1 - y0));
    if (!g.empty()) stbtt_MakeCodepointBitmap(f, g.data(), x1 - x0, y1 - y0, x1 - x0, scale, scale, cps[i]);
    for (int yy = 0; yy < y1 - y0; ++yy)
      for (int xx = 0; xx < x1 - x0; ++xx) {
        int X = int(x) + x0 + xx, Y = baseline + y0 + yy + 1;
        if (X >= 0 && X < m.w && Y >= 0 && Y < m.h)
          m.a[Y * m.w + X] = std::max(m.a[Y * m.w + X], g[yy * (x1 - x0) + xx]);
      }
    stbtt_GetCodepointHMetrics(f, cps[i], &adv, &lsb);
    x += adv * scale + (i + 1 < cps.size() ? stbtt_GetCodepointKernAdvance(f, cps[i], cps[i + 1]) * scale : 0);
  }
  return m;
}

class Canvas {
 public:
  Canvas(int w, int h, Rgb background = kWhite) : w_(w), h_(h), px_(size_t(w) * h * 3) {
    fill_rect(0, 0, w, h, background);
  }
  int width() const { return w_; }
  int height() const { return h_; }

  void blend(int x, int y, Rgb c, float a) {  // a in [0, 1]: how much of c covers the pixel
    if (x < 0 || y < 0 || x >= w_ || y >= h_) return;
    uint8_t* p = &px_[(size_t(y) * w_ + x) * 3];
    p[0] = uint8_t(p[0] + (c.r - p[0]) * a + 0.5f);
    p[1] = uint8_t(p[1] + (c.g - p[1]) * a + 0.5f);
    p[2] = uint8_t(p[2] + (c.b - p[2]) * a + 0.5f);
  }
  void fill_rect(int x, int y, int w, int h, Rgb c) {
    for (int yy = std::max(0, y); yy < std::min(h_, y + h); ++yy)
      for (int xx = std::max(0, x); xx < std::min(w_, x + w); ++xx) blend(xx, yy, c, 1);
  }
  // A straight line, 1 pixel wide (sampled at half-pixel steps along its longer axis).
  void line(float x0, float y0, float x1, float y1, Rgb c) {
    int n = int(std::ceil(2 * std::max(std::fabs(x1 - x0), std::fabs(y1 - y0)))) + 1;
    for (int i = 0; i <= n; ++i) {
      float t = float(i) / n;
      blend(int(std::lround(x0 + t * (x1 - x0))), int(std::lround(y0 + t * (y1 - y0))), c, 1);
    }
  }
  // Text with its box's top-left at (x, y), or, when `vertical`, rotated a quarter turn
  // counter-clockwise (reading upwards) with its box's top-left at (x, y).
  void text(const Font& font, const std::string& s, int x, int y, float px, Rgb c, bool vertical = false) {
    TextMask m = render_text(font, s, px);
    for (int yy = 0; yy < m.h; ++yy)
      for (int xx = 0; xx < m.w; ++xx) {
        float a = m.a[yy * m.w + xx] / 255.f;
        if (a == 0) continue;
        if (vertical) blend(x + yy, y + (m.w - 1 - xx), c, a);
        else blend(x + xx, y + yy, c, a);
      }
  }
  // Text centred on (cx, cy).
  void text_centred(const Font& font, const std::string& s, int cx, int cy, float px, Rgb c, bool vertical = false) {
    TextMask m = render_text(font, s, px);
    if (vertical) text(font, s, cx - m.h / 2, cy - m.w / 2, px, c, true);
    else text(font, s, cx - m.w / 2, cy - m.h / 2, px, c);
  }
  int text_width(const Font& font, const std::string& s, float px) const { return render_text(font, s, px).w; }

  void write_png(const std::string& path) const {
    std::vector<uint8_t> png;  // encoded in memory, then written once
    auto append = [](void* out, void* data, int n) {
      auto* p = static_cast<const uint8_t*>(data);
      static_cast<std::vector<uint8_t>*>(out)->insert(static_cast<std::vector<uint8_t>*>(out)->end(), p, p + n);
    };
    if (!stbi_write_png_to_func(append, &png, w_, h_, 3, px_.data(), w_ * 3))
      throw std::runtime_error("cannot encode the PNG for " + path);
    heed::write_file_atomically("plot::write_png", path, png);
  }

 private:
  int w_, h_;
  std::vector<uint8_t> px_;  // (h, w, 3) RGB
};

// Width and height from a PNG file's IHDR chunk, after checking the 8-byte signature;
// {0, 0} when the file is missing or is not a PNG. Used by the smoke run to check output.
inline std::pair<int, int> png_size(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  unsigned char b[24] = {0};
  if (!f.read(reinterpret_cast<char*>(b), 24)) return {0, 0};
  const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  if (!std::equal(sig, sig + 8, b) || std::string(reinterpret_cast<char*>(b + 12), 4) != "IHDR") return {0, 0};
  auto be32 = [&](int o) { return int(b[o]) << 24 | int(b[o + 1]) << 16 | int(b[o + 2]) << 8 | int(b[o + 3]); };
  return {be32(16), be32(20)};
}

}  // namespace plot
