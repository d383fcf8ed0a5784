# The dashboard: every file of web/dist (made from web/ by web/build.sh, which scripts/deps.sh
# runs after `npm ci`) is compiled into the library, so `mfu serve` needs no files beside the
# binary and no network. The build stops with the way to make web/dist when it is missing.
set(_mfu_web_dist ${CMAKE_SOURCE_DIR}/web/dist)
if(NOT EXISTS ${_mfu_web_dist}/index.html)
  message(FATAL_ERROR "web/dist/index.html is missing: build the dashboard first with "
                      "'bash scripts/deps.sh' (npm ci in web/, then web/build.sh), or "
                      "'bash web/build.sh' when web/node_modules is installed")
endif()
file(GLOB _mfu_web_files LIST_DIRECTORIES false CONFIGURE_DEPENDS ${_mfu_web_dist}/*)
list(SORT _mfu_web_files)
mfu_embed_files(${MFU_GEN_DIR}/web_assets.c mfu__web_assets ${_mfu_web_files})
list(APPEND MFU_GENERATED_SOURCES ${MFU_GEN_DIR}/web_assets.c)
