// Image headers read and checked before a decoder sees the file (image_header.hpp).
#include "image_header.hpp"

#include "input_file.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <string_view>

namespace sieve::render::detail {

namespace {

// Bounds-checked reads of `size` bytes: a field past the end reads as absent.
struct bytes_view {
  const unsigned char* data;
  std::size_t size;
  bool has(std::uint64_t at, std::uint64_t n) const { return at <= size && n <= size - at; }
  std::uint32_t u8(std::uint64_t at) const { return data[at]; }
  std::uint32_t le16(std::uint64_t at) const { return data[at] | data[at + 1] << 8; }
  std::uint32_t be16(std::uint64_t at) const { return data[at] << 8 | data[at + 1]; }
  std::uint32_t le32(std::uint64_t at) const { return le16(at) | le16(at + 2) << 16; }
  std::uint32_t be32(std::uint64_t at) const { return be16(at) << 16 | be16(at + 2); }
  bool starts(std::string_view s) const {
    return size >= s.size() && std::equal(s.begin(), s.end(), data, [](char a, unsigned char b) {
             return static_cast<unsigned char>(a) == b;
           });
  }
};

class header_reader {
 public:
  header_reader(bytes_view b, const std::string& name, const std::string& what, const image_limits& limits)
      : b_(b), name_(name), what_(what), limits_(limits) {}
  [[noreturn]] void refuse(const std::string& why) const { fail(name_ + ": the " + what_ + " " + why); }

  image_header png() const;
  image_header jpeg() const;
  image_header tga() const;
  image_header tiff() const;
  image_header exr() const;
  image_header hdr() const;

 private:
  void tga_indices(std::uint64_t at, std::uint64_t pixels, std::uint32_t index_bytes, bool rle, std::uint32_t entries) const;

