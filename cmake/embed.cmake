# mfu_embed_files(OUT_C SYMBOL FILES...): at build time, turn data files into a C source that
# defines `const struct mfu__embedded SYMBOL[]` (name, bytes, size), terminated by {0}.
# The CLI and library then need no files beside the binary.
function(mfu_embed_files out_c symbol)
  set(files ${ARGN})
  # The list travels as one -D argument: its semicolons must survive add_custom_command.
  string(REPLACE ";" "$<SEMICOLON>" files_arg "${files}")
  add_custom_command(
    OUTPUT ${out_c}
    COMMAND ${CMAKE_COMMAND} -DOUT=${out_c} -DSYMBOL=${symbol} "-DFILES=${files_arg}"
            -P ${CMAKE_SOURCE_DIR}/cmake/embed_run.cmake
    DEPENDS ${files} ${CMAKE_SOURCE_DIR}/cmake/embed_run.cmake
    COMMENT "Embedding ${symbol}"
    VERBATIM)
endfunction()
