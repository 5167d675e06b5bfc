// A strided [tokens][heads][head_size] view of caller memory.
#pragma once

#include <cstddef>
#include <type_traits>

namespace rope {

/// The head vectors of `tokens` tokens × `heads` heads in caller memory; no ownership.
///
/// Head (t, h) starts at data + t·token_stride + h·head_stride (strides in elements) and its
/// head_size coordinates are contiguous. With strides, one View covers common tensor layouts
/// without a copy (d = head_size):
///
///     [tokens, heads, d]            token_stride = heads·d,       head_stride = d
///     [heads, tokens, d]            token_stride = d,             head_stride = tokens·d
///     q in a fused [tokens, (hq + 2·hk)·d] QKV buffer:
///                                   token_stride = (hq + 2·hk)·d, head_stride = d
///
/// A [batch, seq, heads, d] tensor is one View of batch·seq tokens; a [batch, heads, seq, d]
/// tensor is one View per batch element. View<T> converts to View<const T>.
template <class T>
class View {
 public:
  View(T* data, std::size_t tokens, std::size_t heads, std::size_t token_stride,
       std::size_t head_stride) noexcept
      : data_(data),
        tokens_(tokens),
        heads_(heads),
        token_stride_(token_stride),
        head_stride_(head_stride) {}

  /// A densely packed [tokens][heads][head_size] buffer.
  static View contiguous(T* data, std::size_t tokens, std::size_t heads,
                         std::size_t head_size) noexcept {
    return View(data, tokens, heads, heads * head_size, head_size);
  }

  /// View<float> → View<const float>.
  template <class U, std::enable_if_t<std::is_same_v<const U, T> && !std::is_same_v<U, T>, int> = 0>
  View(const View<U>& other) noexcept  // NOLINT(google-explicit-constructor)
      : View(other.data(), other.tokens(), other.heads(), other.token_stride(),
             other.head_stride()) {}

  T* data() const noexcept { return data_; }
  std::size_t tokens() const noexcept { return tokens_; }
  std::size_t heads() const noexcept { return heads_; }
  std::size_t token_stride() const noexcept { return token_stride_; }
  std::size_t head_stride() const noexcept { return head_stride_; }

  /// The first coordinate of head (token, head). Unchecked.
  T* head(std::size_t token, std::size_t head) const noexcept {
    return data_ + token * token_stride_ + head * head_stride_;
  }

 private:
  T* data_;
  std::size_t tokens_;
  std::size_t heads_;
  std::size_t token_stride_;
  std::size_t head_stride_;
};

}  // namespace rope
