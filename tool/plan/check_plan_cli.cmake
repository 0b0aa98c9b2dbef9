# Runs CMD with ARGS (a ;-list), checks the exit code and that stdout+stderr
# match EXPECT_REGEX. Used by the smpart-plan CLI tests.
execute_process(COMMAND ${CMD} ${ARGS}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(all "${out}${err}")
if(NOT rc STREQUAL "${EXPECT_RC}")
  message(FATAL_ERROR "exit code ${rc}, expected ${EXPECT_RC}\n${all}")
endif()
if(NOT all MATCHES "${EXPECT_REGEX}")
  message(FATAL_ERROR "output does not match '${EXPECT_REGEX}':\n${all}")
endif()
if(EXPECT_RC STREQUAL "2")
  # Exactly one error line.
  string(REGEX MATCHALL "\n" lines "${err}")
  list(LENGTH lines n)
  if(NOT n EQUAL 1)
    message(FATAL_ERROR "expected one error line, got ${n}:\n${err}")
  endif()
endif()
