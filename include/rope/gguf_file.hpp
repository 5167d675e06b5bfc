// rope::gguf_read: the header and metadata of a GGUF file (versions 2 and 3), and the RoPE
// tensors it names (rope_freqs, rope_factors_long, rope_factors_short); no other tensor data is
// read. Every length, count and offset is checked against the file's size before it is used, so
// a truncated or corrupt file is an error naming the byte offset and what was expected there
// (E77), never a read outside the file or an allocation larger than it.
#pragma once

#include <rope/config.hpp>
#if !defined(ROPE_BELOW_CXX17)  // config.hpp stops older standards with one #error

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <istream>
#include <stdexcept>
#include <string>
#include <vector>

#include <rope/gguf.hpp>

namespace rope {
inline namespace ROPE_DETAIL_ISA {

/// What gguf_read read of a GGUF file.
struct GgufFile {
  std::uint32_t version = 0;       ///< 2 or 3
  std::uint64_t tensor_count = 0;  ///< tensors the file describes (their data is not read)
  /// Numbers (every integer and float type, as double), bools, strings and arrays of numbers.
  GgufMetadata metadata;
  /// Keys whose values are arrays of strings, bools or arrays (the tokenizer's), passed over.
  std::vector<std::string> skipped_keys;
  /// The RoPE tensors, converted to double (empty when absent).
  GgufTensors tensors;
};

/// Reads the GGUF file at `path`. Throws std::invalid_argument (E77) if the file cannot be read,
/// is not GGUF version 2 or 3, or is truncated or corrupt: the message names the byte offset and
/// what was expected there.
GgufFile gguf_read(const std::string& path);

/// gguf_read of a stream holding a GGUF file from its current position to its end; `name`
/// stands for it in messages.
GgufFile gguf_read(std::istream& in, const std::string& name);

/// gguf_rope of a file gguf_read read: its metadata and RoPE tensors. Throws as gguf_rope does,
/// and std::invalid_argument (E59) where a key gguf_rope reads was skipped (an array of strings,
/// bools or arrays: it would read as absent).
GgufRope gguf_rope(const GgufFile& file, const std::string& layer_type = "full_attention",
                   double sequence_length = 0);

/// gguf_rope of the file at `path`: gguf_rope(gguf_read(path), ...).
GgufRope gguf_rope_file(const std::string& path, const std::string& layer_type = "full_attention",
                        double sequence_length = 0);

// ---- implementation ----------------------------------------------------------------------------

namespace detail {

// Reads a GGUF stream with every read checked against its size.
class GgufReader {
 public:
  GgufReader(std::istream& in, const std::string& name) : in_(in), name_(name) {
    const std::streampos start = in.tellg();
    in.seekg(0, std::ios::end);
    const std::streampos end = in.tellg();
    if (!in || start < 0 || end < start) error(0, "a stream whose size can be read");
    in.seekg(start);
    begin_ = static_cast<std::uint64_t>(start);
    size_ = static_cast<std::uint64_t>(end - start);
  }

  std::uint64_t at() const { return at_; }
  std::uint64_t left() const { return size_ - at_; }
  std::uint64_t size() const { return size_; }

  [[noreturn]] void error(std::uint64_t offset, const std::string& expected) const {
    ROPE_THROW(std::invalid_argument, "rope: GGUF: " + name_ + ": at byte " +
                                          std::to_string(offset) + ": expected " + expected);
  }

  // n bytes from the current offset into out.
  void bytes(void* out, std::uint64_t n, const char* what) {
    if (n > left()) {
      error(at_, std::string(what) + " (" + std::to_string(n) + " bytes), but the file ends " +
                     std::to_string(left()) + " bytes later");
    }
    in_.clear();
    in_.seekg(static_cast<std::streamoff>(begin_ + at_));
    in_.read(static_cast<char*>(out), static_cast<std::streamsize>(n));
    if (!in_) error(at_, std::string(what) + ": the read failed");
    at_ += n;
  }
  void skip(std::uint64_t n, const char* what) {
    if (n > left()) {
      error(at_, std::string(what) + " (" + std::to_string(n) + " bytes), but the file ends " +
                     std::to_string(left()) + " bytes later");
    }
    at_ += n;
  }
  void seek(std::uint64_t offset) { at_ = offset; }

  // Little-endian integers, whatever the host.
  template <class U>
  U integer(const char* what) {
    unsigned char b[sizeof(U)];
    bytes(b, sizeof(U), what);
    U v = 0;
    for (std::size_t i = sizeof(U); i-- > 0;) v = static_cast<U>((v << 8) | b[i]);
    return v;
  }
  double f32(const char* what) {
    const std::uint32_t bits = integer<std::uint32_t>(what);
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return static_cast<double>(f);
  }
  double f64(const char* what) {
    const std::uint64_t bits = integer<std::uint64_t>(what);
    double d;
    std::memcpy(&d, &bits, sizeof d);
    return d;
  }
  // A uint64 count of things of at least `least` bytes each, which must fit in what is left.
  std::uint64_t count(const char* what, std::uint64_t least, const char* unit) {
    const std::uint64_t start = at_;
    const std::uint64_t n = integer<std::uint64_t>(what);
    if (n > left() / least) {
      error(start, std::string(what) + " of " + std::to_string(n) + " " + unit +
                       ", but the file ends " + std::to_string(left()) + " bytes later");
    }
    return n;
  }
  // A GGUF string: a uint64 length and that many bytes.
  std::string string(const char* what) {
    const std::uint64_t n = count(what, 1, "bytes");
    std::string s(static_cast<std::size_t>(n), '\0');
    bytes(s.data(), n, what);
    return s;
  }

 private:
  std::istream& in_;
  const std::string& name_;
  std::uint64_t begin_ = 0, size_ = 0, at_ = 0;
};

// GGUF's value types (gguf.h's gguf_type).
enum : std::uint32_t {
  kGgufU8 = 0,
  kGgufI8,
  kGgufU16,
  kGgufI16,
  kGgufU32,
  kGgufI32,
  kGgufF32,
  kGgufBool,
  kGgufString,
  kGgufArray,
  kGgufU64,
  kGgufI64,
  kGgufF64,
  kGgufTypes
};

// The bytes of one value of a fixed-size type, 0 for string and array.
inline std::uint64_t gguf_type_size(std::uint32_t type) {
  static const std::uint64_t sizes[kGgufTypes] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
  return sizes[type];
}

// A number of a numeric type (bool read separately).
inline double gguf_number_value(GgufReader& r, std::uint32_t type) {
  switch (type) {
    case kGgufU8:
      return r.integer<std::uint8_t>("a uint8 value");
    case kGgufI8:
      return static_cast<std::int8_t>(r.integer<std::uint8_t>("an int8 value"));
    case kGgufU16:
      return r.integer<std::uint16_t>("a uint16 value");
    case kGgufI16:
      return static_cast<std::int16_t>(r.integer<std::uint16_t>("an int16 value"));
    case kGgufU32:
      return r.integer<std::uint32_t>("a uint32 value");
    case kGgufI32:
      return static_cast<std::int32_t>(r.integer<std::uint32_t>("an int32 value"));
    case kGgufF32:
      return r.f32("a float32 value");
    case kGgufU64:
      return static_cast<double>(r.integer<std::uint64_t>("a uint64 value"));
    case kGgufI64:
      return static_cast<double>(
          static_cast<std::int64_t>(r.integer<std::uint64_t>("an int64 value")));
    default:
      return r.f64("a float64 value");
  }
}

inline std::uint32_t gguf_value_type(GgufReader& r) {
  const std::uint64_t start = r.at();
  const std::uint32_t type = r.integer<std::uint32_t>("a value type");
  if (type >= kGgufTypes) {
    r.error(start, "a value type 0 to 12, got " + std::to_string(type));
  }
  return type;
}

// Passes over one value of `type`: strings and arrays by their lengths, nested to depth 4.
inline void gguf_skip_value(GgufReader& r, std::uint32_t type, int depth) {
  if (type == kGgufString) {
    r.skip(r.count("a string", 1, "bytes"), "a string");
  } else if (type == kGgufArray) {
    if (depth >= 4) r.error(r.at(), "arrays nested at most 4 deep");
    const std::uint32_t element = gguf_value_type(r);
    // Each element takes at least a byte (8 for a string or an array's length).
    const std::uint64_t least =
        element == kGgufString || element == kGgufArray ? 8 : gguf_type_size(element);
    const std::uint64_t count = r.count("an array", least, "elements");
    if (least == gguf_type_size(element)) {
      r.skip(count * least, "the array's elements");
    } else {
      for (std::uint64_t i = 0; i < count; ++i) gguf_skip_value(r, element, depth + 1);
    }
  } else {
    r.skip(gguf_type_size(type), "a value");
  }
}

// A RoPE tensor's values: F32, F16 or BF16, one dimension.
inline std::vector<double> gguf_tensor_values(GgufReader& r, std::uint32_t type,
                                              std::uint64_t count, std::uint64_t offset) {
  std::vector<double> out;
  r.seek(offset);
  for (std::uint64_t i = 0; i < count; ++i) {
    if (type == 0) {  // GGML_TYPE_F32
      out.push_back(r.f32("a float32 element"));
    } else {  // GGML_TYPE_F16 (1) or GGML_TYPE_BF16 (30): widened to float32 bits
      const std::uint32_t h = r.integer<std::uint16_t>("a 16-bit element");
      std::uint32_t bits = 0;
      if (type == 30) {
        bits = h << 16;
      } else {
        const std::uint32_t sign = (h & 0x8000u) << 16, exponent = (h >> 10) & 0x1fu,
                            mantissa = h & 0x3ffu;
        if (exponent == 0x1f) {
          bits = sign | 0x7f800000u | (mantissa << 13);
        } else if (exponent != 0) {
          bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
        } else if (mantissa != 0) {  // subnormal half: normalise
          std::uint32_t e = 113, m = mantissa;
          while ((m & 0x400u) == 0) {
            m <<= 1;
            --e;
          }
          bits = sign | (e << 23) | ((m & 0x3ffu) << 13);
        } else {
          bits = sign;
        }
      }
      float f;
      std::memcpy(&f, &bits, sizeof f);
      out.push_back(static_cast<double>(f));
    }
  }
  return out;
}

}  // namespace detail

inline GgufFile gguf_read(std::istream& in, const std::string& name) {
  using detail::GgufReader;
  GgufReader r(in, name);
  GgufFile out;
  char magic[4];
  r.bytes(magic, 4, "the magic \"GGUF\"");
  if (std::memcmp(magic, "GGUF", 4) != 0) r.error(0, "the magic \"GGUF\"");
  out.version = r.integer<std::uint32_t>("the version");
  if (out.version != 2 && out.version != 3) {
    r.error(4, "version 2 or 3, got " + std::to_string(out.version));
  }
  const std::uint64_t tensors_at = r.at();
  out.tensor_count = r.integer<std::uint64_t>("the tensor count");
  const std::uint64_t kv_at = r.at();
  const std::uint64_t kv_count = r.integer<std::uint64_t>("the metadata count");
  // A key-value pair takes at least 12 bytes, a tensor description 24.
  if (kv_count > r.left() / 12) {
    r.error(kv_at, std::to_string(kv_count) + " metadata pairs, but the file ends " +
                       std::to_string(r.left()) + " bytes later");
  }
  std::uint64_t alignment = 32;
  for (std::uint64_t i = 0; i < kv_count; ++i) {
    const std::uint64_t key_at = r.at();
    std::string key = r.string("a key");
    if (out.metadata.count(key) != 0) r.error(key_at, "a key not seen before, got " + key);
    const std::uint32_t type = detail::gguf_value_type(r);
    const std::uint64_t value_at = r.at();
    if (key == "general.alignment" && type != detail::kGgufU32) {
      r.error(value_at, "general.alignment as a uint32 power of 2");  // never another type
    }
    if (type == detail::kGgufString) {
      out.metadata[key] = r.string("a string value");
    } else if (type == detail::kGgufBool) {
      const std::uint8_t b = r.integer<std::uint8_t>("a bool value");
      if (b > 1) r.error(value_at, "a bool 0 or 1, got " + std::to_string(b));
      out.metadata[key] = b == 1;
    } else if (type == detail::kGgufArray) {
      const std::uint32_t element = detail::gguf_value_type(r);
      if (element == detail::kGgufString || element == detail::kGgufArray ||
          element == detail::kGgufBool) {
        r.seek(value_at);
        detail::gguf_skip_value(r, type, 0);
        out.skipped_keys.push_back(key);
        continue;
      }
      const std::uint64_t count = r.count("an array", detail::gguf_type_size(element), "elements");
      std::vector<double> values;
      values.reserve(static_cast<std::size_t>(count));
      for (std::uint64_t j = 0; j < count; ++j) {
        values.push_back(detail::gguf_number_value(r, element));
      }
      out.metadata[key] = std::move(values);
    } else {
      const double v = detail::gguf_number_value(r, type);
      if (key == "general.alignment") {
        if (type != detail::kGgufU32 || v == 0 ||
            (static_cast<std::uint64_t>(v) & (static_cast<std::uint64_t>(v) - 1)) != 0) {
          r.error(value_at, "general.alignment as a uint32 power of 2");
        }
        alignment = static_cast<std::uint64_t>(v);
      }
      out.metadata[key] = v;
    }
  }

  // Tensor descriptions: name, dimensions, type, offset in the data section.
  if (out.tensor_count > r.left() / 24) {
    r.error(tensors_at, std::to_string(out.tensor_count) + " tensors, but their descriptions run " +
                            "past the end of the file");
  }
  struct RopeTensor {
    const char* name;
    std::vector<double>* values;
    std::uint64_t count = 0, offset = 0, at = 0;
    std::uint32_t type = 0;
    bool found = false;
  };
  RopeTensor wanted[] = {{"rope_freqs.weight", &out.tensors.rope_freqs},
                         {"rope_factors_long.weight", &out.tensors.rope_factors_long},
                         {"rope_factors_short.weight", &out.tensors.rope_factors_short}};
  for (std::uint64_t i = 0; i < out.tensor_count; ++i) {
    const std::uint64_t info_at = r.at();
    const std::string tensor_name = r.string("a tensor name");
    const std::uint64_t dims_at = r.at();
    const std::uint32_t dims = r.integer<std::uint32_t>("a dimension count");
    if (dims == 0 || dims > 4) r.error(dims_at, "1 to 4 dimensions, got " + std::to_string(dims));
    std::uint64_t elements = 1;
    for (std::uint32_t d = 0; d < dims; ++d) {
      const std::uint64_t extent_at = r.at();
      const std::uint64_t extent = r.integer<std::uint64_t>("a dimension");
      if (extent != 0 && elements > (std::uint64_t{1} << 62) / extent) {
        r.error(extent_at, "dimensions whose product is below 2^62");
      }
      elements *= extent;
    }
    const std::uint32_t type = r.integer<std::uint32_t>("a tensor type");
    const std::uint64_t offset = r.integer<std::uint64_t>("a tensor offset");
    for (RopeTensor& t : wanted) {
      if (tensor_name != t.name) continue;
      if (t.found) r.error(info_at, std::string("one tensor ") + t.name);
      if (type != 0 && type != 1 && type != 30) {
        r.error(info_at, std::string("tensor ") + t.name +
                             " of type F32, F16 or BF16 (0, 1, 30), got " + std::to_string(type));
      }
      t = RopeTensor{t.name, t.values, elements, offset, info_at, type, true};
    }
  }
  // The data section starts at the next multiple of the alignment.
  const std::uint64_t data = (r.at() + alignment - 1) / alignment * alignment;
  for (const RopeTensor& t : wanted) {
    if (!t.found) continue;
    const std::uint64_t bytes = t.count * (t.type == 0 ? 4 : 2);
    if (data > r.size() || t.offset > r.size() - data || bytes > r.size() - data - t.offset) {
      r.error(t.at, std::string("tensor ") + t.name + "'s " + std::to_string(bytes) +
                        " bytes at data offset " + std::to_string(t.offset) +
                        " within the file of " + std::to_string(r.size()) + " bytes");
    }
    *t.values = detail::gguf_tensor_values(r, t.type, t.count, data + t.offset);
  }
  return out;
}

inline GgufFile gguf_read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) ROPE_THROW(std::invalid_argument, "rope: GGUF: cannot read the file " + path);
  return gguf_read(in, path);
}

inline GgufRope gguf_rope(const GgufFile& file, const std::string& layer_type,
                          double sequence_length) {
  // Arrays of strings, bools or arrays are left out of the metadata: a key gguf_rope reads must
  // not be one of them, or it would read as absent and take its default.
  const GgufValue* arch = detail::gguf_find(file.metadata, "general.architecture");
  for (const std::string& key : file.skipped_keys) {
    if (key == "general.architecture" ||
        (arch != nullptr && std::holds_alternative<std::string>(*arch) &&
         detail::gguf_rope_reads(std::get<std::string>(*arch), key))) {
      detail::gguf_error(key +
                         " is an array of strings, bools or arrays: the reader takes a number, a "
                         "string or an array of numbers there");
    }
  }
  return gguf_rope(file.metadata, file.tensors, layer_type, sequence_length);
}

inline GgufRope gguf_rope_file(const std::string& path, const std::string& layer_type,
                               double sequence_length) {
  return gguf_rope(gguf_read(path), layer_type, sequence_length);
}

}  // namespace ROPE_DETAIL_ISA
}  // namespace rope

#endif  // !ROPE_BELOW_CXX17
