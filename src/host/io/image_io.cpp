// @file image_io.cpp: PNG/HDR/PFM/EXR output, written atomically: PNG by a parallel zlib encoder (stb_image_write
// when built without zlib), HDR by stb_image_write, PFM by a small writer here, EXR by OpenEXR.
#include "tracer/host/image_io.h"

#include <stb_image_write.h>
#if TRACER_HAVE_ZLIB
#include <zlib.h>
#endif
#if TRACER_HAVE_OPENEXR
#include <Imath/ImathBox.h>
#include <Imath/half.h>
#include <OpenEXR/ImfChannelList.h>
#include <OpenEXR/ImfFrameBuffer.h>
#include <OpenEXR/ImfHeader.h>
#include <OpenEXR/ImfInputFile.h>
#include <OpenEXR/ImfOutputFile.h>
#include <OpenEXR/ImfStringAttribute.h>
#include <OpenEXR/ImfThreading.h>
#endif

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <stdexcept>
#include <utility>

#include "tracer/host/file_util.h"
#include "tracer/host/thread_pool.h"

namespace tracer {

static std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

ImageFormat FormatFromPath(const std::string& path) {
  std::string p = Lower(path);
  auto ends = [&](const char* e) {
    return p.size() >= std::strlen(e) && p.compare(p.size() - std::strlen(e), std::string::npos, e) == 0;
  };
  if (ends(".png")) return ImageFormat::kPng;
  if (ends(".hdr")) return ImageFormat::kHdr;
  if (ends(".pfm")) return ImageFormat::kPfm;
  if (ends(".exr")) return ImageFormat::kExr;
  return ImageFormat::kUnknown;
}

bool ExrSupported() { return TRACER_HAVE_OPENEXR != 0; }

#if TRACER_HAVE_OPENEXR
namespace {

const char* const kRgb[3] = {"R", "G", "B"};

// Writes tmp or throws (OpenEXR reports failures as exceptions derived from std::exception): R, G, B, then each
// layer's channels as "layer.channel".
void WriteExr(const std::string& tmp, const std::vector<float>& rgb, int w, int h, const ImageExtras& extras) {
  struct Channel {
    std::string name;
    const float* first;  // the channel's value at pixel 0
    size_t stride;       // floats from one pixel to the next
    bool half;           // --exr-half: R, G, B only (a layer's depth 1e10 or positions past 65504 need floats)
  };
  const size_t pixels = static_cast<size_t>(w) * static_cast<size_t>(h);
  std::vector<Channel> channels;
  for (int c = 0; c < 3; ++c) channels.push_back({kRgb[c], rgb.data() + c, 3, extras.half});
  for (const ImageLayer& layer : extras.layers) {
    const size_t n = layer.channels.size();
    if (!layer.values || layer.values->size() != pixels * n)
      throw std::runtime_error("layer '" + layer.name + "' does not hold " + std::to_string(n) + " values per pixel");
    for (size_t c = 0; c < n; ++c)
      channels.push_back({layer.name + "." + layer.channels[c], layer.values->data() + c, n, false});
  }
  Imf::Header header(w, h);
  header.compression() = Imf::ZIP_COMPRESSION;
  for (const Channel& c : channels) header.channels().insert(c.name, Imf::Channel(c.half ? Imf::HALF : Imf::FLOAT));
  for (const auto& [name, value] : extras.attributes) header.insert(name, Imf::StringAttribute(value));
  std::vector<std::vector<Imath::half>> halves(channels.size());
  Imf::FrameBuffer frame;
  for (size_t k = 0; k < channels.size(); ++k) {
    const Channel& c = channels[k];
    if (c.half) {
      halves[k].resize(pixels);
      for (size_t i = 0; i < pixels; ++i) halves[k][i] = Imath::half(std::min(c.first[i * c.stride], 65504.0f));
      frame.insert(c.name, Imf::Slice(Imf::HALF, reinterpret_cast<char*>(halves[k].data()), sizeof(Imath::half),
                                      static_cast<size_t>(w) * sizeof(Imath::half)));
    } else {
      frame.insert(c.name, Imf::Slice(Imf::FLOAT, reinterpret_cast<char*>(const_cast<float*>(c.first)),
                                      c.stride * sizeof(float), static_cast<size_t>(w) * c.stride * sizeof(float)));
    }
  }
  // Each block of 16 rows is ZIP-compressed on its own, so OpenEXR compresses them on its thread pool (the bytes do
  // not depend on the thread count). Without one, an 8K frame's file took many seconds.
  if (Imf::globalThreadCount() < ThreadPool::CoresAvailable()) Imf::setGlobalThreadCount(ThreadPool::CoresAvailable());
  Imf::OutputFile file(tmp.c_str(), header, Imf::globalThreadCount());
  file.setFrameBuffer(frame);
  file.writePixels(h);
}

}  // namespace
#endif

std::vector<float> ReadExrChannels(const std::string& path, const std::vector<std::string>& names, int& w, int& h,
                                   std::map<std::string, std::string>* attributes) {
#if TRACER_HAVE_OPENEXR
  try {
    Imf::InputFile file(path.c_str());
    for (const std::string& name : names)
      if (!file.header().channels().findChannel(name)) throw std::runtime_error("no channel " + name);
    const Imath::Box2i window = file.header().dataWindow();
    w = window.max.x - window.min.x + 1;
    h = window.max.y - window.min.y + 1;
    const size_t n = names.size();
    std::vector<float> values(static_cast<size_t>(w) * h * n);
    const size_t row = static_cast<size_t>(w) * n;
    // The slices' base is where pixel (0, 0) would be, for a data window that need not start there.
    char* base =
        reinterpret_cast<char*>(values.data()) - (static_cast<ptrdiff_t>(window.min.y) * static_cast<ptrdiff_t>(row) +
                                                  static_cast<ptrdiff_t>(window.min.x) * static_cast<ptrdiff_t>(n)) *
                                                     static_cast<ptrdiff_t>(sizeof(float));
    Imf::FrameBuffer frame;
    for (size_t c = 0; c < n; ++c)
      frame.insert(names[c], Imf::Slice(Imf::FLOAT, base + c * sizeof(float), n * sizeof(float), row * sizeof(float)));
    file.setFrameBuffer(frame);
    file.readPixels(window.min.y, window.max.y);
    if (attributes)
      for (auto it = file.header().begin(); it != file.header().end(); ++it)
        if (const auto* s = dynamic_cast<const Imf::StringAttribute*>(&it.attribute()))
          (*attributes)[it.name()] = s->value();
    return values;
  } catch (const std::exception& e) {
    throw std::runtime_error(path + ": cannot read OpenEXR (" + e.what() + ")");
  }
#else
  (void)names, (void)w, (void)h, (void)attributes;
  throw std::runtime_error(path + ": this build has no OpenEXR support (apt-get install libopenexr-dev, rebuild)");
#endif
}

std::vector<float> ReadExr(const std::string& path, int& w, int& h, std::map<std::string, std::string>* attributes) {
  return ReadExrChannels(path, {"R", "G", "B"}, w, h, attributes);
}

float LinearToSrgb(float v) {
  v = std::min(std::max(v, 0.0f), 1.0f);
  return v <= 0.0031308f ? 12.92f * v : 1.055f * std::pow(v, 1.0f / 2.4f) - 0.055f;
}

uint8_t ToneMapToSrgb8(float linear, float gain) {
  return static_cast<uint8_t>(std::lround(255.0f * LinearToSrgb(linear * gain)));
}

// Tone maps the whole image to 8-bit sRGB on every core: at 8K that is 100 M pow() calls, about as long as
// the compression itself, so it must be parallel too. Each value is computed alone, so the bytes do not
// depend on the thread count.
static std::vector<uint8_t> ToneMapParallel(ThreadPool& pool, const std::vector<float>& rgb, float exposure) {
  const float gain = std::exp2(exposure);
  std::vector<uint8_t> px(rgb.size());
  pool.ParallelFor(rgb.size(), 1 << 16, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) px[i] = ToneMapToSrgb8(rgb[i], gain);
  });
  return px;
}

