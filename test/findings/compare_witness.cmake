# The witness a finding's validator runs (kacct findings --witness ID) is the file the docs and
# the CLI tests use, byte for byte.  -DEXE=kacct -DID=fix-id -DFILE=path
cmake_minimum_required(VERSION 3.25)
execute_process(COMMAND ${EXE} findings --witness ${ID} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
                TIMEOUT 60)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "kacct findings --witness ${ID}: exit ${rc}\n${err}")
endif()
file(READ ${FILE} want)
if(NOT out STREQUAL want)
  message(FATAL_ERROR "the witness of ${ID} differs from ${FILE}:\n--- kacct\n${out}--- file\n${want}")
endif()