  bytes_view b_;
  const std::string& name_;
  const std::string& what_;
  const image_limits& limits_;
};

image_header header_reader::png() const {
  image_header h{image_kind::png};
  if (!b_.has(16, 8)) return h;
  h.width = b_.be32(16);  // straight from IHDR, before libpng checks the chunk: an absurd size is refused for that
  h.height = b_.be32(20);
  static constexpr std::uint32_t samples[7] = {1, 0, 3, 3, 2, 0, 4};  // by colour type (3: a palette, decoded to RGB)
  if (b_.has(25, 1)) h.samples = b_.u8(25) < 7 ? samples[b_.u8(25)] : 0;
  return h;
}

// The markers in order: SOFn gives the size and components; every SOS (a scan) is counted, and the
// entropy-coded data after it skipped to the next marker (0xFF followed by neither 0x00, a fill
// 0xFF nor a restart marker).
image_header header_reader::jpeg() const {
  image_header h{image_kind::jpeg};
  std::uint64_t at = 2;
  while (at + 1 < b_.size) {
    if (b_.u8(at) != 0xFF) {  // stray bytes between segments (libjpeg skips them with a warning)
      ++at;
      continue;
    }
    const std::uint32_t m = b_.u8(at + 1);
    if (m == 0xFF) {  // fill
      ++at;
      continue;
    }
    if (m == 0xD9) break;  // EOI
    if (m == 0x01 || (m >= 0xD0 && m <= 0xD8) || m == 0x00) {
      at += 2;
      continue;
    }
    if (!b_.has(at + 2, 2)) break;
    const std::uint32_t length = b_.be16(at + 2);
    if (length < 2 || !b_.has(at + 2, length)) break;  // cut short: the decoder reports it
    const bool sof = m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC;
    if (sof && h.width == 0 && length >= 8) {
      h.height = b_.be16(at + 5);
      h.width = b_.be16(at + 7);
      h.samples = b_.u8(at + 9);
    }
    at += 2 + length;
    if (m != 0xDA) continue;
    if (++h.scans > max_jpeg_scans) {
      refuse("is a JPEG file of more than " + std::to_string(max_jpeg_scans) +
             " scans (a progressive image has about 10; each scan is decoded over the whole image)");
    }
    while (at + 1 < b_.size) {
      const std::uint32_t next = b_.u8(at + 1);
      if (b_.u8(at) == 0xFF && next != 0x00 && next != 0xFF && !(next >= 0xD0 && next <= 0xD7)) break;
      ++at;
    }
  }
  return h;
}

// Every colour index of a colour-mapped TGA image (uncompressed, or run-length packets) below the
// map's `entries`, and all the image's pixels present.
void header_reader::tga_indices(std::uint64_t at, std::uint64_t pixels, std::uint32_t index_bytes, bool rle,
                                std::uint32_t entries) const {
  auto check = [&](std::uint64_t i) {
    if (!b_.has(i, index_bytes)) refuse("(a TGA file) ends before its last pixel");
    const std::uint32_t index = index_bytes == 1 ? b_.u8(i) : b_.le16(i);
    if (index >= entries) {
      refuse("(a TGA file) has a pixel of colour index " + std::to_string(index) + ", past its colour map of " +
             std::to_string(entries) + " entries");
    }
  };
  for (std::uint64_t done = 0; done < pixels;) {
    std::uint64_t n = 1;
    bool run = false;
    if (rle) {
      if (!b_.has(at, 1)) refuse("(a TGA file) ends before its last pixel");
      n = 1 + (b_.u8(at) & 0x7F);
      run = (b_.u8(at) & 0x80) != 0;
      ++at;
    }
    n = std::min(n, pixels - done);
    for (std::uint64_t k = 0; k < (run ? 1 : n); ++k, at += index_bytes) check(at);
    done += n;
  }
}

// The 18-byte header; a colour-mapped image (types 1 and 9) is read whole for its indices.
image_header header_reader::tga() const {
  image_header h{image_kind::tga};
  if (!b_.has(0, 18)) return h;
  const std::uint32_t id_length = b_.u8(0), map_type = b_.u8(1), type = b_.u8(2);
  const std::uint32_t map_first = b_.le16(3), map_entries = b_.le16(5), entry_bits = b_.u8(7);
  h.width = b_.le16(12);
  h.height = b_.le16(14);
  const std::uint32_t bits = b_.u8(16);
  h.samples = type == 3 || type == 11 ? 1 + (bits > 8) : 3 + (bits == 32);
  if (type != 1 && type != 9) return h;
  check_image_size(h.width, h.height, name_, what_, limits_);  // before its pixels are read
  if (map_type != 1) refuse("(a TGA file) is colour-mapped but has no colour map");
  if (entry_bits != 15 && entry_bits != 16 && entry_bits != 24 && entry_bits != 32)
    refuse("(a TGA file) has colour map entries of " + std::to_string(entry_bits) + " bits (15, 16, 24 or 32 are read)");
  if (bits != 8 && bits != 16)
    refuse("(a TGA file) has colour indices of " + std::to_string(bits) + " bits (8 or 16 are read)");
  if (map_entries == 0) refuse("(a TGA file) has an empty colour map");
  if (map_first != 0) {
    refuse("(a TGA file) has a colour map that starts at entry " + std::to_string(map_first) +
           " (sieve reads maps that start at 0: OpenImageIO 2.4 offsets every index by the first entry)");
  }
  const std::uint64_t map_bytes = std::uint64_t{map_entries} * (entry_bits == 15 ? 2 : entry_bits / 8);
  const std::uint64_t pixels_at = 18 + id_length + map_bytes;
  if (!b_.has(0, pixels_at)) refuse("(a TGA file) ends inside its colour map");
  tga_indices(pixels_at, h.width * h.height, bits / 8, type == 9, map_entries);
  return h;
}

// The first image file directory: width, height, samples a pixel and the tile size.
image_header header_reader::tiff() const {
  image_header h{image_kind::tiff};
  if (!b_.has(0, 8)) return h;
  const bool le = b_.u8(0) == 'I';
  auto u16 = [&](std::uint64_t at) { return le ? b_.le16(at) : b_.be16(at); };
  auto u32 = [&](std::uint64_t at) { return le ? b_.le32(at) : b_.be32(at); };
  const std::uint64_t ifd = u32(4);
  if (!b_.has(ifd, 2)) return h;
  const std::uint32_t entries = u16(ifd);
  std::uint64_t tile_w = 0, tile_h = 0;
  h.samples = 1;
  for (std::uint32_t e = 0; e < entries && b_.has(ifd + 2 + 12 * std::uint64_t{e}, 12); ++e) {
    const std::uint64_t at = ifd + 2 + 12 * std::uint64_t{e};
    const std::uint32_t tag = u16(at), type = u16(at + 2), count = u32(at + 4);
    if (type != 3 && type != 4) continue;  // SHORT or LONG
    if (count != 1) continue;
    const std::uint64_t value = type == 3 ? u16(at + 8) : u32(at + 8);
    if (tag == 256) h.width = value;
    else if (tag == 257) h.height = value;
    else if (tag == 277) h.samples = static_cast<std::uint32_t>(value);
    else if (tag == 322) tile_w = value;
    else if (tag == 323) tile_h = value;
  }
  // A tile is decoded whole, every sample of it (as floats at most).
  if (tile_w && tile_h) check_image_samples(tile_w, tile_h, h.samples, sizeof(float), name_, what_ + " (one tile)", limits_);
  return h;
}

// The first header's attributes (name, type, size, value): dataWindow's size and the channels.
image_header header_reader::exr() const {
  image_header h{image_kind::exr};
  std::uint64_t at = 8;
  auto text = [&](std::uint64_t& i) {  // a NUL-ended name; empty where it does not end in the file
    const std::uint64_t from = i;
    while (i < b_.size && b_.data[i] != 0) ++i;
    if (i >= b_.size) return std::string();
    return std::string(reinterpret_cast<const char*>(b_.data + from), reinterpret_cast<const char*>(b_.data + i++));
  };
  while (at < b_.size && b_.data[at] != 0) {
    const std::string name = text(at), type = text(at);
    if (name.empty() || type.empty() || !b_.has(at, 4)) break;
    const std::uint64_t length = b_.le32(at);
    at += 4;
    if (!b_.has(at, length)) break;
    if (name == "dataWindow" && type == "box2i" && length == 16) {
      const auto s32 = [&](std::uint64_t i) { return static_cast<std::int64_t>(static_cast<std::int32_t>(b_.le32(i))); };
      const std::int64_t w = s32(at + 8) - s32(at) + 1, hh = s32(at + 12) - s32(at + 4) + 1;
      if (w <= 0 || hh <= 0) refuse("has no pixels (an empty dataWindow)");
      h.width = static_cast<std::uint64_t>(w);
      h.height = static_cast<std::uint64_t>(hh);
    } else if (name == "channels" && type == "chlist") {
      std::uint64_t i = at;
      h.samples = 0;
      while (i < at + length && b_.data[i] != 0 && !text(i).empty()) {
        i += 16;  // pixel type, pLinear, reserved, x and y sampling
        ++h.samples;
      }
    }
    at += length;
  }
  return h;
}

// The lines after "#?RADIANCE" up to the blank one, then the resolution line ("-Y H +X W").
image_header header_reader::hdr() const {
  image_header h{image_kind::hdr};
  h.samples = 3;
  std::uint64_t at = 0;
  bool blank = false;
  while (at < b_.size && at < (1u << 16)) {
    const std::uint64_t end = std::find(b_.data + at, b_.data + b_.size, '\n') - b_.data;
    if (end >= b_.size) break;
    const std::string line(reinterpret_cast<const char*>(b_.data + at), reinterpret_cast<const char*>(b_.data + end));
    at = end + 1;
    if (!blank) {
      blank = line.empty();
      continue;
    }
    char a1[3] = {}, a2[3] = {};
    unsigned long long n1 = 0, n2 = 0;
    if (std::sscanf(line.c_str(), "%2s %llu %2s %llu", a1, &n1, a2, &n2) == 4) {
      const bool y_first = a1[1] == 'Y';
      h.width = y_first ? n2 : n1;
      h.height = y_first ? n1 : n2;
    }
    break;
  }
  return h;
}

}  // namespace

image_kind sniff_image(const unsigned char* data, std::size_t size, const std::string& name) {
  const bytes_view b{data, size};
  if (b.starts("\x89PNG\r\n\x1a\n")) return image_kind::png;
  if (b.starts("\xff\xd8\xff")) return image_kind::jpeg;
  if (b.starts(std::string_view("II*\0", 4)) || b.starts(std::string_view("MM\0*", 4))) return image_kind::tiff;
  if (b.starts("\x76\x2f\x31\x01")) return image_kind::exr;
  if (is_radiance_hdr(data, size)) return image_kind::hdr;
  std::string ext = std::filesystem::path(name).extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext == ".tga" ? image_kind::tga : image_kind::unknown;
}

void check_image_samples(std::uint64_t width, std::uint64_t height, std::uint64_t samples, std::uint64_t sample_bytes,
                         const std::string& name, const std::string& what, const image_limits& limits) {
  if (width > limits.max_side || height > limits.max_side) check_image_size(width, height, name, what, limits);
  if (samples == 0) return;
  // width and height below 2^32 (max_side), samples below 2^32, sample_bytes small: no overflow in
  // the division's order below
  const std::uint64_t pixel_bytes = samples * sample_bytes;
  if (pixel_bytes > limits.max_bytes || width * height > limits.max_bytes / pixel_bytes) {
    fail(name + ": the " + what + " is " + std::to_string(width) + " x " + std::to_string(height) + " pixels of " +
         std::to_string(samples) + " samples (" + std::to_string(pixel_bytes) + " bytes a pixel), more than the limit of " +
         std::to_string(limits.max_bytes >> 20) + " MiB decoded");
  }
}

image_header check_image_header(const unsigned char* data, std::size_t size, image_kind kind, const std::string& name,
                                const std::string& what, const image_limits& limits) {
  const header_reader r({data, size}, name, what, limits);
  image_header h;
  switch (kind) {
    case image_kind::png: h = r.png(); break;
    case image_kind::jpeg: h = r.jpeg(); break;
    case image_kind::tga: h = r.tga(); break;
    case image_kind::tiff: h = r.tiff(); break;
    case image_kind::exr: h = r.exr(); break;
    case image_kind::hdr: h = r.hdr(); break;
    case image_kind::unknown: return h;
  }
  if (h.width && h.height) {
    check_image_size(h.width, h.height, name, what, limits);  // the float RGB sieve keeps
    // The decoder holds every sample of a pixel, whichever it is asked for (as floats at most).
    if (h.samples > 4) check_image_samples(h.width, h.height, h.samples, sizeof(float), name, what, limits);
  }
  return h;
}

}  // namespace sieve::render::detail