#if TRACER_HAVE_ZLIB

// Rows per strip. Each strip of filtered rows is deflated on its own by one thread (see WritePngZlib). The
// number is fixed, not derived from the thread count, so the file's bytes are the same on every machine; 64
// rows make 68 strips at 8K (enough to keep 16 cores busy) of about 1.5 MB each, so starting each strip with
// an empty deflate window costs well under 1% of the file size.
constexpr int kPngStripRows = 64;
// zlib level 1: noise, not the match search, decides the size of a path-traced image, so higher levels cost
// time for little. On the 8K benchmark one core deflates in 1.9 s where stb took 10.8 s, and with the Up
// filter the file is smaller than stb's (51 MB against 72 MB). docs/ARCHITECTURE.md says more.
constexpr int kPngZlibLevel = 1;

struct PngStrip {
  std::vector<uint8_t> deflated;  // raw deflate data, ending byte-aligned (sync flush) or final (finish)
  uLong adler = 0;                // Adler-32 of this strip's filtered bytes alone
  size_t filteredBytes = 0;
  bool ok = false;  // set by DeflatePngStrip, which runs on a pool thread and so must not throw
};

// Filters rows [y0, y1) with PNG filter 2 (Up: each byte minus the byte above it) and deflates them as raw
// deflate (no zlib header). Up is the cheapest filter that helps here: it needs the row above, which is in
// px even for a strip's first row, so strips stay independent. Every strip but the last ends with
// Z_SYNC_FLUSH (an empty stored block that ends on a byte boundary, no "final" bit), so the strips'
// outputs concatenate into one valid deflate stream; the last ends with Z_FINISH.
static void DeflatePngStrip(const uint8_t* px, int w, int y0, int y1, bool last, PngStrip& out) {
  const size_t stride = static_cast<size_t>(w) * 3;
  std::vector<uint8_t> filtered((y1 - y0) * (stride + 1));
  for (int y = y0; y < y1; ++y) {
    uint8_t* dst = &filtered[(y - y0) * (stride + 1)];
    const uint8_t* row = px + static_cast<size_t>(y) * stride;
    if (y == 0) {  // nothing above the top row: filter 0 (None), which is what Up would give
      dst[0] = 0;
      std::memcpy(dst + 1, row, stride);
      continue;
    }
    dst[0] = 2;
    for (size_t i = 0; i < stride; ++i) dst[1 + i] = static_cast<uint8_t>(row[i] - row[i - stride]);
  }
  out.filteredBytes = filtered.size();
  out.adler = adler32(adler32(0, Z_NULL, 0), filtered.data(), static_cast<uInt>(filtered.size()));
  z_stream zs{};
  // windowBits -15: raw deflate, as the strips share the one zlib header and Adler-32 that WritePngZlib adds.
  if (deflateInit2(&zs, kPngZlibLevel, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) return;
  // deflateBound covers one deflate call of the whole input; the sync flush's empty stored block adds 5 bytes.
  out.deflated.resize(deflateBound(&zs, filtered.size()) + 16);
  zs.next_in = filtered.data();
  zs.avail_in = static_cast<uInt>(filtered.size());
  zs.next_out = out.deflated.data();
  zs.avail_out = static_cast<uInt>(out.deflated.size());
  const int rc = deflate(&zs, last ? Z_FINISH : Z_SYNC_FLUSH);
  out.ok = last ? rc == Z_STREAM_END : rc == Z_OK && zs.avail_in == 0 && zs.avail_out > 0;
  out.deflated.resize(zs.total_out);
  deflateEnd(&zs);
}

static void PutBigEndian32(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v >> 24);
  p[1] = static_cast<uint8_t>(v >> 16);
  p[2] = static_cast<uint8_t>(v >> 8);
  p[3] = static_cast<uint8_t>(v);
}

