// RoPE's long-term decay (RoFormer, section 3.4.3). Grouping a head's d/2 pairs as complex
// numbers, the score of a query at m and a key at n = m + r is Re[Σ_j h_j·e^{i·r·θ_j}], with
// h_j = q_j·conj(k_j). Abel summation bounds it by max_j |h_{j+1} − h_j| · Σ_{j=1}^{d/2} |S_j|,
// S_j = Σ_{k<j} e^{i·r·θ_k}; the relative bound (1/(d/2))·Σ_j |S_j| falls as r grows: distant
// tokens can contribute less.
//
// Writes long_term_decay.csv and long_term_decay.svg (a plot, log scale in r) into the directory
// given as the first argument (default: the current one), for d = 128 with base 10000 (LLaMA 2)
// and base 500000 with Llama 3.1's scaling. Exits non-zero if the bound at r = 0 is not its
// closed form (d/2 + 1)/2 or the curves do not decay.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <rope/rope.hpp>

namespace {

constexpr std::size_t kHeadSize = 128;

// (1/(d/2))·Σ_{j=1}^{d/2} |S_j| at distance r. The table row of position r in the interleaved
// layout is [cos rθ_0, sin rθ_0, cos rθ_1, ...]: the numbers e^{i·r·θ_k} themselves.
double relative_bound(const std::vector<double>& theta, double r) {
  std::vector<double> row(2 * theta.size());
  rope::Table<double>::compute_row(rope::Layout::interleaved, theta, r, row.data());
  double re = 0, im = 0, sum = 0;
  for (std::size_t k = 0; k < theta.size(); ++k) {
    re += row[2 * k];  // S_{k+1} = S_k + e^{i·r·θ_k}
    im += row[2 * k + 1];
    sum += std::hypot(re, im);
  }
  return sum / double(theta.size());
}

struct Curve {
  const char* name;
  const char* color;
  std::vector<double> theta;
  std::vector<double> bound;
};

// The plot: x = log10(r) for r ≥ 1, y linear from 0 to the value at r = 0.
void write_svg(const std::string& path, const std::vector<double>& rs,
               const std::vector<Curve>& curves, double top) {
  constexpr double kWidth = 720, kHeight = 420, kLeft = 60, kRight = 20, kTop = 40, kBottom = 50;
  const double x_max = std::log10(rs.back());
  const auto px = [&](double r) {
    return kLeft + std::log10(r) / x_max * (kWidth - kLeft - kRight);
  };
  const auto py = [&](double v) {
    return kHeight - kBottom - v / top * (kHeight - kTop - kBottom);
  };
  std::ofstream svg(path);
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth << "\" height=\"" << kHeight
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      << "<text x=\"" << kWidth / 2 << "\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">"
      << "RoPE long-term decay: relative upper bound (1/(d/2))·Σ|S_j|, d = " << kHeadSize
      << "</text>\n";
  for (double r = 1; r <= rs.back(); r *= 10) {  // vertical grid and r labels
    svg << "<line x1=\"" << px(r) << "\" y1=\"" << py(0) << "\" x2=\"" << px(r) << "\" y2=\""
        << py(top) << "\" stroke=\"#ddd\"/>\n<text x=\"" << px(r) << "\" y=\"" << py(0) + 18
        << "\" text-anchor=\"middle\">" << r << "</text>\n";
  }
  for (double v = 0; v <= top; v += 5) {  // horizontal grid and value labels
    svg << "<line x1=\"" << px(1) << "\" y1=\"" << py(v) << "\" x2=\"" << px(rs.back())
        << "\" y2=\"" << py(v) << "\" stroke=\"#ddd\"/>\n<text x=\"" << kLeft - 8 << "\" y=\""
        << py(v) + 4 << "\" text-anchor=\"end\">" << v << "</text>\n";
  }
  svg << "<text x=\"" << kWidth / 2 << "\" y=\"" << kHeight - 10
      << "\" text-anchor=\"middle\">relative distance r = n − m (log scale)</text>\n";
  for (std::size_t c = 0; c < curves.size(); ++c) {
    svg << "<polyline fill=\"none\" stroke=\"" << curves[c].color << "\" stroke-width=\"1.2\" "
        << "points=\"";
    for (std::size_t i = 0; i < rs.size(); ++i) {
      if (rs[i] >= 1) svg << px(rs[i]) << ',' << py(curves[c].bound[i]) << ' ';
    }
    svg << "\"/>\n<text x=\"" << kWidth - kRight - 10 << "\" y=\"" << kTop + 20 + 18 * double(c)
        << "\" text-anchor=\"end\" fill=\"" << curves[c].color << "\">" << curves[c].name
        << "</text>\n";
  }
  svg << "</svg>\n";
}

}  // namespace

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : ".";
  std::vector<Curve> curves = {
      {"base 10000 (LLaMA 2)", "#1f77b4", rope::inverse_frequencies(kHeadSize, 10000.0), {}},
      {"base 500000, Llama 3.1 scaling",
       "#d62728",
       rope::frequencies(kHeadSize, 500000.0, rope::Llama3{}).theta,
       {}}};
  // Every r up to 1024, then 64 points per doubling up to 131072.
  std::vector<double> rs;
  for (int r = 0; r <= 1024; ++r) rs.push_back(r);
  for (int i = 1; i <= 7 * 64; ++i) rs.push_back(std::round(1024 * std::exp2(i / 64.0)));
  for (Curve& curve : curves) {
    for (const double r : rs) curve.bound.push_back(relative_bound(curve.theta, r));
  }

  std::ofstream csv(dir + "/long_term_decay.csv");
  csv << "r,base_10000,llama3_500000\n";
  csv.precision(17);
  for (std::size_t i = 0; i < rs.size(); ++i) {
    csv << rs[i] << ',' << curves[0].bound[i] << ',' << curves[1].bound[i] << '\n';
  }
  const double at_zero = (double(kHeadSize) / 2 + 1) / 2;  // S_j = j at r = 0
  write_svg(dir + "/long_term_decay.svg", rs, curves, std::ceil(at_zero / 5) * 5);

  // The mean of each curve over r in [10^k, 10^(k+1)).
  bool ok = true;
  for (const Curve& curve : curves) {
    std::printf("%-32s r=0: %.4f", curve.name, curve.bound[0]);
    ok = ok && curve.bound[0] == at_zero;
    double previous = curve.bound[0];
    for (double low = 1; low < 1e5; low *= 10) {
      double sum = 0;
      int count = 0;
      for (std::size_t i = 0; i < rs.size(); ++i) {
        if (rs[i] >= low && rs[i] < 10 * low) sum += curve.bound[i], ++count;
      }
      std::printf("  [%g, %g): %.3f", low, 10 * low, sum / count);
      ok = ok && sum / count < previous;
      previous = sum / count;
    }
    std::printf("\n");
  }
  std::printf(
      "wrote %s/long_term_decay.csv and .svg; r = 0 gives (d/2 + 1)/2 = %.1f and the "
      "bound decays: %s\n",
      dir.c_str(), at_zero, ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
