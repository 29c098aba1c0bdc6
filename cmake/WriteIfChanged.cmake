# outbox_write_if_changed(PATH TEXT): writes TEXT to PATH only when the file
# holds something else, so that a reconfigure (or a generator run again)
# leaves its time alone and rebuilds nothing that depends on it. Included
# by the configure (Layering.cmake, LayerTable.cmake) and by the -P scripts
# (EmbedText.cmake, LayerTable.cmake).

function(outbox_write_if_changed path text)
  if(EXISTS "${path}")
    file(READ "${path}" old)
  else()
    set(old "")
  endif()
  if(NOT old STREQUAL text)
    file(WRITE "${path}" "${text}")
  endif()
endfunction()
