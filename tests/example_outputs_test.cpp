// The files the examples write, checked against independent computations: the long-term decay
// CSV against the bound recomputed here in long double from its definition, and both SVG plots
// against the numbers they claim to draw. Run after the examples (a CTest fixture).
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstddef>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

namespace {

constexpr std::size_t kHeadSize = 128;           // examples/long_term_decay.cpp
constexpr double kU = 1.0 / 9007199254740992.0;  // 2^-53

std::string read(const std::string& name) {
  std::ifstream file(std::string(ROPE_EXAMPLE_DIR) + "/" + name);
  REQUIRE(file.good());
  std::stringstream s;
  s << file.rdbuf();
  return s.str();
}

// θ_j = base^(−2j/d), and Llama 3.1's blend (HuggingFace's _compute_llama3_parameters): pairs of
// wavelength 2π/θ above L0/low are divided by the factor, below L0/high kept, and in between
// mixed with s = (L0/wavelength − low)/(high − low).
std::vector<long double> theta(long double base, bool llama3) {
  std::vector<long double> t(kHeadSize / 2);
  const long double pi = std::acos(-1.0L), factor = 8, low = 1, high = 4, l0 = 8192;
  for (std::size_t j = 0; j < t.size(); ++j) {
    t[j] = std::pow(base, -2.0L * (long double)j / (long double)kHeadSize);
    if (!llama3) continue;
    const long double wavelength = 2 * pi / t[j];
    if (wavelength > l0 / low) {
      t[j] /= factor;
    } else if (wavelength >= l0 / high) {
      const long double s = (l0 / wavelength - low) / (high - low);
      t[j] = (1 - s) * t[j] / factor + s * t[j];
    }
  }
  return t;
}

// (1/(d/2))·Σ_{j=1}^{d/2} |Σ_{k<j} e^{i·r·θ_k}|, straight from RoFormer's definition.
long double relative_bound(const std::vector<long double>& t, long double r) {
  std::complex<long double> partial = 0;
  long double sum = 0;
  for (const long double theta_k : t) {
    partial += std::polar(1.0L, r * theta_k);
    sum += std::abs(partial);
  }
  return sum / (long double)t.size();
}

std::vector<double> numbers(const std::string& text, const std::string& separators) {
  std::vector<double> out;
  std::string token;
  std::stringstream s(text);
  for (char c; s.get(c);) {
    if (separators.find(c) != std::string::npos) {
      if (!token.empty()) out.push_back(std::stod(token));
      token.clear();
    } else {
      token += c;
    }
  }
  if (!token.empty()) out.push_back(std::stod(token));
  return out;
}

}  // namespace

TEST_CASE("long_term_decay.csv is RoFormer's relative upper bound", "[examples]") {
  std::stringstream csv(read("long_term_decay.csv"));
  std::string line;
  std::getline(csv, line);
  REQUIRE(line == "r,base_10000,llama3_500000");
  const auto plain = theta(10000, false), scaled = theta(500000, true);
  std::size_t rows = 0;
  double largest_r = 0;
  while (std::getline(csv, line)) {
    const auto v = numbers(line, ",");
    REQUIRE(v.size() == 3);
    const double r = v[0];
    // The example's e^{i·r·θ_k} err by its angle's error (θ_k to within 4 ulps after Llama 3's
    // blend, times r, plus the product's rounding: 5u·r) and the rounding of cos and sin (2u
    // each); S_j sums j of them (and j roundings), and the mean of |S_j| over j ≤ d/2 carries
    // at most the mean of j·(5u·r + 5u) plus (d/2)·u for its own sum: (d/2 + 1)/2·(5u·r + 5u)
    // + (d/2)·u.
    const double half = kHeadSize / 2.0;
    const double tolerance = (half + 1) / 2 * (5 * kU * r + 5 * kU) + half * kU;
    INFO("r = " << r);
    REQUIRE(std::abs(v[1] - double(relative_bound(plain, (long double)r))) <= tolerance);
    REQUIRE(std::abs(v[2] - double(relative_bound(scaled, (long double)r))) <= tolerance);
    if (r == 0) REQUIRE(v[1] == (half + 1) / 2);  // S_j = j: (1/(d/2))·Σ j = (d/2 + 1)/2
    ++rows;
    largest_r = r;
  }
  REQUIRE(rows > 1000);
  REQUIRE(largest_r >= 65536);
}

TEST_CASE("long_term_decay.svg draws the CSV's values", "[examples]") {
  const std::string svg = read("long_term_decay.svg");
  std::stringstream csv(read("long_term_decay.csv"));
  std::string line;
  std::getline(csv, line);
  std::vector<std::vector<double>> rows;
  while (std::getline(csv, line)) rows.push_back(numbers(line, ","));
  // The example's mapping: y = 420 − 50 − v/35·(420 − 40 − 50), x = 60 + log10(r)/log10(r_max)·640.
  // Each polyline's points="…", found by plain search: std::regex matches a repetition by
  // recursion, one frame per character, and overflowed the stack on these 23 KB attributes under
  // AddressSanitizer.
  const std::string key = "points=\"";
  std::size_t curve = 0;
  for (std::size_t at = svg.find(key); at != std::string::npos;
       at = svg.find(key, at + 1), ++curve) {
    REQUIRE(curve < 2);
    const std::size_t first = at + key.size(), end = svg.find('"', first);
    REQUIRE(end != std::string::npos);
    const auto xy = numbers(svg.substr(first, end - first), ", ");
    std::size_t point = 0;
    for (const auto& row : rows) {
      if (row[0] < 1) continue;
      REQUIRE(2 * point + 1 < xy.size());
      const double x = 60 + std::log10(row[0]) / std::log10(rows.back()[0]) * 640;
      const double y = 370 - row[1 + curve] / 35 * 330;
      // Printed with 6 significant digits: coordinates below 1000 are within 5e-4.
      REQUIRE(std::abs(xy[2 * point] - x) <= 5e-4 + 1e-9);
      REQUIRE(std::abs(xy[2 * point + 1] - y) <= 5e-4 + 1e-9);
      ++point;
    }
    REQUIRE(2 * point == xy.size());
  }
  REQUIRE(curve == 2);
}

