// libFuzzer harness for the GGUF reader: random bytes are read as a GGUF file. The read must
// either succeed or throw std::invalid_argument naming a byte offset; what it reads must then
// give Options or std::invalid_argument from gguf_rope for each layer type. Any other exception,
// a crash, a sanitizer report or a read outside the input aborts, and libFuzzer saves the input.
//
// Built two ways: with -fsanitize=fuzzer (rope_fuzz_gguf) and with replay_main.cpp
// (rope_fuzz_gguf_replay, which runs the committed corpus tests/fuzz/gguf_corpus as a test).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <stdexcept>
#include <string>

#include <rope/gguf_file.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  rope::GgufFile file;
  try {
    file = rope::gguf_read(in, "fuzz.gguf");
  } catch (const std::invalid_argument& e) {
    if (std::strstr(e.what(), "rope: GGUF: fuzz.gguf: at byte ") == nullptr) {
      std::fprintf(stderr, "a read error without its offset: %s\n", e.what());
      std::abort();
    }
    return 0;
  }
  for (const char* layer_type : {"full_attention", "sliding_attention"}) {
    try {
      (void)rope::gguf_rope(file, layer_type);
    } catch (const std::invalid_argument&) {
    }
  }
  return 0;
}
