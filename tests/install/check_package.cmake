# ctest's install_package: linv installed to a scratch prefix, used as its users use it. The examples are
# built as a project of their own with find_package(linv) and run, and examples/basic.cpp is compiled
# again with nothing but `pkg-config --cflags --libs linv`.
#   cmake -DBUILD=<linv's build> -DSOURCE=<linv's source> -DWORK=<scratch> -DCXX=<compiler>
#         -DGENERATOR=<generator> -P check_package.cmake
foreach(v BUILD SOURCE WORK CXX GENERATOR)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "check_package.cmake needs -D${v}=...")
  endif()
endforeach()
file(REMOVE_RECURSE ${WORK})
set(prefix ${WORK}/prefix)
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD} --prefix ${prefix} OUTPUT_QUIET COMMAND_ERROR_IS_FATAL ANY)

execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE}/examples -B ${WORK}/examples -G ${GENERATOR}
                        -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_PREFIX_PATH=${prefix}
                COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK}/examples COMMAND_ERROR_IS_FATAL ANY)
foreach(example example_basic example_slam_gauss_newton)
  execute_process(COMMAND ${WORK}/examples/${example} COMMAND_ERROR_IS_FATAL ANY)
endforeach()

find_program(PKG_CONFIG pkg-config REQUIRED)
file(GLOB pc_dirs ${prefix}/lib*/pkgconfig ${prefix}/lib/*/pkgconfig)
set(ENV{PKG_CONFIG_PATH} "${pc_dirs}")
execute_process(COMMAND ${PKG_CONFIG} --cflags --libs linv OUTPUT_VARIABLE flags OUTPUT_STRIP_TRAILING_WHITESPACE
                COMMAND_ERROR_IS_FATAL ANY)
separate_arguments(flags UNIX_COMMAND "${flags}")
execute_process(COMMAND ${CXX} -O1 ${SOURCE}/examples/basic.cpp -o ${WORK}/basic_by_pkg_config ${flags}
                COMMAND_ERROR_IS_FATAL ANY)
# a shared linv outside the loader's paths is found as a pkg-config user finds it: LD_LIBRARY_PATH
file(GLOB lib_dirs ${prefix}/lib*)
execute_process(COMMAND ${CMAKE_COMMAND} -E env "LD_LIBRARY_PATH=${lib_dirs}" ${WORK}/basic_by_pkg_config
                OUTPUT_QUIET COMMAND_ERROR_IS_FATAL ANY)
message(STATUS "installed linv: find_package(linv) and pkg-config both build and run the examples")
