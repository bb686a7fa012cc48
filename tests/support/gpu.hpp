// GPU tests skip cleanly, saying why, where no CUDA GPU is usable.
#pragma once

#include <gtest/gtest.h>

#include "linv/device.hpp"

#define REQUIRE_GPU()                                                                                  \
  if (::linv::cuda_devices().gpus.empty()) {                                                           \
    GTEST_SKIP() << "no CUDA GPU usable (" << ::linv::cuda_devices().why_none << "): CUDA tests skipped"; \
  }
