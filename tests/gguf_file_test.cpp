// rope::gguf_read on GGUF files the test writes byte by byte from the format's description
// (magic, version, counts, key-value pairs of the 13 value types, tensor descriptions, aligned
// data): what it reads back, the RoPE tensors in F32, F16 and BF16, and gguf_rope_file against
// gguf_rope on the same metadata. Then every truncation and every one-byte corruption of such a
// file: each is read or rejected with std::invalid_argument naming a byte offset, and nothing
// else (the sanitizer build runs this under ASan and UBSan). And llama.cpp's architecture table.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <rope/gguf_file.hpp>
#include <rope/rope.hpp>

#include "support.hpp"

namespace {

using rope::Layout;

// A GGUF file, written field by field, little-endian.
class GgufWriter {
 public:
  explicit GgufWriter(std::uint32_t version = 3) {
    bytes_ += "GGUF";
    u32(version);
  }

  // Key-value pairs and tensors are collected, then written by `file`.
  void kv_u32(const std::string& key, std::uint32_t v) {
    kv(key, 4, [&] { u32_to(body_, v); });
  }
  void kv_i32(const std::string& key, std::int32_t v) {
    kv(key, 5, [&] { u32_to(body_, static_cast<std::uint32_t>(v)); });
  }
  void kv_u64(const std::string& key, std::uint64_t v) {
    kv(key, 10, [&] { u64_to(body_, v); });
  }
  void kv_f32(const std::string& key, float v) {
    std::uint32_t bits;
    std::memcpy(&bits, &v, 4);
    kv(key, 6, [&] { u32_to(body_, bits); });
  }
  void kv_f64(const std::string& key, double v) {
    std::uint64_t bits;
    std::memcpy(&bits, &v, 8);
    kv(key, 12, [&] { u64_to(body_, bits); });
  }
  void kv_u8(const std::string& key, std::uint8_t v) {
    kv(key, 0, [&] { body_ += char(v); });
  }
  void kv_i8(const std::string& key, std::int8_t v) {
    kv(key, 1, [&] { body_ += char(v); });
  }
  void kv_u16(const std::string& key, std::uint16_t v) {
    kv(key, 2, [&] { body_ += char(v & 0xff), body_ += char(v >> 8); });
  }
  void kv_i16(const std::string& key, std::int16_t v) {
    kv(key, 3, [&] {
      const auto u = static_cast<std::uint16_t>(v);
      body_ += char(u & 0xff), body_ += char(u >> 8);
    });
  }
  void kv_i64(const std::string& key, std::int64_t v) {
    kv(key, 11, [&] { u64_to(body_, static_cast<std::uint64_t>(v)); });
  }
  void kv_bool(const std::string& key, bool v) {
    kv(key, 7, [&] { body_ += char(v ? 1 : 0); });
  }
  void kv_string(const std::string& key, const std::string& v) {
    kv(key, 8, [&] { string_to(body_, v); });
  }
  void kv_f32_array(const std::string& key, const std::vector<float>& v) {
    kv(key, 9, [&] {
      u32_to(body_, 6);
      u64_to(body_, v.size());
      for (float f : v) {
        std::uint32_t bits;
        std::memcpy(&bits, &f, 4);
        u32_to(body_, bits);
      }
    });
  }
  void kv_i32_array(const std::string& key, const std::vector<std::int32_t>& v) {
    kv(key, 9, [&] {
      u32_to(body_, 5);
      u64_to(body_, v.size());
      for (std::int32_t x : v) u32_to(body_, static_cast<std::uint32_t>(x));
    });
  }
  void kv_string_array(const std::string& key, const std::vector<std::string>& v) {
    kv(key, 9, [&] {
      u32_to(body_, 8);
      u64_to(body_, v.size());
      for (const std::string& s : v) string_to(body_, s);
    });
  }

