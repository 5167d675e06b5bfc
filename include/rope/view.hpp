// A strided [batch][tokens][heads][head_size] view of caller memory.
#pragma once

#include <rope/config.hpp>
#if !defined(ROPE_BELOW_CXX17)  // config.hpp stops older standards with one #error

#include <cstddef>
#include <iterator>
#include <type_traits>
#include <utility>

namespace rope {
inline namespace ROPE_DETAIL_ISA {

/// The head vectors of `batches` sequences of `tokens` tokens × `heads` heads in caller memory;
/// no ownership.
///
/// Head (b, t, h) starts at data + b·batch_stride + t·token_stride + h·head_stride (strides in
/// elements) and its head_size coordinates are contiguous. With strides, one View covers the
/// common tensor layouts without a copy (d = head_size):
///
///     [tokens, heads, d]        contiguous(data, tokens, heads, d)
///     [heads, tokens, d]        View(data, tokens, heads, d, tokens·d)
///     q in a fused [tokens, (hq + 2·hk)·d] QKV buffer:
///                               View(data, tokens, hq, (hq + 2·hk)·d, d)
///     [batch, seq, heads, d]    batch_seq_heads(data, batch, seq, heads, d)
///     [batch, heads, seq, d]    batch_heads_seq(data, batch, heads, seq, d)  (HuggingFace's)
///
/// A call counts the tokens of all sequences one after the other: token t is token t mod
/// tokens() of sequence t / tokens(), and the call takes rows() = batches() · tokens() positions.
/// View<T> converts to View<const T>.
///
/// A View made from a container (anything with data() and size(): std::vector, std::array,
/// Eigen's vectors) or given its buffer's length with within(n) knows how many elements its
/// buffer holds from data(), and every checked call checks that its heads end inside it (E81). A
/// View made from a bare pointer does not (buffer_size() is View::unknown): no call can check it.
template <class T>
class View {
 public:
  /// buffer_size() of a view whose buffer's length was not given.
  static constexpr std::size_t unknown = static_cast<std::size_t>(-1);

  /// One sequence: head (t, h) at data + t·token_stride + h·head_stride.
  View(T* data, std::size_t tokens, std::size_t heads, std::size_t token_stride,
       std::size_t head_stride) noexcept
      : View(data, 1, tokens, heads, 0, token_stride, head_stride) {}

  /// `batches` sequences, sequence b starting at data + b·batch_stride.
  View(T* data, std::size_t batches, std::size_t tokens, std::size_t heads,
       std::size_t batch_stride, std::size_t token_stride, std::size_t head_stride) noexcept
      : data_(data),
        batches_(batches),
        tokens_(tokens),
        heads_(heads),
        batch_stride_(batch_stride),
        token_stride_(token_stride),
        head_stride_(head_stride) {}

  /// A densely packed [tokens][heads][head_size] buffer.
  static View contiguous(T* data, std::size_t tokens, std::size_t heads,
                         std::size_t head_size) noexcept {
    return View(data, tokens, heads, heads * head_size, head_size);
  }
  /// A densely packed [tokens][heads][head_size] buffer that is a container's elements: its
  /// size is the view's buffer_size().
  template <class Container, class = std::enable_if_t<std::is_convertible_v<
                                 decltype(std::data(std::declval<Container&>())), T*>>>
  static View contiguous(Container& buffer, std::size_t tokens, std::size_t heads,
                         std::size_t head_size) noexcept {
    return contiguous(std::data(buffer), tokens, heads, head_size)
        .within(static_cast<std::size_t>(std::size(buffer)));
  }
  /// A densely packed [batch][seq][heads][head_size] tensor.
  static View batch_seq_heads(T* data, std::size_t batch, std::size_t seq, std::size_t heads,
                              std::size_t head_size) noexcept {
    return View(data, batch, seq, heads, seq * heads * head_size, heads * head_size, head_size);
  }
  /// A densely packed [batch][heads][seq][head_size] tensor (HuggingFace's query_states).
  static View batch_heads_seq(T* data, std::size_t batch, std::size_t heads, std::size_t seq,
                              std::size_t head_size) noexcept {
    return View(data, batch, seq, heads, heads * seq * head_size, head_size, seq * head_size);
  }

  /// View<float> → View<const float>.
  template <class U, std::enable_if_t<std::is_same_v<const U, T> && !std::is_same_v<U, T>, int> = 0>
  View(const View<U>& other) noexcept  // NOLINT(google-explicit-constructor)
      : View(other.data(), other.batches(), other.tokens(), other.heads(), other.batch_stride(),
             other.token_stride(), other.head_stride()) {
    buffer_size_ = other.buffer_size();
  }

  /// The same view of a buffer of `elements` elements from data(): the calls check that every
  /// head ends inside it.
  View within(std::size_t elements) const noexcept {
    View v = *this;
    v.buffer_size_ = elements;
    return v;
  }

  T* data() const noexcept { return data_; }
  std::size_t batches() const noexcept { return batches_; }
  /// Tokens of one sequence.
  std::size_t tokens() const noexcept { return tokens_; }
  std::size_t heads() const noexcept { return heads_; }
  /// Tokens of all sequences: the positions a call takes.
  std::size_t rows() const noexcept { return batches_ * tokens_; }
  std::size_t batch_stride() const noexcept { return batch_stride_; }
  std::size_t token_stride() const noexcept { return token_stride_; }
  std::size_t head_stride() const noexcept { return head_stride_; }
  /// The elements of the buffer from data(), as the view was given them, or View::unknown.
  std::size_t buffer_size() const noexcept { return buffer_size_; }

  /// The first coordinate of head `head` of token `token` of sequence `batch`. Unchecked.
  T* head(std::size_t batch, std::size_t token, std::size_t head) const noexcept {
    return data_ + batch * batch_stride_ + token * token_stride_ + head * head_stride_;
  }
  /// The first coordinate of head `head` of token `row` counted over the batch. Unchecked.
  T* head(std::size_t row, std::size_t head) const noexcept {
    if (batches_ == 1) return data_ + row * token_stride_ + head * head_stride_;
    return this->head(row / tokens_, row % tokens_, head);
  }

 private:
  T* data_;
  std::size_t batches_;
  std::size_t tokens_;
  std::size_t heads_;
  std::size_t batch_stride_;
  std::size_t token_stride_;
  std::size_t head_stride_;
  std::size_t buffer_size_ = unknown;
};

}  // namespace ROPE_DETAIL_ISA
}  // namespace rope

#endif  // !ROPE_BELOW_CXX17
