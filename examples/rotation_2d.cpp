// The picture to see first: one pair (a head of size 2, θ_0 = 1 radian per position) rotated by
// rope to the positions 0..7. Position m turns the vector by m radians; its length never
// changes. Writes rotation_2d.svg (arrows from the origin, one per position, labelled with the
// angle) into the directory given as the first argument (default: the current one). Exits
// non-zero if an arrow is not at angle m or not of the vector's length.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>

#include <Eigen/Core>

#include <rope/rope.hpp>

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : ".";
  rope::Options options;
  options.head_size = 2;  // one pair: θ_0 = base^0 = 1
  const rope::Rotary<double, 2> rot(options);
  const Eigen::Vector2d x(1.0, 0.0);
  const double kPi = std::acos(-1.0);

  constexpr double kSize = 540, kCenter = kSize / 2, kRadius = 170;
  std::ofstream svg(dir + "/rotation_2d.svg");
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kSize << "\" height=\"" << kSize
      << "\" font-family=\"sans-serif\" font-size=\"13\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      << "<defs><marker id=\"tip\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"4\" "
      << "markerHeight=\"4\" orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\"/></marker></defs>\n"
      << "<circle cx=\"" << kCenter << "\" cy=\"" << kCenter << "\" r=\"" << kRadius
      << "\" fill=\"none\" stroke=\"#ccc\" stroke-dasharray=\"4 4\"/>\n"
      << "<text x=\"" << kCenter << "\" y=\"20\" text-anchor=\"middle\" font-size=\"15\">"
      << "x = (1, 0) at positions m = 0..7, θ = 1 rad</text>\n";
  bool ok = true;
  for (std::int64_t m = 0; m < 8; ++m) {
    const Eigen::Vector2d y = rot.rotated(x, m);  // (cos m, sin m)
    // Angle and length against the closed form. y is (cos m, sin m) with each entry rounded
    // once (1·c − 0·s is exact); atan2, norm and the subtraction add a few ulps: 16 ulps of 1.
    const double tolerance = std::ldexp(1.0, -49);
    const double angle_error = std::remainder(std::atan2(y.y(), y.x()) - double(m), 2 * kPi);
    ok = ok && std::abs(angle_error) <= tolerance && std::abs(y.norm() - 1.0) <= tolerance;
    // SVG's y axis points down: the point (u, v) is drawn at (center + R·u, center − R·v).
    const double tip_x = kCenter + kRadius * y.x(), tip_y = kCenter - kRadius * y.y();
    const double label_x = kCenter + 1.3 * kRadius * y.x(),
                 label_y = kCenter - 1.3 * kRadius * y.y();
    const double hue = 360.0 * double(m) / 8;
    svg << "<line data-position=\"" << m << "\" x1=\"" << kCenter << "\" y1=\"" << kCenter
        << "\" x2=\"" << tip_x << "\" y2=\"" << tip_y << "\" stroke=\"hsl(" << hue
        << ",70%,40%)\" stroke-width=\"2.5\" marker-end=\"url(#tip)\"/>\n"
        << "<text x=\"" << label_x << "\" y=\"" << label_y + 5 << "\" text-anchor=\"middle\" "
        << "fill=\"hsl(" << hue << ",70%,35%)\">m=" << m << " (" << m << " rad)</text>\n";
    std::printf("m = %lld: (%+.6f, %+.6f)\n", static_cast<long long>(m), y.x(), y.y());
  }
  svg << "</svg>\n";
  std::printf("wrote %s/rotation_2d.svg; every arrow at angle m, length 1: %s\n", dir.c_str(),
              ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
