# The layers of outbox, enforced by the compiler.
#
# Every system header lives in /usr/include and every project header under
# the one source root, so include paths alone cannot keep a layer from
# reaching above itself. Instead each library gets a private folder, searched
# before all others, holding a stub for every header it may not include:
# including one stops the build with a message naming the rule. A public
# header that leaks a forbidden include into a lower layer fails the same way.
#
#   outbox_layer(TARGET FORBID name...)
#
# A name is a project folder (actors, storage/sqlite, ...: every .hpp under
# it), a system folder under /usr/include (caf, SQLiteCpp, hiredis), or a
# single system header (sqlite3.h).

function(outbox_layer target)
  cmake_parse_arguments(arg "" "" "FORBID" ${ARGN})
  set(stubs "${CMAKE_BINARY_DIR}/layering/${target}")
  set(wanted "")
  foreach(name IN LISTS arg_FORBID)
    if(EXISTS "${CMAKE_SOURCE_DIR}/${name}" AND
       IS_DIRECTORY "${CMAKE_SOURCE_DIR}/${name}")
      file(GLOB_RECURSE headers CONFIGURE_DEPENDS
        RELATIVE "${CMAKE_SOURCE_DIR}" "${CMAKE_SOURCE_DIR}/${name}/*.hpp")
    elseif(IS_DIRECTORY "/usr/include/${name}")
      file(GLOB_RECURSE headers RELATIVE "/usr/include"
        "/usr/include/${name}/*")
    elseif(EXISTS "/usr/include/${name}")
      set(headers "${name}")
    else()
      message(FATAL_ERROR "outbox_layer(${target}): nothing named ${name}")
    endif()
    foreach(header IN LISTS headers)
      list(APPEND wanted "${header}")
      set(text "#error \"layering: ${target} may not include ${header} (${name} is not below it: see ARCHITECTURE.md)\"\n")
      set(path "${stubs}/${header}")
      # Rewritten only when it changes, so a reconfigure rebuilds nothing.
      if(EXISTS "${path}")
        file(READ "${path}" old)
      else()
        set(old "")
      endif()
      if(NOT old STREQUAL text)
        file(WRITE "${path}" "${text}")
      endif()
    endforeach()
  endforeach()
  # A header that became allowed, or was removed, leaves its stub behind:
  # remove every stub that is no longer wanted.
  file(GLOB_RECURSE existing RELATIVE "${stubs}" "${stubs}/*")
  foreach(header IN LISTS existing)
    if(NOT header IN_LIST wanted)
      file(REMOVE "${stubs}/${header}")
    endif()
  endforeach()
  target_include_directories(${target} BEFORE PRIVATE "${stubs}")
endfunction()
