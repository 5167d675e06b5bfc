// libFuzzer harness for the config.json reader: random bytes are parsed as JSON (input that is
// not JSON is passed over) and given to every reader entry point, for the layer types it names.
// Each must return or throw std::invalid_argument naming config.json; any other exception (a
// std::length_error, nlohmann's own), a crash, a sanitizer report or a stack overflow aborts, and
// libFuzzer saves the input.
//
// Built two ways: with -fsanitize=fuzzer (rope_fuzz_config) and with replay_main.cpp
// (rope_fuzz_config_replay, which runs the released configs of tests/data/configs and
// tests/fuzz/config_regressions as a test).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

#include <rope/hf_config.hpp>

#include <nlohmann/json.hpp>

namespace {

template <class F>
void expect_invalid_or_result(const char* entry, F call) {
  try {
    call();
  } catch (const std::invalid_argument& e) {
    if (std::strstr(e.what(), "rope: config.json: ") == nullptr) {
      std::fprintf(stderr, "%s: an error that does not name config.json: %s\n", entry, e.what());
      std::abort();
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: not std::invalid_argument: %s\n", entry, e.what());
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const char* text = reinterpret_cast<const char*>(data);
  const nlohmann::json config = nlohmann::json::parse(text, text + size, nullptr, false);
  if (config.is_discarded()) return 0;
  std::vector<std::string> types = {"full_attention", "sliding_attention"};
  expect_invalid_or_result("hf_layer_types", [&] { types = rope::hf_layer_types(config); });
  for (const std::string& type : types) {
    expect_invalid_or_result("hf_rope", [&] { (void)rope::hf_rope(config, type, 65536.0); });
  }
  expect_invalid_or_result("hf_layers", [&] { (void)rope::hf_layers(config); });
  expect_invalid_or_result("hf_indexer_rope", [&] { (void)rope::hf_indexer_rope(config); });
  expect_invalid_or_result("hf_nope_query_scale", [&] { (void)rope::hf_nope_query_scale(config); });
  return 0;
}