  // A tensor of `values` (type 0 F32, 1 F16, 30 BF16: written from float).
  void tensor(const std::string& name, std::uint32_t type, const std::vector<float>& values) {
    Tensor t{name, type, {}};
    for (float f : values) {
      std::uint32_t bits;
      std::memcpy(&bits, &f, 4);
      if (type == 0) {
        u32_to(t.data, bits);
      } else {
        std::uint16_t h;
        if (type == 30) {
          h = static_cast<std::uint16_t>(bits >> 16);  // the values are exact in bfloat16
        } else {  // exact in half: normal numbers of at most 11 significant bits
          const std::uint32_t sign = (bits >> 16) & 0x8000u;
          const int exponent = static_cast<int>((bits >> 23) & 0xff) - 127 + 15;
          h = static_cast<std::uint16_t>(sign | (std::uint32_t(exponent) << 10) |
                                         ((bits >> 13) & 0x3ffu));
        }
        t.data += char(h & 0xff);
        t.data += char(h >> 8);
      }
    }
    t.count = values.size();
    tensors_.push_back(t);
  }

  std::string file(std::uint64_t alignment = 32) const {
    std::string out = bytes_;
    u64_to(out, tensors_.size() + 1);  // and one tensor not of RoPE, whose data is not read
    u64_to(out, kv_count_);
    out += body_;
    std::uint64_t offset = 0;
    std::string data;
    const auto describe = [&](const std::string& name, std::uint32_t type, std::uint64_t count,
                              const std::string& bytes) {
      string_to(out, name);
      u32_to(out, 1);
      u64_to(out, count);
      u32_to(out, type);
      u64_to(out, offset);
      data += bytes;
      while (data.size() % alignment != 0) data += '\0';
      offset = data.size();
    };
    describe("token_embd.weight", 0, 4, std::string(16, '\x7f'));
    for (const Tensor& t : tensors_) describe(t.name, t.type, t.count, t.data);
    while (out.size() % alignment != 0) out += '\0';
    return out + data;
  }

 private:
  struct Tensor {
    std::string name;
    std::uint32_t type;
    std::string data;
    std::uint64_t count = 0;
  };

  static void u32_to(std::string& s, std::uint32_t v) {
    for (int i = 0; i < 4; ++i) s += char((v >> (8 * i)) & 0xff);
  }
  static void u64_to(std::string& s, std::uint64_t v) {
    for (int i = 0; i < 8; ++i) s += char((v >> (8 * i)) & 0xff);
  }
  static void string_to(std::string& s, const std::string& v) {
    u64_to(s, v.size());
    s += v;
  }
  void u32(std::uint32_t v) { u32_to(bytes_, v); }
  template <class F>
  void kv(const std::string& key, std::uint32_t type, F value) {
    string_to(body_, key);
    u32_to(body_, type);
    value();
    ++kv_count_;
  }

  std::string bytes_, body_;
  std::vector<Tensor> tensors_;
  std::uint64_t kv_count_ = 0;
};

// Llama 3.1 8B's RoPE metadata as llama.cpp's converter writes it, with its rope_freqs.
GgufWriter llama31(std::uint32_t version = 3, std::uint32_t tensor_type = 0) {
  GgufWriter w(version);
  w.kv_string("general.architecture", "llama");
  w.kv_string("general.name", "Llama 3.1 8B");
  w.kv_u32("llama.context_length", 131072);
  w.kv_u32("llama.embedding_length", 4096);
  w.kv_u32("llama.attention.head_count", 32);
  w.kv_u32("llama.attention.head_count_kv", 8);
  w.kv_u32("llama.rope.dimension_count", 128);
  w.kv_f32("llama.rope.freq_base", 500000.0f);
  w.kv_string_array("tokenizer.ggml.tokens", {"<s>", "</s>", "hello"});
  std::vector<float> freqs(64);
  for (std::size_t i = 0; i < freqs.size(); ++i) freqs[i] = i < 20 ? 1.0f : i < 40 ? 2.5f : 8.0f;
  w.tensor("rope_freqs.weight", tensor_type, freqs);
  return w;
}

rope::GgufFile read(const std::string& bytes) {
  std::istringstream in(bytes);
  return rope::gguf_read(in, "test.gguf");
}

void require_file_error(const std::string& bytes, const std::vector<std::string>& fragments) {
  rope_test::require_invalid([&] { read(bytes); }, fragments, "rope: GGUF: test.gguf: at byte ");
}

}  // namespace

