# Rewrites FILE (the front end) with one write of its whole content, keeping its mode. Where the
# file system keeps a file's page cache in large folios (ext4, on the Linux 6.18 this was
# measured on), a file written in one piece is cached in 2 MB folios, and the kernel maps the
# front end's read-only data and laid-out code, each of which fills a 2 MB page of the file,
# with one 2 MB page each (front/README.md, "The code in one 2 MB page"). A copy made by cp, by
# the linker or by CMake is cached in smaller folios until the page cache drops it.
#   cmake -DFILE=<path> -P write-whole.cmake
if(NOT FILE OR NOT EXISTS "${FILE}")
  message(FATAL_ERROR "write-whole: no file '${FILE}'")
endif()
find_program(CORDON_DD dd)
if(NOT CORDON_DD)
  return()  # only slower to start
endif()
set(whole "${FILE}.whole")
execute_process(COMMAND ${CORDON_DD} "if=${FILE}" "of=${whole}" bs=64M status=none
                RESULT_VARIABLE copied)
if(NOT copied EQUAL 0)
  file(REMOVE "${whole}")
  message(FATAL_ERROR "write-whole: dd could not copy '${FILE}'")
endif()
execute_process(COMMAND chmod "--reference=${FILE}" "${whole}" RESULT_VARIABLE moded)
if(NOT moded EQUAL 0)
  file(REMOVE "${whole}")
  message(FATAL_ERROR "write-whole: cannot give '${whole}' the mode of '${FILE}'")
endif()
file(RENAME "${whole}" "${FILE}")
