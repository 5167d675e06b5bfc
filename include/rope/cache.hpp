// Deprecated: this header is rope/cos_sin_cache.hpp (kept for one release; "cache" now means the
// KV cache of rope/key_cache.hpp alone).
#pragma once

#include <rope/cos_sin_cache.hpp>
