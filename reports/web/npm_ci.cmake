# Installs the report's chart libraries into the build-dir copy WEB_DIR with
# `npm ci` when node_modules is missing or older than the lock file.
# Usage: cmake -DWEB_DIR=... -DNPM=... -P npm_ci.cmake
set(stamp "${WEB_DIR}/node_modules/.okfbench-installed")
if(EXISTS "${stamp}" AND NOT "${WEB_DIR}/package-lock.json" IS_NEWER_THAN "${stamp}")
  return()
endif()
execute_process(COMMAND "${NPM}" ci --ignore-scripts --no-audit --no-fund
                WORKING_DIRECTORY "${WEB_DIR}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "npm ci failed in ${WEB_DIR} (exit ${rc}); the HTML report needs Vega from npm. "
                      "Install nodejs and npm (scripts/setup.sh) and check network access to the npm registry.")
endif()
file(TOUCH "${stamp}")