// One PNG chunk: length, type, the data (given in parts, so a strip is not copied to add a prefix or suffix),
// and the CRC-32 of type and data. Returns false with errno set when the write fails.
static bool WritePngChunk(std::FILE* f, const char* type,
                          std::initializer_list<std::pair<const uint8_t*, size_t>> parts) {
  size_t length = 0;
  for (const auto& part : parts) length += part.second;
  uint8_t head[8];
  PutBigEndian32(head, static_cast<uint32_t>(length));
  std::memcpy(head + 4, type, 4);
  uLong crc = crc32(crc32(0, Z_NULL, 0), head + 4, 4);
  bool ok = std::fwrite(head, 1, 8, f) == 8;
  for (const auto& part : parts) {
    crc = crc32(crc, part.first, static_cast<uInt>(part.second));
    ok = ok && std::fwrite(part.first, 1, part.second, f) == part.second;
  }
  uint8_t tail[4];
  PutBigEndian32(tail, static_cast<uint32_t>(crc));
  return ok && std::fwrite(tail, 1, 4, f) == 4;
}

// An 8-bit RGB PNG (no interlace, chunks IHDR, IDAT..., IEND, as stb_image_write writes) whose image data is
// deflated in horizontal strips on every core, the way parallel PNG writers do it: the zlib stream is one
// 2-byte header, the strips' raw deflate outputs in order (each is one IDAT chunk), and the Adler-32 of all
// filtered bytes, combined from the strips' own with adler32_combine. Any PNG decoder reads it as one stream.
static bool WritePngZlib(ThreadPool& pool, const std::string& path, const std::vector<uint8_t>& px, int w, int h) {
  const int numStrips = (h + kPngStripRows - 1) / kPngStripRows;
  std::vector<PngStrip> strips(numStrips);
  pool.ParallelFor(strips.size(), 1, [&](size_t begin, size_t end) {
    for (size_t s = begin; s < end; ++s) {
      const int y0 = static_cast<int>(s) * kPngStripRows;
      DeflatePngStrip(px.data(), w, y0, std::min(h, y0 + kPngStripRows), s + 1 == strips.size(), strips[s]);
    }
  });
  uLong adler = adler32(0, Z_NULL, 0);
  for (const PngStrip& s : strips) {
    if (!s.ok) throw std::runtime_error(path + ": zlib could not deflate the image");
    adler = adler32_combine(adler, s.adler, static_cast<z_off_t>(s.filteredBytes));
  }

  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return false;
  static const uint8_t kSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  uint8_t ihdr[13] = {0, 0, 0, 0, 0, 0, 0, 0, 8, 2, 0, 0, 0};  // 8 bits, colour type 2 (RGB), no interlace
  PutBigEndian32(ihdr, static_cast<uint32_t>(w));
  PutBigEndian32(ihdr + 4, static_cast<uint32_t>(h));
  static const uint8_t kZlibHeader[2] = {0x78, 0x01};  // deflate, 32 KiB window, "fastest" level hint
  uint8_t adlerBytes[4];
  PutBigEndian32(adlerBytes, static_cast<uint32_t>(adler));
  bool ok = std::fwrite(kSignature, 1, 8, f) == 8 && WritePngChunk(f, "IHDR", {{ihdr, 13}});
  for (size_t s = 0; s < strips.size() && ok; ++s) {
    const bool first = s == 0, last = s + 1 == strips.size();
    ok = WritePngChunk(f, "IDAT",
                       {{kZlibHeader, first ? 2 : 0},
                        {strips[s].deflated.data(), strips[s].deflated.size()},
                        {adlerBytes, last ? 4 : 0}});
  }
  ok = ok && WritePngChunk(f, "IEND", {});
  return std::fclose(f) == 0 && ok;  // errno: from fclose when it failed, else from the failed write
}

