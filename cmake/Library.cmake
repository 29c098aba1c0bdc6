# The two ways the project makes its libraries' sources, included by
# CMakeLists.txt: every .cpp of a folder (outbox_library) and text files
# compiled in verbatim (outbox_embed_text, through cmake/EmbedText.cmake).
# Both name files from the including directory, the source root.

# outbox_library(NAME FOLDERS folder... [EXCLUDE file-or-folder...]
#                [ALONE file...]): a static library of every .cpp under the
# folders (recursively), less what EXCLUDE names, with the source root on
# its path. ALONE names sources compiled outside the unity batches (one
# with compile definitions of its own).
function(outbox_library name)
  cmake_parse_arguments(arg "" "" "FOLDERS;EXCLUDE;ALONE" ${ARGN})
  set(sources "")
  foreach(folder IN LISTS arg_FOLDERS)
    file(GLOB_RECURSE found CONFIGURE_DEPENDS "${folder}/*.cpp")
    list(APPEND sources ${found})
  endforeach()
  foreach(file IN LISTS arg_EXCLUDE arg_ALONE)
    set(path "${CMAKE_CURRENT_SOURCE_DIR}/${file}")
    if(IS_DIRECTORY "${path}")
      # A prefix match, not a regex: a checkout path may hold '+' or '.'.
      foreach(source IN LISTS sources)
        string(FIND "${source}" "${path}/" at)
        if(at EQUAL 0)
          list(REMOVE_ITEM sources "${source}")
        endif()
      endforeach()
    else()
      list(REMOVE_ITEM sources "${path}")
    endif()
  endforeach()
  if(OUTBOX_UNITY)
    outbox_unity_sources(sources ${name} ${sources})
  endif()
  list(TRANSFORM arg_ALONE PREPEND "${CMAKE_CURRENT_SOURCE_DIR}/")
  add_library(${name} STATIC ${sources} ${arg_ALONE})
  # The source root while building; nothing once installed (outbox::append
  # installs its one public header, embed/outbox/append.hpp, on its own).
  target_include_directories(${name} PUBLIC
    "$<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}>")
  # What it holds, for the layer map (cmake/Layering.cmake).
  set_target_properties(${name} PROPERTIES OUTBOX_FOLDERS "${arg_FOLDERS}"
    OUTBOX_EXCLUDE "${arg_EXCLUDE}")
endfunction()

# outbox_embed_text(TARGET NAMESPACE file... [JOINED name file...]):
# compiles each text file into TARGET verbatim, as `const char* const
# <file stem>` in NAMESPACE (cmake/EmbedText.cmake), for text that lives in
# a file of its own language (SQL, Lua) but must ship inside the binary;
# the files after JOINED name become one text, `name`, joined in the order
# given (one text the binary runs, kept in several files to read).
function(outbox_embed_text target namespace)
  cmake_parse_arguments(PARSE_ARGV 2 arg "" "" "JOINED")
  set(names "")
  foreach(file IN LISTS arg_UNPARSED_ARGUMENTS)
    get_filename_component(stem "${file}" NAME_WE)
    list(APPEND names "${stem}")
  endforeach()
  set(joined_name "")
  set(joined_files "")
  if(arg_JOINED)
    list(POP_FRONT arg_JOINED joined_name)
    set(joined_files ${arg_JOINED})
  endif()
  string(REPLACE "::" "_" tag "${namespace}")
  set(output "${CMAKE_BINARY_DIR}/generated/${tag}.cpp")
  string(REPLACE ";" "," name_list "${names}")
  string(REPLACE ";" "," file_list "${arg_UNPARSED_ARGUMENTS}")
  string(REPLACE ";" "," joined_list "${joined_files}")
  add_custom_command(OUTPUT "${output}"
    COMMAND ${CMAKE_COMMAND} "-DOUTPUT=${output}" "-DNAMESPACE=${namespace}"
      "-DNAMES=${name_list}" "-DFILES=${file_list}"
      "-DJOINED_NAME=${joined_name}" "-DJOINED_FILES=${joined_list}"
      -P "${CMAKE_CURRENT_SOURCE_DIR}/cmake/EmbedText.cmake"
    DEPENDS ${arg_UNPARSED_ARGUMENTS} ${joined_files} cmake/EmbedText.cmake
      cmake/WriteIfChanged.cmake
    COMMENT "Embedding the text files of ${namespace}")
  target_sources(${target} PRIVATE "${output}")
endfunction()
