// Rotary position embedding (RoPE) for transformer queries and keys. Includes the whole
// public API.
#pragma once

#include <rope/config.hpp>
#if !defined(ROPE_BELOW_CXX17)  // config.hpp stops older standards with one #error

#include <rope/axes.hpp>
#include <rope/cos_sin_cache.hpp>
#include <rope/execution.hpp>
#include <rope/frequencies.hpp>
#include <rope/key_cache.hpp>
#include <rope/layout.hpp>
#include <rope/multimodal.hpp>
#include <rope/normalize.hpp>
#include <rope/positions.hpp>
#include <rope/qk_norm.hpp>
#include <rope/quantized.hpp>
#include <rope/query_scale.hpp>
#include <rope/reference.hpp>
#include <rope/roles.hpp>
#include <rope/rotary.hpp>
#include <rope/scalar.hpp>
#include <rope/table.hpp>
#include <rope/version.hpp>
#include <rope/view.hpp>
#include <rope/weights.hpp>

#endif  // !ROPE_BELOW_CXX17