TEST_CASE("gguf_read: metadata of every value type, arrays, and the RoPE tensors", "[gguf]") {
  for (const std::uint32_t version : {2u, 3u}) {
    INFO("version " << version);
    GgufWriter w(version);
    w.kv_string("general.architecture", "qwen2");
    w.kv_u8("t.u8", 200);
    w.kv_i8("t.i8", -100);
    w.kv_u16("t.u16", 60000);
    w.kv_i16("t.i16", -30000);
    w.kv_u32("t.u32", 4000000000u);
    w.kv_i32("t.i32", -2000000000);
    w.kv_u64("t.u64", std::uint64_t{1} << 40);
    w.kv_i64("t.i64", -(std::int64_t{1} << 40));
    w.kv_f32("t.f32", 0.1f);
    w.kv_f64("t.f64", 0.1);
    w.kv_bool("t.bool", true);
    w.kv_i32_array("t.sections", {16, 24, 24, 0});
    w.kv_string_array("tokenizer.ggml.merges", {"a b", "c d"});
    w.tensor("rope_factors_long.weight", 1, {1.0f, 1.5f, 2.0f, 65504.0f});
    w.tensor("rope_factors_short.weight", 30, {1.0f, 0.5f, 3.0f, -2.0f});
    const rope::GgufFile f = read(w.file());
    CHECK(f.version == version);
    CHECK(f.tensor_count == 3);
    const auto number = [&](const char* key) { return std::get<double>(f.metadata.at(key)); };
    CHECK(std::get<std::string>(f.metadata.at("general.architecture")) == "qwen2");
    CHECK(number("t.u8") == 200);
    CHECK(number("t.i8") == -100);
    CHECK(number("t.u16") == 60000);
    CHECK(number("t.i16") == -30000);
    CHECK(number("t.u32") == 4000000000.0);
    CHECK(number("t.i32") == -2000000000.0);
    CHECK(number("t.u64") == 1099511627776.0);
    CHECK(number("t.i64") == -1099511627776.0);
    CHECK(number("t.f32") == double(0.1f));
    CHECK(number("t.f64") == 0.1);
    CHECK(std::get<bool>(f.metadata.at("t.bool")));
    CHECK(std::get<std::vector<double>>(f.metadata.at("t.sections")) ==
          std::vector<double>{16, 24, 24, 0});
    CHECK(f.skipped_keys == std::vector<std::string>{"tokenizer.ggml.merges"});
    CHECK(f.tensors.rope_factors_long == std::vector<double>{1.0, 1.5, 2.0, 65504.0});
    CHECK(f.tensors.rope_factors_short == std::vector<double>{1.0, 0.5, 3.0, -2.0});
    CHECK(f.tensors.rope_freqs.empty());
  }
}

TEST_CASE("gguf_rope_file: the Options of a written Llama 3.1 file equal gguf_rope's", "[gguf]") {
  for (const std::uint32_t type : {0u, 1u, 30u}) {
    INFO("rope_freqs of ggml type " << type);
    const std::string bytes = llama31(3, type).file();
    const rope::GgufFile f = read(bytes);
    REQUIRE(f.tensors.rope_freqs.size() == 64);
    CHECK(f.tensors.rope_freqs[0] == 1.0);
    CHECK(f.tensors.rope_freqs[63] == 8.0);
    const std::string path = "rope_gguf_file_test.gguf";
    {
      std::ofstream out(path, std::ios::binary);
      out << bytes;
    }
    const rope::GgufRope from_file = rope::gguf_rope_file(path);
    std::remove(path.c_str());
    const rope::GgufRope from_map = rope::gguf_rope(f.metadata, f.tensors);
    CHECK(from_file.options.head_size == 128);
    CHECK(from_file.options.layout == Layout::interleaved);
    CHECK(from_file.options.base == double(500000.0f));
    const auto* factors = std::get_if<rope::FrequencyFactors>(&from_file.options.scaling);
    REQUIRE(factors != nullptr);
    CHECK(factors->factors == f.tensors.rope_freqs);
    const rope::Rotary<float> a(from_file.options), b(from_map.options);
    CHECK(a.inverse_frequencies() == b.inverse_frequencies());
  }
  CHECK_THROWS_WITH(rope::gguf_rope_file("/nonexistent/model.gguf"),
                    Catch::Matchers::Contains("cannot read the file /nonexistent/model.gguf"));
}

