# The dashboard: every file of web/dist (built from web/ by its own script) is compiled into
# the library, so `mfu serve` needs no files beside the binary and no network. Until the web
# front end lands, a small placeholder page from src/server/placeholder is embedded instead.
# Once web/package.json exists, a missing web/dist is an error that says how to build it.
set(_mfu_web_dist ${CMAKE_SOURCE_DIR}/web/dist)
if(EXISTS ${_mfu_web_dist}/index.html)
  file(GLOB _mfu_web_files LIST_DIRECTORIES false CONFIGURE_DEPENDS ${_mfu_web_dist}/*)
elseif(EXISTS ${CMAKE_SOURCE_DIR}/web/package.json)
  message(FATAL_ERROR "web/dist/index.html is missing: build the dashboard first "
                      "(bash scripts/deps.sh, or: cd web && npm ci && npm run build)")
else()
  file(GLOB _mfu_web_files LIST_DIRECTORIES false CONFIGURE_DEPENDS
       ${CMAKE_SOURCE_DIR}/src/server/placeholder/*)
endif()
list(SORT _mfu_web_files)
mfu_embed_files(${MFU_GEN_DIR}/web_assets.c mfu__web_assets ${_mfu_web_files})
list(APPEND MFU_GENERATED_SOURCES ${MFU_GEN_DIR}/web_assets.c)
