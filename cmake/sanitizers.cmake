# LINV_SANITIZE: instrumentation for every C++ target defined after this file is included (libraries,
# tests, the CLI, the examples), so that a fault in linv's code is caught wherever it runs.
# Third-party libraries (OpenBLAS, matio, nifti_clib, libpng, ...) stay as the system built them: ASan still
# intercepts their allocations, and UBSan needs nothing from them. scripts/sanitize drives both options.
if(LINV_SANITIZE)
  # Any report stops the program, so a test or a fuzzer fails on it rather than printing and going on.
  add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-fsanitize=${LINV_SANITIZE}>
                      $<$<COMPILE_LANGUAGE:CXX>:-fno-sanitize-recover=all>
                      $<$<COMPILE_LANGUAGE:CXX>:-fno-omit-frame-pointer>)
  add_link_options(-fsanitize=${LINV_SANITIZE})
endif()

# LINV_FUZZ's coverage instrumentation is added by tests/fuzz/CMakeLists.txt to the libraries the fuzz
# targets are about.
if(LINV_FUZZ AND NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "LINV_FUZZ=ON needs clang (libFuzzer); configure with CXX=clang++")
endif()
