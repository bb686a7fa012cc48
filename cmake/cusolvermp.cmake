# Finds the headers of cuSOLVERMp, cuBLASMp and NCCL for the distributed GPU engine and defines the
# interface target linv_cusolvermp and LINV_HAVE_CUSOLVERMP. linv links none of these libraries: it opens
# them at run time (src/cusolvermp/library.cpp), since they need the CUDA driver and linv must start
# without one. Looked for under LINV_CUSOLVERMP_ROOT, in NVIDIA's Python wheels (site-packages/nvidia/cu13,
# nvidia/cublasmp/cu13, nvidia/nccl) and in the CUDA toolkit; the directories where the libraries were
# found are remembered for the run-time search.
find_package(Python3 COMPONENTS Interpreter QUIET)
set(linv_wheel_roots "")
if(Python3_Interpreter_FOUND)
  execute_process(COMMAND ${Python3_EXECUTABLE} -c
                  "import site; print(';'.join(site.getsitepackages() + [site.getusersitepackages()]))"
                  OUTPUT_VARIABLE linv_site_dirs OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  foreach(dir IN LISTS linv_site_dirs)
    list(APPEND linv_wheel_roots ${dir}/nvidia/cu13 ${dir}/nvidia/cublasmp/cu13 ${dir}/nvidia/nccl)
  endforeach()
endif()
set(linv_mp_hints ${LINV_CUSOLVERMP_ROOT} $ENV{LINV_CUSOLVERMP_ROOT} ${linv_wheel_roots})
find_path(CUSOLVERMP_INCLUDE_DIR cusolverMp.h HINTS ${linv_mp_hints} PATH_SUFFIXES include)
find_path(CUBLASMP_INCLUDE_DIR cublasmp.h HINTS ${linv_mp_hints} PATH_SUFFIXES include)
find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${linv_mp_hints} ${CUDAToolkit_INCLUDE_DIRS} PATH_SUFFIXES include)
find_library(CUSOLVERMP_LIBRARY NAMES cusolverMp libcusolverMp.so.0 HINTS ${linv_mp_hints} PATH_SUFFIXES lib lib64)
find_library(CUBLASMP_LIBRARY NAMES cublasmp libcublasmp.so.0 HINTS ${linv_mp_hints} PATH_SUFFIXES lib lib64)
find_library(NCCL_LIBRARY NAMES libnccl.so.2 nccl HINTS ${linv_mp_hints} ${CUDAToolkit_LIBRARY_DIR} PATH_SUFFIXES lib lib64)
if(CUSOLVERMP_INCLUDE_DIR AND CUBLASMP_INCLUDE_DIR AND NCCL_INCLUDE_DIR)
  set(linv_mp_library_dirs "")
  foreach(library IN ITEMS ${CUSOLVERMP_LIBRARY} ${CUBLASMP_LIBRARY} ${NCCL_LIBRARY})
    if(library)
      get_filename_component(dir ${library} DIRECTORY)
      list(APPEND linv_mp_library_dirs ${dir})
    endif()
  endforeach()
  list(REMOVE_DUPLICATES linv_mp_library_dirs)
  list(JOIN linv_mp_library_dirs ":" linv_mp_library_path)
  add_library(linv_cusolvermp INTERFACE)
  target_include_directories(linv_cusolvermp SYSTEM INTERFACE $<BUILD_INTERFACE:${CUSOLVERMP_INCLUDE_DIR}>
                             $<BUILD_INTERFACE:${CUBLASMP_INCLUDE_DIR}> $<BUILD_INTERFACE:${NCCL_INCLUDE_DIR}>)
  target_link_libraries(linv_cusolvermp INTERFACE ${CMAKE_DL_LIBS})
  set(LINV_HAVE_CUSOLVERMP ON)
  message(STATUS "linv: distributed GPU engine with cuSOLVERMp (${CUSOLVERMP_INCLUDE_DIR}), opened at run time")
else()
  message(STATUS "linv: cuSOLVERMp, cuBLASMp or NCCL headers not found, building without the distributed GPU engine")
endif()
