// A view with its element type erased: its address, shape and strides in bytes. The checks and
// the walk see views this way, so that a program compiles them once for all the storage types it
// rotates (the kernels are the only code compiled per type).
#pragma once

#include <rope/config.hpp>
#if !defined(ROPE_BELOW_CXX17)  // config.hpp stops older standards with one #error

#include <cstddef>
#include <cstdint>

#include <rope/view.hpp>

namespace rope {
inline namespace ROPE_DETAIL_ISA {
namespace detail {

// A view's shape with its strides in bytes (and in elements, as the caller gave them: the byte
// strides wrap around where those are too large, which check_view rejects first).
struct Geometry {
  std::uintptr_t data;
  std::size_t batches, tokens, heads;
  std::size_t batch_stride, token_stride, head_stride;  // bytes
  std::size_t element;                                  // bytes per element
  std::size_t batch_step, token_step, head_step;        // elements
  std::size_t buffer;  // elements of the caller's buffer from data, or View<T>::unknown

  template <class T>
  Geometry(const View<T>& view) noexcept  // NOLINT(google-explicit-constructor)
      : data(reinterpret_cast<std::uintptr_t>(view.data())),
        batches(view.batches()),
        tokens(view.tokens()),
        heads(view.heads()),
        batch_stride(view.batch_stride() * sizeof(T)),
        token_stride(view.token_stride() * sizeof(T)),
        head_stride(view.head_stride() * sizeof(T)),
        element(sizeof(T)),
        batch_step(view.batch_stride()),
        token_step(view.token_stride()),
        head_step(view.head_stride()),
        buffer(view.buffer_size()) {}

  std::size_t rows() const noexcept { return batches * tokens; }
  // Strides in elements, as the messages name them.
  std::size_t elements(std::size_t bytes) const noexcept { return bytes / element; }
  // Bytes from a sequence's first byte to one past its highest head (a view that passed
  // check_view: no wrap-around).
  std::size_t span(std::size_t head_size) const noexcept {
    return (tokens - 1) * token_stride + (heads - 1) * head_stride + head_size * element;
  }
  // The address of head h of row r (rows counted over the batch), as View::head.
  std::uintptr_t address(std::size_t r, std::size_t h) const noexcept {
    const std::size_t row =
        batches == 1 ? r * token_stride : (r / tokens) * batch_stride + (r % tokens) * token_stride;
    return data + row + h * head_stride;
  }
  // Elements from the first to one past the last, as end() counts bytes (a view with heads that
  // passed check_extent).
  std::size_t span_elements(std::size_t head_size) const noexcept {
    return (batches - 1) * batch_step + (tokens - 1) * token_step + (heads - 1) * head_step +
           head_size;
  }
  // One past the view's last byte (a view that passed check_view).
  std::uintptr_t end(std::size_t head_size) const noexcept {
    return data + (batches - 1) * batch_stride + span(head_size);
  }
  // One sequence as a geometry of its own.
  Geometry sequence(std::size_t batch) const noexcept {
    Geometry g = *this;
    g.data += batch * batch_stride;
    g.batches = 1;
    if (g.buffer != View<char>::unknown) g.buffer -= batch * batch_step;
    return g;
  }
};

}  // namespace detail
}  // namespace ROPE_DETAIL_ISA
}  // namespace rope

#endif  // !ROPE_BELOW_CXX17