#endif  // TRACER_HAVE_ZLIB

static bool WritePng(const std::string& path, const std::vector<float>& rgb, int w, int h, float exposure) {
  ThreadPool pool(ThreadPool::ThreadsFor(0));
  const std::vector<uint8_t> px = ToneMapParallel(pool, rgb, exposure);
#if TRACER_HAVE_ZLIB
  return WritePngZlib(pool, path, px, w, h);
#else
  // Without zlib's headers (zlib1g-dev) at build time: stb_image_write, one thread, at its default level.
  return stbi_write_png(path.c_str(), w, h, 3, px.data(), w * 3) != 0;
#endif
}

static bool WritePfm(const std::string& path, const std::vector<float>& rgb, int w, int h) {
  std::ofstream f(path, std::ios::binary);
  if (!f) return false;
  f << "PF\n" << w << " " << h << "\n-1.0\n";  // negative scale: little-endian
  for (int y = h - 1; y >= 0; --y)             // PFM stores the bottom row first
    f.write(reinterpret_cast<const char*>(&rgb[static_cast<size_t>(y) * w * 3]),
            static_cast<std::streamsize>(w) * 3 * 4);
  f.flush();
  return static_cast<bool>(f);
}

std::vector<float> ReadPfm(const std::string& path, int& w, int& h) {
  std::ifstream f(path, std::ios::binary);
  std::string magic;
  float scale;
  if (!(f >> magic >> w >> h >> scale) || magic != "PF" || w <= 0 || h <= 0)
    throw std::runtime_error(path + ": not a colour PFM file");
  f.get();
  std::vector<float> rgb(static_cast<size_t>(w) * h * 3);
  for (int y = h - 1; y >= 0; --y)
    f.read(reinterpret_cast<char*>(&rgb[static_cast<size_t>(y) * w * 3]), static_cast<std::streamsize>(w) * 3 * 4);
  if (!f) throw std::runtime_error(path + ": truncated PFM file");
  return rgb;
}

