// The config.json reader compiled once: the rope::hf_config library (CMakeLists.txt), whose users
// include rope/hf_config.hpp's declarations only (ROPE_HF_CONFIG_COMPILED).
#define ROPE_HF_CONFIG_SOURCE
#include <rope/hf_config.hpp>
