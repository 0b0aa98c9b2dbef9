# Runs CMD with ARGS (a ;-list), checks the exit code and that the output
# matches EXPECT_REGEX: stdout and stderr together with EXPECT_STREAM=any,
# else only that stream, the other being empty. Exit code 1 (a failed job)
# must print one "<tool>: error: " line; exit code 2 (bad usage) that line
# and "<tool>: see '<tool> --help'". See smpart_cli_test() in CMakeLists.
execute_process(COMMAND ${CMD} ${ARGS}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(all "${out}${err}")
if(NOT rc STREQUAL "${EXPECT_RC}")
  message(FATAL_ERROR "exit code ${rc}, expected ${EXPECT_RC}\n${all}")
endif()
if(EXPECT_STREAM STREQUAL "stdout")
  set(all "${out}")
  set(other "${err}")
elseif(EXPECT_STREAM STREQUAL "stderr")
  set(all "${err}")
  set(other "${out}")
endif()
if(EXPECT_STREAM MATCHES "^std" AND NOT other STREQUAL "")
  message(FATAL_ERROR "expected nothing besides ${EXPECT_STREAM}, got:\n${other}")
endif()
if(NOT all MATCHES "${EXPECT_REGEX}")
  message(FATAL_ERROR "output does not match '${EXPECT_REGEX}':\n${all}")
endif()
get_filename_component(tool "${CMD}" NAME)
string(REGEX MATCHALL "\n" lines "${err}")
list(LENGTH lines n)
if(EXPECT_RC STREQUAL "1")
  # A failed job: exactly one error line.
  if(NOT n EQUAL 1 OR NOT err MATCHES "^${tool}: error: ")
    message(FATAL_ERROR "expected one line '${tool}: error: ...', got:\n${err}")
  endif()
elseif(EXPECT_RC STREQUAL "2")
  # Bad usage: the problem, then where to look.
  if(NOT err MATCHES "^${tool}: error: [^\n]+\n${tool}: see '${tool} --help'\n$")
    message(FATAL_ERROR "expected '${tool}: error: ...' and "
      "'${tool}: see '${tool} --help'', got:\n${err}")
  endif()
endif()