TEST_CASE("rotation_2d.svg draws position m at angle m radians", "[examples]") {
  const std::string svg = read("rotation_2d.svg");
  const std::regex arrow(
      "data-position=\"([0-9]+)\" x1=\"([0-9.]+)\" y1=\"([0-9.]+)\" x2=\"([0-9.]+)\" "
      "y2=\"([0-9.]+)\"");
  std::map<int, bool> seen;
  const double pi = std::acos(-1.0), radius = 170;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), arrow); it != std::sregex_iterator();
       ++it) {
    const int m = std::stoi((*it)[1].str());
    const double dx = std::stod((*it)[4].str()) - std::stod((*it)[2].str());
    const double dy = std::stod((*it)[3].str()) - std::stod((*it)[5].str());  // y points down
    // Each coordinate is printed to within 5e-4 of a pixel: the tip is within 5e-4·√2·2 of the
    // exact point, an angle error of at most that over the radius.
    const double slack = 5e-4 * std::sqrt(2.0) * 2;
    INFO("m = " << m);
    REQUIRE(std::abs(std::remainder(std::atan2(dy, dx) - m, 2 * pi)) <= slack / radius);
    REQUIRE(std::abs(std::hypot(dx, dy) - radius) <= slack);
    seen[m] = true;
  }
  REQUIRE(seen.size() == 8);
  REQUIRE(seen.rbegin()->first == 7);
}

TEST_CASE("multimodal.svg draws each model's pairs with the axes of its rule", "[examples]") {
  const std::string svg = read("multimodal.svg");
  // model -> the axis of each drawn pair, in order
  std::map<std::string, std::vector<int>> strips;
  const std::string open = "<g data-model=\"", axis = "data-axis=\"";
  for (std::size_t g = svg.find(open); g != std::string::npos; g = svg.find(open, g + 1)) {
    const std::size_t name_end = svg.find('"', g + open.size());
    const std::size_t end = svg.find("</g>", g);
    REQUIRE((name_end != std::string::npos && end != std::string::npos));
    std::vector<int>& axes = strips[svg.substr(g + open.size(), name_end - g - open.size())];
    for (std::size_t c = svg.find(axis, g); c < end; c = svg.find(axis, c + 1)) {
      axes.push_back(svg[c + axis.size()] - '0');
    }
  }
  REQUIRE(strips.size() == 7);
  const auto count = [](const std::vector<int>& axes, int a) {
    return std::count(axes.begin(), axes.end(), a);
  };
  const std::vector<int>& qwen2 = strips.at("Qwen2-VL {16, 24, 24}");
  REQUIRE(qwen2.size() == 64);
  REQUIRE(std::is_sorted(qwen2.begin(), qwen2.end()));  // consecutive sections
  REQUIRE((count(qwen2, 0) == 16 && count(qwen2, 1) == 24 && count(qwen2, 2) == 24));
  const std::vector<int>& qwen3 = strips.at("Qwen3-VL {24, 20, 20}");
  REQUIRE(qwen3.size() == 64);
  for (std::size_t i = 0; i < 64; ++i) {
    INFO("pair " << i);
    REQUIRE(qwen3[i] == (i < 60 ? int(i % 3) : 0));
  }
  for (const char* name : {"Qwen2-VL ViT (80): θ restarts", "torchtune (64): θ restarts",
                           "Pixtral (64): even θ | odd θ"}) {
    INFO(name);
    const std::vector<int>& axial = strips.at(name);
    REQUIRE(std::is_sorted(axial.begin(), axial.end()));
    REQUIRE(count(axial, 0) == count(axial, 1));
    REQUIRE(count(axial, 0) + count(axial, 1) == std::ptrdiff_t(axial.size()));
  }
  // Blocks per axis, in order: Flux.1's 8, 28 and 28 pairs, Wan's 22, 21 and 21.
  const std::vector<int>& flux = strips.at("Flux.1 {16, 56, 56}: θ restarts");
  REQUIRE(std::is_sorted(flux.begin(), flux.end()));
  REQUIRE((count(flux, 0) == 8 && count(flux, 1) == 28 && count(flux, 2) == 28));
  const std::vector<int>& wan = strips.at("Wan {44, 42, 42}: θ restarts");
  REQUIRE(std::is_sorted(wan.begin(), wan.end()));
  REQUIRE((count(wan, 0) == 22 && count(wan, 1) == 21 && count(wan, 2) == 21));
}