TEST_CASE("E77: every truncation and one-byte corruption is read or rejected by offset",
          "[errors][E77]") {
  const std::string good = llama31().file();
  // Truncated anywhere (the RoPE tensor's data ends the file): an error at a byte offset.
  std::size_t rejected = 0;
  for (std::size_t n = 0; n < good.size(); ++n) {
    INFO("truncated to " << n << " bytes");
    bool threw = false;
    try {
      read(good.substr(0, n));
    } catch (const std::invalid_argument& e) {
      threw = true;
      CHECK_THAT(e.what(), Catch::Matchers::Contains("at byte"));
    }
    CHECK(threw);
    rejected += threw ? 1 : 0;
  }
  CHECK(rejected == good.size());
  // Each byte set to each of five values: read, or std::invalid_argument; nothing else.
  std::size_t read_back = 0, refused = 0;
  for (std::size_t i = 0; i < good.size(); ++i) {
    for (const int v : {0x00, 0x01, 0x7f, 0x80, 0xff}) {
      std::string bad = good;
      bad[i] = static_cast<char>(static_cast<unsigned char>(v));
      try {
        const rope::GgufFile f = read(bad);
        ++read_back;
        (void)f;
      } catch (const std::invalid_argument&) {
        ++refused;
      }
    }
  }
  CHECK(read_back + refused == 5 * good.size());
  CHECK(refused > 0);

  // The messages: what was expected where.
  std::string magic = good;
  magic[0] = 'X';
  require_file_error(magic, {"0: expected the magic \"GGUF\""});
  std::string version = good;
  version[4] = 1;
  require_file_error(version, {"4: expected version 2 or 3, got 1"});
  std::string count = good;
  count[16 + 7] = '\x7f';  // the metadata count, huge
  require_file_error(count, {"16: expected", "metadata pairs, but the file ends"});
  std::string key_length = good;
  key_length[24 + 7] = '\x7f';  // the first key's length, huge
  require_file_error(key_length, {"24: expected a key of", "bytes, but the file ends"});
  std::string type = good;
  type[24 + 8 + 20] = 13;  // "general.architecture" is 20 bytes; then its value type
  require_file_error(type, {"52: expected a value type 0 to 12, got 13"});
  // A RoPE tensor whose data would lie past the end of the file.
  const std::string cut = good.substr(0, good.size() - 4);
  require_file_error(cut, {"expected tensor rope_freqs.weight's 256 bytes"});
  // general.alignment of another type than uint32 (a string, an array): the data section's
  // offset would be a guess.
  GgufWriter as_string = llama31();
  as_string.kv_string("general.alignment", "64");
  require_file_error(as_string.file(), {"expected general.alignment as a uint32 power of 2"});
  GgufWriter as_array = llama31();
  as_array.kv_i32_array("general.alignment", {64});
  require_file_error(as_array.file(), {"expected general.alignment as a uint32 power of 2"});
}

