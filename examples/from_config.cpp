// Reads a HuggingFace config.json and prints the RoPE of each of its layer types: what a layer's
// Rotary is built from, and what it computes; then which layers rotate and why the others do not.
// Checks, for each layer type, that attention still sees relative positions only: <R_m q, R_n k>
// is the same for (m, n) = (5, 9) and (1005, 1009).
//
//     from_config path/to/config.json
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <variant>
#include <vector>

#include <rope/hf_config.hpp>
#include <rope/rope.hpp>

#include <nlohmann/json.hpp>  // parsing here; the reader is compiled in rope::hf_config

namespace {

const char* scheme_name(const rope::Scaling& scaling) {
  static const char* const names[] = {
      "Unscaled", "Linear",   "NTKAware",     "DynamicNTK",         "Yarn",
      "Llama3",   "LongRope", "Proportional", "InverseFrequencies", "FrequencyFactors"};
  static_assert(std::size(names) == std::variant_size_v<rope::Scaling>, "one name per scheme");
  return names[scaling.index()];
}

// <R_m q, R_n k> in double, for one head pair rotated by rot.
double score(const rope::Rotary<float>& rot, const std::vector<float>& q,
             const std::vector<float>& k, std::int64_t m, std::int64_t n) {
  std::vector<float> a = q, b = k;
  rot.apply(a.data(), 1, 1, &m);
  rot.apply(b.data(), 1, 1, &n);
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += double(a[i]) * double(b[i]);
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s config.json\n", argv[0]);
    return 2;
  }
  const std::string path = argv[1];
  std::ifstream file(path);
  const nlohmann::json config = nlohmann::json::parse(file, nullptr, /*allow_exceptions=*/false);
  if (config.is_discarded()) {
    std::fprintf(stderr, "%s is not JSON\n", path.c_str());
    return 2;
  }
  bool ok = true;
  for (const std::string& layer_type : rope::hf_layer_types(config)) {
    const rope::HfRope r = rope::hf_rope(config, layer_type);
    const rope::Options& o = r.options;
    const rope::Rotary<float> rot(o);
    std::size_t rotating = 0;
    for (const double t : rot.inverse_frequencies()) rotating += t > 0 ? 1 : 0;
    std::printf("%s (%s)\n", layer_type.c_str(), r.model_type.c_str());
    std::printf("  rope_type %s -> %s, attention factor %.6g\n", r.rope_type.c_str(),
                scheme_name(o.scaling), rot.attention_factor());
    std::printf("  head_size %zu, rotary_dim %zu, base %g, %zu of %zu pairs rotate, %zu axes\n",
                rot.head_size(), rot.rotary_dim(), o.base, rotating,
                rot.inverse_frequencies().size(), rot.axes());
    std::printf("  layout %s (%s)\n", rope::to_string(o.layout), r.layout_source.c_str());

    // Relative positions: the same offset 4 at positions 5 and 1005.
    std::vector<float> q(rot.head_size()), k(rot.head_size());
    for (std::size_t i = 0; i < q.size(); ++i) {
      q[i] = static_cast<float>(std::sin(0.37 * double(i) + 0.1));
      k[i] = static_cast<float>(std::cos(0.53 * double(i) - 0.2));
    }
    if (rot.axes() != 1) {
      std::printf("  (multi-axis: the relative-position check is for text tokens only)\n");
    }
    const double near = score(rot, q, k, 5, 9), far = score(rot, q, k, 1005, 1009);
    // Each score sums head_size products of float rotations, each within a few float ulps of
    // |q_i|·|k_i| ≤ a²: 1e-4 relative to head_size·a² is well above float rounding.
    const double a2 = rot.attention_factor() * rot.attention_factor();
    const bool same = std::abs(near - far) <= 1e-4 * double(rot.head_size()) * a2;
    std::printf("  <R_5 q, R_9 k> = %.6f, <R_1005 q, R_1009 k> = %.6f: %s\n", near, far,
                same ? "the same" : "DIFFERENT");
    ok = ok && same;
  }

  // Which layers rotate: an engine skips RoPE on the others.
  const std::vector<rope::HfLayer> layers = rope::hf_layers(config);
  std::size_t with_rope = 0;
  for (const rope::HfLayer& layer : layers) with_rope += layer.rope ? 1 : 0;
  std::printf("%zu layers, %zu with RoPE\n", layers.size(), with_rope);
  for (std::size_t i = 0; i < layers.size(); ++i) {
    if (!layers[i].rope)
      std::printf("  layer %zu: no RoPE: %s\n", i, layers[i].no_rope_reason.c_str());
  }
  return ok ? 0 : 1;
}
