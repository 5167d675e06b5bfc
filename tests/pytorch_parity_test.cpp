// Angles::pytorch_float32 against values PyTorch 1.13 computed with HuggingFace's float32 recipe
// (tests/data/pytorch_float32_rope.csv, written by bench/pytorch_float32_reference.py).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <rope/rope.hpp>

namespace {

struct Entry {
  std::size_t d;
  double base, position;
  std::size_t pair;
  float theta, cos, sin;
};

std::vector<Entry> read_entries() {
  std::ifstream file(ROPE_TEST_DATA_DIR "/pytorch_float32_rope.csv");
  std::vector<Entry> entries;
  std::string line;
  while (std::getline(file, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string f[7];
    for (auto& field : f) std::getline(fields, field, ',');
    entries.push_back({std::stoul(f[0]), std::stod(f[1]), std::stod(f[2]), std::stoul(f[3]),
                       std::stof(f[4]), std::stof(f[5]), std::stof(f[6])});
  }
  return entries;
}

}  // namespace

TEST_CASE("Angles::pytorch_float32 reproduces PyTorch's float32 tables", "[parity]") {
  const std::vector<Entry> entries = read_entries();
  REQUIRE(entries.size() == 960);  // 3 configurations x 6 positions x d/2 pairs
  for (const Entry& e : entries) {
    INFO("d " << e.d << ", base " << e.base << ", position " << e.position << ", pair " << e.pair);
    rope::Options options{e.d, e.base, rope::Layout::half_split, 4096};
    options.angles = rope::Angles::pytorch_float32;
    const rope::Rotary<float> rot(options);
    // The same float32 operations (a division, powf, a reciprocal): equal to the last bit.
    REQUIRE(static_cast<float>(rot.inverse_frequencies()[e.pair]) == e.theta);
    // cos and sin of the same float angle: PyTorch's float32 functions are within 1 ulp, ours is
    // rounded once from double, so the two differ by at most 1 ulp.
    std::vector<float> row(e.d);
    rope::Table<float>::compute_row(rope::Layout::half_split, rot.inverse_frequencies(), e.position,
                                    row.data(), 1.0, rope::Angles::pytorch_float32);
    CHECK_THAT(row[e.pair], Catch::Matchers::WithinULP(e.cos, 1));
    CHECK_THAT(row[e.d / 2 + e.pair], Catch::Matchers::WithinULP(e.sin, 1));
    if (e.position < 4096) {  // and the table holds the same rows
      CHECK(rot.table().cos(std::size_t(e.position), e.pair) == row[e.pair]);
      CHECK(rot.table().sin(std::size_t(e.position), e.pair) == row[e.d / 2 + e.pair]);
    }
  }
}

TEST_CASE("Angles::exact differs from PyTorch's float32 tables where float32 angles drift",
          "[parity]") {
  // At position 10^6 the float32 product m·θ_j is off by up to half an ulp of 10^6 (0.031 rad)
  // plus θ_j's own rounding times 10^6; the exact table is not: they must differ there, and
  // agree at position 1 within the float32 rounding of θ_j and the angle (a few ulps of 1).
  double at_million = 0, at_one = 0;
  for (const Entry& e : read_entries()) {
    if (e.d != 128 || e.base != 10000.0) continue;
    std::vector<float> row(e.d);
    rope::Table<float>::compute_row(rope::Layout::half_split, rope::inverse_frequencies(e.d),
                                    e.position, row.data());
    const double diff = std::abs(double(row[e.pair]) - double(e.cos));
    if (e.position == 1000000) at_million = std::max(at_million, diff);
    if (e.position == 1) at_one = std::max(at_one, diff);
  }
  CHECK(at_million > 0.01);
  CHECK(at_one < 1e-6);
}
