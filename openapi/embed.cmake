# Embeds openapi/openapi.yaml in the agent, so `GET /v1/openapi.yaml` serves
# the document the binary was built with, without the source tree (xxd is
# not installed everywhere, so CMake itself turns the file into C).
#
# Two modes in one file:
#  - included from the top-level CMakeLists.txt after nettune_core exists:
#    adds the generated source to nettune_core, regenerated whenever the
#    document or this script changes;
#  - run as `cmake -DIN=... -DOUT=... -P embed.cmake`: writes OUT, a C file
#    defining nt_openapi_yaml (NUL-terminated) and nt_openapi_yaml_len.
if(CMAKE_SCRIPT_MODE_FILE)
  file(READ "${IN}" hex HEX)
  string(LENGTH "${hex}" nhex)
  math(EXPR len "${nhex} / 2")
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
  # Break the array into lines of 16 bytes so compilers and diffs cope.
  string(REGEX REPLACE "((0x[0-9a-f][0-9a-f],){16})" "\\1\n" bytes "${bytes}")
  file(WRITE "${OUT}"
    "/* Generated from openapi/openapi.yaml by openapi/embed.cmake; do not edit. */\n"
    "#include <stddef.h>\n"
    "const unsigned char nt_openapi_yaml[] = {\n${bytes}0x00\n};\n"
    "const size_t nt_openapi_yaml_len = ${len};\n")
  return()
endif()

set(NT_OPENAPI_SRC ${CMAKE_CURRENT_LIST_DIR}/openapi.yaml)
set(NT_OPENAPI_C ${CMAKE_BINARY_DIR}/generated/nt_openapi_doc.c)
add_custom_command(OUTPUT ${NT_OPENAPI_C}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/generated
  COMMAND ${CMAKE_COMMAND} -DIN=${NT_OPENAPI_SRC} -DOUT=${NT_OPENAPI_C}
          -P ${CMAKE_CURRENT_LIST_FILE}
  DEPENDS ${NT_OPENAPI_SRC} ${CMAKE_CURRENT_LIST_FILE}
  COMMENT "Embedding openapi/openapi.yaml"
  VERBATIM)
target_sources(nettune_core PRIVATE ${NT_OPENAPI_C})
