# The runtime's end-to-end tests: the real perseus binary as the server,
# emulated ranks with the real rank client. Included from
# src/runtime/server/CMakeLists.txt (tests/ has no CMakeLists.txt of its own).
if(PERSEUS_BUILD_TESTS)
  add_library(perseus_runtime_e2e_support STATIC
    ${CMAKE_SOURCE_DIR}/tests/e2e/runtime_server_process.cc ${CMAKE_SOURCE_DIR}/tests/e2e/runtime_emulation.cc)
  perseus_component_headers(perseus_runtime_e2e_support tests .)
  target_link_libraries(perseus_runtime_e2e_support PUBLIC perseus_client perseus_simulated_gpu perseus_optimizer
                        perseus_httplib nlohmann_json::nlohmann_json Threads::Threads)
  target_compile_definitions(perseus_runtime_e2e_support PRIVATE PERSEUS_CLI_PATH="$<TARGET_FILE:perseus>")
  add_dependencies(perseus_runtime_e2e_support perseus)

  perseus_add_test(runtime_e2e_test
    SOURCES ${CMAKE_SOURCE_DIR}/tests/e2e/runtime_bad_input_test.cc ${CMAKE_SOURCE_DIR}/tests/e2e/runtime_fault_test.cc
    LIBS perseus_runtime_e2e_support SQLite::SQLite3)
  # 64 emulated ranks through a whole job, and a server killed and restarted under a running
  # job: they run alone. Beside other tests on a 2-core machine they took 3 to 7 times as long
  # (193 s against 29 s), long enough that a straggler's detection once missed its deadline.
  perseus_add_test(runtime_alone_e2e_test
    SOURCES ${CMAKE_SOURCE_DIR}/tests/e2e/runtime_lifecycle_test.cc ${CMAKE_SOURCE_DIR}/tests/e2e/runtime_restart_test.cc
    LIBS perseus_runtime_e2e_support SQLite::SQLite3
    PROPERTIES RUN_SERIAL TRUE)

  # The dashboard in headless Chromium (optional: skipped without it unless $CI is set).
  find_package(PNG REQUIRED)
  perseus_add_test(dashboard_e2e_test
    SOURCES ${CMAKE_SOURCE_DIR}/tests/e2e/dashboard_test.cc
    LIBS perseus_runtime_e2e_support PNG::PNG)
endif()
