# Writes OUT (a header defining SATOR_GIT_REVISION) from the git checkout at
# SRC, at every build, touching it only when the revision changed: `sator
# --version` names the commit it was built from ("-dirty" with uncommitted
# changes; "unknown" outside a git checkout).
execute_process(COMMAND git -C "${SRC}" rev-parse --short=12 HEAD OUTPUT_VARIABLE rev OUTPUT_STRIP_TRAILING_WHITESPACE
                RESULT_VARIABLE failed ERROR_QUIET)
if(failed OR rev STREQUAL "")
  set(rev "unknown")
else()
  execute_process(COMMAND git -C "${SRC}" diff --quiet HEAD -- RESULT_VARIABLE dirty ERROR_QUIET)
  if(dirty)
    string(APPEND rev "-dirty")
  endif()
endif()
file(CONFIGURE OUTPUT "${OUT}" CONTENT "#define SATOR_GIT_REVISION \"${rev}\"\n" @ONLY)