TEST_CASE("E59: gguf_rope_file: a key it reads given as an array of strings", "[errors][E59]") {
  // gguf_read keeps no arrays of strings, bools or arrays in the metadata; such a value where
  // gguf_rope reads a key must not read as absent (freq_base 10000, no scaling).
  for (const char* key : {"llama.rope.freq_base", "llama.rope.scaling.type",
                          "llama.rope.future_key", "llama.attention.key_length"}) {
    INFO(key);
    GgufWriter w;  // Llama 3's keys but for `key`
    w.kv_string("general.architecture", "llama");
    w.kv_u32("llama.embedding_length", 4096);
    w.kv_u32("llama.attention.head_count", 32);
    w.kv_u32("llama.rope.dimension_count", 128);
    w.kv_string_array(key, {"500000"});
    const std::string path = "rope_gguf_array_test.gguf";
    {
      std::ofstream out(path, std::ios::binary);
      out << w.file();
    }
    const auto call = [&] { rope::gguf_rope_file(path); };
    rope_test::require_invalid(call,
                               {std::string(key) + " is an array of strings, bools or arrays: the "
                                                   "reader takes a number, a string or an array of "
                                                   "numbers there"},
                               "rope: GGUF: ");
    std::remove(path.c_str());
  }
  // Such arrays elsewhere (the tokenizer's) are left alone.
  CHECK(read(llama31().file()).skipped_keys == std::vector<std::string>{"tokenizer.ggml.tokens"});
}

TEST_CASE("gguf_architecture: llama.cpp's rope types by architecture", "[gguf]") {
  const auto metadata = [](const std::string& arch) {
    rope::GgufMetadata m;
    m["general.architecture"] = arch;
    m[arch + ".attention.key_length"] = 128.0;
    return m;
  };
  // The architectures the table used to reject, and the layouts llama.cpp gives them.
  const struct {
    const char* arch;
    Layout layout;
  } rows[] = {{"qwen35", Layout::half_split},      {"qwen35moe", Layout::half_split},
              {"deepseek32", Layout::interleaved}, {"deepseek4", Layout::interleaved},
              {"glm-dsa", Layout::interleaved},    {"seed_oss", Layout::half_split},
              {"apertus", Layout::half_split},     {"falcon-h1", Layout::half_split},
              {"minimax-m2", Layout::half_split},  {"laguna", Layout::half_split},
              {"mistral4", Layout::interleaved},   {"exaone-moe", Layout::half_split},
              {"glm4", Layout::interleaved},       {"glm4moe", Layout::half_split}};
  for (const auto& row : rows) {
    INFO(row.arch);
    CHECK(rope::gguf_rope(metadata(row.arch)).options.layout == row.layout);
  }
  // Qwen3.5: interleaved M-RoPE (IMROPE); GLM-4.1V as glm4 with sections: M-RoPE, neox pairs.
  rope::GgufMetadata q = metadata("qwen35");
  q["qwen35.rope.dimension_sections"] = std::vector<double>{24, 20, 20, 0};
  const rope::Rotary<float> qwen35(rope::gguf_rope(q).options);
  CHECK(qwen35.axes() == 3);
  CHECK(qwen35.axis_of_pairs()[1] == 1);
  rope::GgufMetadata g = metadata("glm4");
  g["glm4.rope.dimension_sections"] = std::vector<double>{16, 24, 24, 0};
  CHECK(rope::gguf_rope(g).options.layout == Layout::half_split);
  CHECK(rope::Rotary<float>(rope::gguf_rope(g).options).axis_of_pairs()[16] == 1);
  // Sections on an architecture llama.cpp does not rotate by M-RoPE.
  rope::GgufMetadata l = metadata("llama");
  l["llama.rope.dimension_sections"] = std::vector<double>{16, 24, 24, 0};
  rope_test::require_invalid([&] { rope::gguf_rope(l); }, {"does not rotate by M-RoPE"},
                             "rope: GGUF: ");
  // Every row once, in order.
  std::string previous;
  for (const char* name : {"afmoe", "kimi-linear", "talkie", "xverse"}) {
    CHECK(rope::gguf_architecture(name) != nullptr);
    CHECK(previous < name);
    previous = name;
  }
}

