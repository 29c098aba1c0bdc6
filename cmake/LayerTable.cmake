# ARCHITECTURE.md's layer tables, made from the map outbox_layer_map()
# writes (layers.txt, see cmake/Layering.cmake), so that what the document
# says a library may include is what the build enforces.
#
# Included by Layering.cmake, it defines outbox_layer_table(). Run as a
# script it puts a generated table into the document, between the lines
# <!-- layers:begin --> and <!-- layers:end -->:
#
#   cmake -DTABLE=build/layering/layers.md -DDOC=ARCHITECTURE.md
#         -P cmake/LayerTable.cmake
#
# which the target architecture_layers runs (CMakeLists.txt).
# tests/architecture/layer_table_test.cpp fails while the two differ.

include("${CMAKE_CURRENT_LIST_DIR}/WriteIfChanged.cmake")

# Whether NAME is FORBIDDEN or inside it (storage/sqlite inside storage).
function(outbox_layer_covered out name forbidden)
  set(covered FALSE)
  foreach(wall IN LISTS forbidden)
    string(FIND "${name}/" "${wall}/" at)
    if(at EQUAL 0)
      set(covered TRUE)
    endif()
  endforeach()
  set(${out} ${covered} PARENT_SCOPE)
endfunction()

# Sets OUT to the Markdown of the layer tables for the map in LAYERS_FILE.
function(outbox_layer_table out layers_file)
  file(STRINGS "${layers_file}" lines REGEX "^[^#]")
  set(libraries "")
  set(project_names "")
  set(system_names "")
  foreach(line IN LISTS lines)
    string(REPLACE "\t" ";" fields "${line}")
    list(GET fields 0 library)
    list(GET fields 1 sources)
    list(GET fields 2 forbid_project)
    list(GET fields 3 forbid_system)
    list(APPEND libraries ${library})
    separate_arguments(sources_${library} UNIX_COMMAND "${sources}")
    separate_arguments(project_${library} UNIX_COMMAND "${forbid_project}")
    separate_arguments(system_${library} UNIX_COMMAND "${forbid_system}")
    # A library's own folders are the project names every other may or may
    # not include.
    set(own_${library} "")
    foreach(source IN LISTS sources_${library})
      if(source MATCHES "^[^-].*/$")
        string(REGEX REPLACE "/$" "" folder "${source}")
        list(APPEND own_${library} "${folder}")
        list(APPEND project_names "${folder}")
      endif()
    endforeach()
  endforeach()
  foreach(library IN LISTS libraries)
    list(APPEND project_names ${project_${library}})
    list(APPEND system_names ${system_${library}})
  endforeach()
  list(REMOVE_DUPLICATES project_names)
  list(REMOVE_DUPLICATES system_names)

  list(JOIN system_names ", " system_list)
  set(text "<!-- Generated from the FORBID lists of outbox_layer() in CMakeLists.txt;
     regenerate with: cmake --build build --target architecture_layers -->

Every library, in the order CMakeLists.txt declares them, with the project
folders and the system headers it may include and those it may not. The
system headers, folders or files under /usr/include, are
${system_list}.
A header neither list names is not walled.

| library | sources | may include | may not include |
|---|---|---|---|
")
  foreach(library IN LISTS libraries)
    # Sources: the folders, then what is left out of them.
    set(kept "")
    set(left_out "")
    foreach(source IN LISTS sources_${library})
      if(source MATCHES "^-(.*)")
        list(APPEND left_out "${CMAKE_MATCH_1}")
      else()
        list(APPEND kept "${source}")
      endif()
    endforeach()
    list(JOIN kept ", " sources)
    if(left_out)
      list(JOIN left_out ", " left_out)
      string(APPEND sources " but ${left_out}")
    endif()
    set(may "")
    foreach(name IN LISTS project_names)
      outbox_layer_covered(covered "${name}" "${project_${library}}")
      if(NOT covered AND NOT name IN_LIST own_${library})
        list(APPEND may "${name}")
      endif()
    endforeach()
    foreach(name IN LISTS system_names)
      if(NOT name IN_LIST system_${library})
        list(APPEND may "${name}")
        list(APPEND users_${name} "`${library}`")
      endif()
    endforeach()
    set(may_not ${project_${library}} ${system_${library}})
    if(NOT may)
      set(may "none")
    endif()
    list(JOIN may ", " may)
    list(JOIN may_not ", " may_not)
    string(APPEND text "| `${library}` | ${sources} | ${may} | ${may_not} |\n")
  endforeach()

  string(APPEND text "
The system headers, by the libraries that may include them:

| system headers | libraries |
|---|---|
")
  foreach(name IN LISTS system_names)
    list(JOIN users_${name} ", " users)
    string(APPEND text "| ${name} | ${users} |\n")
  endforeach()
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

# As a script: TABLE's text replaces what stands between DOC's markers.
if(CMAKE_SCRIPT_MODE_FILE STREQUAL CMAKE_CURRENT_LIST_FILE)
  file(READ "${TABLE}" table)
  file(READ "${DOC}" doc)
  set(begin "<!-- layers:begin -->\n")
  set(end "<!-- layers:end -->\n")
  string(FIND "${doc}" "${begin}" from)
  string(FIND "${doc}" "${end}" to)
  if(from EQUAL -1 OR to EQUAL -1 OR to LESS from)
    message(FATAL_ERROR "${DOC} has no lines ${begin} and ${end} in this order")
  endif()
  string(LENGTH "${begin}" length)
  math(EXPR after_begin "${from} + ${length}")
  string(SUBSTRING "${doc}" 0 ${after_begin} head)
  string(SUBSTRING "${doc}" ${to} -1 tail)
  outbox_write_if_changed("${DOC}" "${head}${table}${tail}")
  message(STATUS "${DOC}: layer tables from ${TABLE}")
endif()
