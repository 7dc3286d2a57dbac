# The layering rule of docs/architecture.md, checked on the sources: each folder of src/ may
# include headers only from the folders below it (and its own), and a subfolder of a folder
# (net/flow, net/packet) the folder's own files and itself but no other subfolder. Run as
#   cmake -DSOURCE_DIR=<project>/src -P cmake/check_layers.cmake
# (CTest: mfabric_layering). Fails listing every include that points up or sideways.
cmake_minimum_required(VERSION 3.20)
if(NOT SOURCE_DIR)
  message(FATAL_ERROR "check_layers.cmake: set -DSOURCE_DIR=<project>/src")
endif()
get_filename_component(SOURCE_DIR "${SOURCE_DIR}" ABSOLUTE)

# Folder -> the folders it may include from, itself included. Keep in step with the picture and
# the rules in docs/architecture.md.
set(allowed_core core)
set(allowed_workload core workload)
set(allowed_fabric core fabric)
set(allowed_net core fabric net)
set(allowed_control core fabric workload control)
set(allowed_mpi core mpi)
set(allowed_tl1 core fabric workload control tl1)
set(allowed_ocs core fabric workload control tl1 ocs)
set(allowed_controller core fabric workload control tl1 controller)
set(allowed_collective core fabric workload net collective)
set(allowed_config core fabric workload net collective control config)
set(allowed_sim core fabric workload net collective control config sim)
set(allowed_runtime core fabric workload control collective mpi runtime)
set(allowed_study core fabric workload net collective control config sim mpi study)
set(allowed_report core fabric workload net collective control config sim mpi study report)
set(allowed_cli core fabric workload net collective control config sim mpi study report tl1 ocs controller
                runtime cli)

file(GLOB folders RELATIVE ${SOURCE_DIR} ${SOURCE_DIR}/*)
set(violations "")
set(checked 0)
foreach(folder IN LISTS folders)
  if(NOT IS_DIRECTORY ${SOURCE_DIR}/${folder})
    continue()
  endif()
  if(NOT DEFINED allowed_${folder})
    list(APPEND violations "src/${folder}/: a folder the layering rule does not know (add it to cmake/check_layers.cmake and docs/architecture.md)")
    continue()
  endif()
  file(GLOB_RECURSE sources ${SOURCE_DIR}/${folder}/*.h ${SOURCE_DIR}/${folder}/*.cpp)
  foreach(source IN LISTS sources)
    math(EXPR checked "${checked} + 1")
    # The subfolder the file is in (net/flow/x.cpp, net/packet/transports/y.h: flow, packet), or
    # none for a file of the folder itself.
    file(RELATIVE_PATH inside ${SOURCE_DIR}/${folder} ${source})
    set(sub "")
    if(inside MATCHES "^([a-z_0-9]+)/")
      set(sub ${CMAKE_MATCH_1})
    endif()
    file(STRINGS ${source} includes REGEX "^[ \t]*#[ \t]*include[ \t]+\"[a-z_0-9]+/")
    foreach(line IN LISTS includes)
      string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]+\"([a-z_0-9]+)/.*" "\\1" target "${line}")
      file(RELATIVE_PATH where ${SOURCE_DIR}/.. ${source})
      string(STRIP "${line}" line)
      if(NOT target IN_LIST allowed_${folder})
        list(JOIN allowed_${folder} ", " below)
        list(APPEND violations "${where}: ${line} (${folder}/ may include only ${below})")
      elseif(target STREQUAL folder AND NOT sub STREQUAL "" AND line MATCHES "\"[a-z_0-9]+/([a-z_0-9]+)/")
        # Subfolders of one folder stand side by side (net/flow, net/packet): each may include
        # the folder's own files and itself, never another; what joins them is in the folder.
        set(other ${CMAKE_MATCH_1})
        if(IS_DIRECTORY ${SOURCE_DIR}/${folder}/${other} AND NOT other STREQUAL sub)
          string(CONCAT v "${where}: ${line} (${folder}/${sub}/ may include ${folder}/ and "
                          "${folder}/${sub}/, not ${folder}/${other}/)")
          list(APPEND violations "${v}")
        endif()
      endif()
    endforeach()
  endforeach()
endforeach()

if(checked EQUAL 0)
  message(FATAL_ERROR "check_layers.cmake: no sources under ${SOURCE_DIR}")
endif()
if(violations)
  # One line each, unwrapped (FATAL_ERROR's text is wrapped).
  foreach(v IN LISTS violations)
    message(NOTICE "${v}")
  endforeach()
  list(LENGTH violations count)
  message(FATAL_ERROR "${count} include(s) against the layering of docs/architecture.md")
endif()
message(STATUS "layering: ${checked} files, every include points down")
