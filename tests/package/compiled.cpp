// The compiled mode as a consumer of the package links it (rope::compiled): apply on float and
// half heads, and the fused call with the keys into a half cache, from the instantiations compiled
// once; each result checked against the reference rotation.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include <rope/rope.hpp>

#if !defined(ROPE_EXTERN_TEMPLATES)
#error "rope::compiled defines ROPE_EXTERN_TEMPLATES for the targets that link it"
#endif

namespace {

constexpr std::size_t kD = 128;

// The float64 reference of one head at `position`, half_split.
std::vector<double> reference(const std::vector<float>& head, double position) {
  std::vector<double> x(head.begin(), head.end());
  rope::reference::rotate_half_split(x.data(), kD, position);
  return x;
}

bool near(double got, double want, double tolerance, const char* what, std::size_t i) {
  if (std::abs(got - want) <= tolerance) return true;
  std::printf("%s coordinate %zu: %.9g, expected %.9g\n", what, i, got, want);
  return false;
}

}  // namespace

int main() {
  const rope::Rotary<float, kD> rot_float;
  const rope::Rotary<Eigen::half, kD> rot_half;
  std::vector<float> head(kD);
  for (std::size_t i = 0; i < kD; ++i) head[i] = float(std::sin(0.37 * double(i + 1)));
  const std::int64_t position = 1000;
  const std::vector<double> want = reference(head, double(position));

  std::vector<float> x = head;
  rot_float.apply(x.data(), 1, 1, &position);
  std::vector<Eigen::half> h(head.begin(), head.end());
  rot_half.apply(h.data(), 1, 1, &position);
  // Keys into row 2 of a half cache, queries (the same head) in place, in one pass.
  std::vector<float> q = head;
  std::vector<Eigen::half> cache(4 * kD, Eigen::half(0));
  const std::int64_t slot = 2;
  rot_float.apply_qk(
      rope::Queries(rope::View<float>::contiguous(q.data(), 1, 1, kD)),
      rope::Keys(rope::View<const float>::contiguous(head.data(), 1, 1, kD),
                 rope::KeyCache<Eigen::half>{
                     rope::View<Eigen::half>::contiguous(cache.data(), 4, 1, kD), {&slot, 1}}),
      &position);

  bool ok = true;
  for (std::size_t i = 0; i < kD; ++i) {
    // float: a few ulps of the position's angle (|x| ≤ 1); half: one rounding of 2^-11 more.
    ok = near(x[i], want[i], 1e-4, "float", i) && ok;
    ok = near(double(h[i]), want[i], 2e-3, "half", i) && ok;
    ok = near(q[i], x[i], 0.0, "fused queries", i) && ok;
    ok = near(double(cache[2 * kD + i]), double(Eigen::half(x[i])), 0.0, "cache row", i) && ok;
  }
  if (!ok) return 1;
  std::printf("rope %d.%d.%d compiled mode (%s): ok\n", ROPE_VERSION_MAJOR, ROPE_VERSION_MINOR,
              ROPE_VERSION_PATCH, rope::instruction_set());
  return 0;
}
