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
#
# A system folder's headers are stubbed twice: by their path from
# /usr/include (<hiredis/hiredis.h>) and by their bare name, the path from
# the folder itself (<hiredis.h>), which is how they are found through a
# pkg-config include folder (-I/usr/include/hiredis) some other library
# brought in. A bare name that also names a project header or a header of
# another include folder the compiler searches (its own, or an imported
# library's) is not stubbed: the stub would shadow that one, which the
# library may well include.
#
# The stubs only catch includes that search the include path. A quoted
# include is looked up next to the including file first, where no stub
# stands in its way: every project include is therefore written from the
# source root ("storage/sqlite/x.hpp", never "sqlite/x.hpp"), as
# tests/architecture/include_paths_test.cpp checks.
#
#   outbox_layer_map(FOLDER)
#
# writes what every outbox_layer() call so far forbade to FOLDER/layers.txt,
# and from it the Markdown tables of ARCHITECTURE.md's "Layers" to
# FOLDER/layers.md (cmake/LayerTable.cmake).

include("${CMAKE_CURRENT_LIST_DIR}/LayerTable.cmake")

# The folders a bare include may be found in: the compiler's own, and those
# of the imported libraries (pkg-config's /usr/include/hiredis...). Once per
# configure, after the find_package() calls that import the libraries.
function(outbox_layer_search_path out)
  get_property(known GLOBAL PROPERTY OUTBOX_LAYER_SEARCH_PATH SET)
  if(NOT known)
    set(dirs ${CMAKE_CXX_IMPLICIT_INCLUDE_DIRECTORIES})
    get_property(imported DIRECTORY "${CMAKE_SOURCE_DIR}"
      PROPERTY IMPORTED_TARGETS)
    foreach(library IN LISTS imported)
      get_target_property(found ${library} INTERFACE_INCLUDE_DIRECTORIES)
      foreach(dir IN LISTS found)
        # A generator expression is not a folder yet.
        if(dir AND NOT dir MATCHES "\\$<" AND IS_DIRECTORY "${dir}")
          list(APPEND dirs "${dir}")
        endif()
      endforeach()
    endforeach()
    list(REMOVE_DUPLICATES dirs)
    set_property(GLOBAL PROPERTY OUTBOX_LAYER_SEARCH_PATH "${dirs}")
  endif()
  get_property(dirs GLOBAL PROPERTY OUTBOX_LAYER_SEARCH_PATH)
  set(${out} "${dirs}" PARENT_SCOPE)
endfunction()

# Sets OUT to the bare names of the headers of /usr/include/FOLDER that
# shadow nothing (see the top of this file).
function(outbox_layer_bare_names out folder headers)
  outbox_layer_search_path(search)
  set(bare "")
  foreach(header IN LISTS headers)
    string(LENGTH "${folder}/" skip)
    string(SUBSTRING "${header}" ${skip} -1 name)
    set(shadows FALSE)
    if(EXISTS "${CMAKE_SOURCE_DIR}/${name}")
      set(shadows TRUE)
    endif()
    foreach(dir IN LISTS search)
      if(NOT dir STREQUAL "/usr/include/${folder}" AND EXISTS "${dir}/${name}")
        set(shadows TRUE)
      endif()
    endforeach()
    if(NOT shadows)
      list(APPEND bare "${name}")
    endif()
  endforeach()
  set(${out} "${bare}" PARENT_SCOPE)
endfunction()

function(outbox_layer target)
  cmake_parse_arguments(arg "" "" "FORBID" ${ARGN})
  set(stubs "${CMAKE_BINARY_DIR}/layering/${target}")
  set(wanted "")
  set(forbid_project "")
  set(forbid_system "")
  foreach(name IN LISTS arg_FORBID)
    if(EXISTS "${CMAKE_SOURCE_DIR}/${name}" AND
       IS_DIRECTORY "${CMAKE_SOURCE_DIR}/${name}")
      file(GLOB_RECURSE headers CONFIGURE_DEPENDS
        RELATIVE "${CMAKE_SOURCE_DIR}" "${CMAKE_SOURCE_DIR}/${name}/*.hpp")
      list(APPEND forbid_project "${name}")
    elseif(IS_DIRECTORY "/usr/include/${name}")
      file(GLOB_RECURSE headers RELATIVE "/usr/include"
        "/usr/include/${name}/*")
      outbox_layer_bare_names(bare "${name}" "${headers}")
      list(APPEND headers ${bare})
      list(APPEND forbid_system "${name}")
    elseif(EXISTS "/usr/include/${name}")
      set(headers "${name}")
      list(APPEND forbid_system "${name}")
    else()
      message(FATAL_ERROR "outbox_layer(${target}): nothing named ${name}")
    endif()
    foreach(header IN LISTS headers)
      list(APPEND wanted "${header}")
      set(text "#error \"layering: ${target} may not include ${header} (${name} is not below it: see ARCHITECTURE.md)\"\n")
      set(path "${stubs}/${header}")
      # Rewritten only when it changes, so a reconfigure rebuilds nothing.
      outbox_write_if_changed("${path}" "${text}")
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
  outbox_layer_remember(${target} "${forbid_project}" "${forbid_system}")
endfunction()

# Keeps one layer for outbox_layer_map(): the library's sources (the
# folders outbox_library() recorded, less its exclusions; else its source
# files) and what it may not include.
function(outbox_layer_remember target forbid_project forbid_system)
  get_target_property(folders ${target} OUTBOX_FOLDERS)
  get_target_property(excluded ${target} OUTBOX_EXCLUDE)
  set(sources "")
  if(folders)
    foreach(folder IN LISTS folders)
      list(APPEND sources "${folder}/")
    endforeach()
    foreach(file IN LISTS excluded)
      if(IS_DIRECTORY "${CMAKE_SOURCE_DIR}/${file}")
        list(APPEND sources "-${file}/")
      else()
        list(APPEND sources "-${file}")
      endif()
    endforeach()
  else()
    get_target_property(files ${target} SOURCES)
    foreach(file IN LISTS files)
      if(IS_ABSOLUTE "${file}")
        file(RELATIVE_PATH file "${CMAKE_SOURCE_DIR}" "${file}")
      endif()
      list(APPEND sources "${file}")
    endforeach()
  endif()
  list(JOIN sources " " sources)
  list(JOIN forbid_project " " forbid_project)
  list(JOIN forbid_system " " forbid_system)
  set_property(GLOBAL APPEND PROPERTY OUTBOX_LAYERS
    "${target}\t${sources}\t${forbid_project}\t${forbid_system}")
endfunction()

function(outbox_layer_map folder)
  get_property(layers GLOBAL PROPERTY OUTBOX_LAYERS)
  set(text "# What each library may not include: the FORBID lists of outbox_layer()
# in CMakeLists.txt, written by cmake/Layering.cmake at configure time.
# One library a line, in the order CMakeLists.txt declares them, tab
# separated: the library; its sources (folders end in /, a leading - marks
# what is left out); the project folders it may not include; the system
# folders and headers under /usr/include it may not include.
")
  foreach(layer IN LISTS layers)
    string(APPEND text "${layer}\n")
  endforeach()
  outbox_write_if_changed("${folder}/layers.txt" "${text}")
  outbox_layer_table(table "${folder}/layers.txt")
  outbox_write_if_changed("${folder}/layers.md" "${table}")
endfunction()
