# One man page from a binary's --help (run by cmake -P from install.cmake).
# Subcommand pages (perseus-serve) run `perseus serve --help` through a
# one-line wrapper, since help2man calls its program with --help itself.
if(PAGE STREQUAL "perseusd")
  set(program ${PERSEUSD})
  set(summary "the perseus node daemon: sets GPU SM clocks for training processes")
elseif(PAGE STREQUAL "perseus")
  set(program ${PERSEUS})
  set(summary "energy-optimal GPU clock plans for pipeline-parallel training")
else()
  string(REPLACE "perseus-" "" sub ${PAGE})
  get_filename_component(dir ${OUT} DIRECTORY)
  set(program ${dir}/${PAGE})
  file(WRITE ${program} "#!/bin/sh\nexec '${PERSEUS}' ${sub} \"$@\"\n")
  file(CHMOD ${program} PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE)
  set(summary "perseus ${sub}")
endif()
execute_process(
  COMMAND ${HELP2MAN} --no-info --no-discard-stderr --version-string=${VERSION} --name=${summary}
          --section=1 --output=${OUT}.tmp ${program}
  RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "help2man ${PAGE}: ${err}")
endif()
file(RENAME ${OUT}.tmp ${OUT})
if(NOT PAGE STREQUAL "perseus" AND NOT PAGE STREQUAL "perseusd")
  file(REMOVE ${program})
endif()
