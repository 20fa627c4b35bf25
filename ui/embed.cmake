# SPDX-License-Identifier: Apache-2.0
# Embeds the web view's files (ui/*.html, *.css, *.js) in the agent, so
# `GET /ui/` serves the page the binary was built with, with no source tree,
# no build step that needs the network and no CDN (as openapi/embed.cmake
# does for the OpenAPI document).
#
# Two modes in one file:
#  - included from the top-level CMakeLists.txt after nettune_core exists:
#    adds the generated source to nettune_core, regenerated whenever a file
#    or this script changes (a new file is picked up at the next configure);
#  - run as `cmake -DDIR=... -DFILES=a,b -DOUT=... -P embed.cmake`: writes
#    OUT, a C file defining nt_ui_assets[] (api/ui_assets.h).
if(CMAKE_SCRIPT_MODE_FILE)
  string(REPLACE "," ";" files "${FILES}")
  set(arrays "")
  set(table "")
  set(i 0)
  foreach(f ${files})
    file(READ "${DIR}/${f}" hex HEX)
    string(LENGTH "${hex}" nhex)
    math(EXPR len "${nhex} / 2")
    string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
    string(REGEX REPLACE "((0x[0-9a-f][0-9a-f],){16})" "\\1\n" bytes "${bytes}")
    string(APPEND arrays "static const unsigned char asset${i}[] = {\n${bytes}0x00\n};\n")
    string(APPEND table "\t{ \"${f}\", asset${i}, ${len} },\n")
    math(EXPR i "${i} + 1")
  endforeach()
  file(WRITE "${OUT}"
    "/* Generated from ui/ by ui/embed.cmake; do not edit. */\n"
    "#include \"api/ui_assets.h\"\n"
    "${arrays}"
    "const nt_ui_asset nt_ui_assets[] = {\n${table}\t{ NULL, NULL, 0 },\n};\n")
  return()
endif()

file(GLOB NT_UI_FILES CONFIGURE_DEPENDS RELATIVE ${CMAKE_CURRENT_LIST_DIR}
  ${CMAKE_CURRENT_LIST_DIR}/*.html ${CMAKE_CURRENT_LIST_DIR}/*.css ${CMAKE_CURRENT_LIST_DIR}/*.js)
list(SORT NT_UI_FILES)
set(NT_UI_DEPS "")
foreach(f ${NT_UI_FILES})
  list(APPEND NT_UI_DEPS ${CMAKE_CURRENT_LIST_DIR}/${f})
endforeach()
string(REPLACE ";" "," NT_UI_LIST "${NT_UI_FILES}")
set(NT_UI_C ${CMAKE_BINARY_DIR}/generated/nt_ui_assets.c)
add_custom_command(OUTPUT ${NT_UI_C}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/generated
  COMMAND ${CMAKE_COMMAND} -DDIR=${CMAKE_CURRENT_LIST_DIR} -DFILES=${NT_UI_LIST}
          -DOUT=${NT_UI_C} -P ${CMAKE_CURRENT_LIST_FILE}
  DEPENDS ${NT_UI_DEPS} ${CMAKE_CURRENT_LIST_FILE}
  COMMENT "Embedding the web view (ui/)"
  VERBATIM)
target_sources(nettune_core PRIVATE ${NT_UI_C})