TEST_CASE("gguf_rope: the sliding layers' keys, HunYuan's alpha and YaRN's blend", "[gguf]") {
  rope::GgufMetadata m;
  m["general.architecture"] = std::string("gemma4");
  m["gemma4.attention.key_length"] = 512.0;
  m["gemma4.attention.key_length_swa"] = 256.0;
  m["gemma4.rope.dimension_count"] = 128.0;
  m["gemma4.rope.dimension_count_swa"] = 256.0;
  m["gemma4.rope.freq_base"] = 1e6;
  m["gemma4.rope.freq_base_swa"] = 10000.0;
  const rope::GgufRope full = rope::gguf_rope(m);
  const rope::GgufRope sliding = rope::gguf_rope(m, {}, "sliding_attention");
  CHECK(full.options.head_size == 512);
  CHECK(full.options.rotary_dim == 128);
  CHECK(full.options.base == 1e6);
  CHECK(sliding.options.head_size == 256);
  CHECK(sliding.options.rotary_dim == 0);
  CHECK(sliding.options.base == 10000.0);
  rope_test::require_invalid([&] { rope::gguf_rope(m, {}, "chunked"); },
                             {"layer type \"chunked\" is neither"}, "rope: GGUF: ");

  // HunYuan-VL's alpha with the unscaled base: HuggingFace's base·α^(h/(h−2)).
  rope::GgufMetadata h;
  h["general.architecture"] = std::string("hunyuan_vl");
  h["hunyuan_vl.attention.key_length"] = 128.0;
  h["hunyuan_vl.rope.freq_base"] = 10000.0;
  h["hunyuan_vl.rope.scaling.alpha"] = 1000.0;
  CHECK(rope::gguf_rope(h).options.base == 10000.0 * std::pow(1000.0, 128.0 / 126.0));

  // ggml's YaRN with ext_factor 0 is a linear interpolation; a blend between is no scheme.
  rope::GgufMetadata y;
  y["general.architecture"] = std::string("llama");
  y["llama.attention.key_length"] = 128.0;
  y["llama.rope.scaling.type"] = std::string("yarn");
  y["llama.rope.scaling.factor"] = 4.0;
  y["llama.rope.scaling.original_context_length"] = 8192.0;
  y["llama.rope.scaling.yarn_ext_factor"] = 1.0;
  CHECK(std::holds_alternative<rope::Yarn>(rope::gguf_rope(y).options.scaling));
  y["llama.rope.scaling.yarn_ext_factor"] = 0.0;
  const rope::GgufRope interpolated = rope::gguf_rope(y);
  const auto* linear = std::get_if<rope::Linear>(&interpolated.options.scaling);
  REQUIRE(linear != nullptr);
  CHECK(linear->factor == 4.0);
  y["llama.rope.scaling.yarn_ext_factor"] = 0.5;
  rope_test::require_invalid([&] { rope::gguf_rope(y); }, {"yarn_ext_factor 0.5", "neither 1"},
                             "rope: GGUF: ");
  y["llama.rope.scaling.yarn_ext_factor"] = 1.0;
  y["llama.rope.scaling.yarn_attn_factor"] = 2.0;
  rope_test::require_invalid([&] { rope::gguf_rope(y); }, {"yarn_attn_factor 2", "is not 1"},
                             "rope: GGUF: ");
}

TEST_CASE("E64: gguf_rope: architectures without RoPE or not in llama.cpp's table",
          "[errors][E64]") {
  for (const char* arch : {"kimi-linear", "mamba2", "nemotron_h", "bloom"}) {
    rope::GgufMetadata m;
    m["general.architecture"] = std::string(arch);
    rope_test::require_invalid(
        [&] { rope::gguf_rope(m); },
        {"\"" + std::string(arch) + "\" has no RoPE", "LLAMA_ROPE_TYPE_NONE"}, "rope: GGUF: ");
  }
  rope::GgufMetadata j;
  j["general.architecture"] = std::string("gptj");
  rope_test::require_invalid([&] { rope::gguf_rope(j); }, {"does not implement it"},
                             "rope: GGUF: ");
}
