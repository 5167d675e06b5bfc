// The element types rope stores, and the type it computes in for each.
#pragma once

#include <rope/config.hpp>
#if !defined(ROPE_BELOW_CXX17)  // config.hpp stops older standards with one #error

#include <type_traits>

#include <Eigen/Core>

namespace rope {
inline namespace ROPE_DETAIL_ISA {

/// True for the element types a Rotary can rotate: float, double, Eigen::half (IEEE binary16)
/// and Eigen::bfloat16.
template <class T>
inline constexpr bool is_storage_type_v =
    std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, Eigen::half> ||
    std::is_same_v<T, Eigen::bfloat16>;

/// The type a rotation of stored T is computed in, and the type of its cos/sin table: double
/// for double, float otherwise. Eigen::half and Eigen::bfloat16 values are widened to float
/// (exactly), rotated in float, and rounded to nearest even when stored.
template <class T>
using compute_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

}  // namespace ROPE_DETAIL_ISA
}  // namespace rope

#endif  // !ROPE_BELOW_CXX17