size_t WriteImage(const std::string& path, const std::vector<float>& rgbIn, int w, int h, float exposure,
                  const ImageExtras& extras) {
  (void)extras;  // (EXR only)
  ImageFormat fmt = FormatFromPath(path);
  if (fmt == ImageFormat::kUnknown)
    throw std::runtime_error(path + ": unknown image extension (use .png, .hdr, .pfm or .exr)");
  if (fmt == ImageFormat::kExr && !ExrSupported())
    throw std::runtime_error(path + ": this build has no OpenEXR support (apt-get install libopenexr-dev, rebuild)");
  if (rgbIn.size() != static_cast<size_t>(w) * h * 3) throw std::runtime_error("image size mismatch");
  // Copied only when a value must be replaced: at 8K the copy is 400 MB.
  const size_t nonFinite =
      static_cast<size_t>(std::count_if(rgbIn.begin(), rgbIn.end(), [](float v) { return !std::isfinite(v); }));
  std::vector<float> cleaned;
  if (nonFinite) {
    cleaned = rgbIn;
    for (float& v : cleaned)
      if (!std::isfinite(v)) v = 0.0f;
  }
  const std::vector<float>& rgb = nonFinite ? cleaned : rgbIn;
  AtomicWriteFile(path, [&](const std::string& tmp) {
    bool ok = false;
    if (fmt == ImageFormat::kPng) {
      ok = WritePng(tmp, rgb, w, h, exposure);
    } else if (fmt == ImageFormat::kHdr) {
      ok = stbi_write_hdr(tmp.c_str(), w, h, 3, rgb.data()) != 0;
    } else if (fmt == ImageFormat::kExr) {
#if TRACER_HAVE_OPENEXR
      try {
        WriteExr(tmp, rgb, w, h, extras);
        ok = true;
      } catch (const std::exception& e) {
        std::remove(tmp.c_str());
        throw std::runtime_error(path + ": cannot write image (" + e.what() + ")");
      }
#endif
    } else {
      ok = WritePfm(tmp, rgb, w, h);
    }
    if (!ok) {
      // Thrown here, not returned as false, so the message says "image" as it always has; AtomicWriteFile
      // removes its temporary file only on a false return, so this removes it.
      const int err = errno;
      std::remove(tmp.c_str());
      throw std::runtime_error(path + ": cannot write image (" + std::strerror(err) + ")");
    }
    return true;
  });
  return nonFinite;
}

}  // namespace tracer
