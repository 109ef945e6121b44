# The runtime's end-to-end tests: the real server binary, emulated ranks with
# the real rank client. Included from src/runtime/server/CMakeLists.txt
# (tests/ has no CMakeLists.txt of its own yet).
if(PERSEUS_BUILD_TESTS)
  # Until src/cli/main.cc exists the tests run this stand-in with the same
  # serve/status subcommands; afterwards the real perseus binary.
  add_executable(runtime_e2e_perseus ${CMAKE_SOURCE_DIR}/tests/e2e/runtime_cli_main.cc)
  target_link_libraries(runtime_e2e_perseus PRIVATE perseus_cli_runtime)

  add_library(perseus_runtime_e2e_support STATIC
    ${CMAKE_SOURCE_DIR}/tests/e2e/runtime_server_process.cc ${CMAKE_SOURCE_DIR}/tests/e2e/runtime_emulation.cc)
  target_include_directories(perseus_runtime_e2e_support PUBLIC ${CMAKE_SOURCE_DIR})
  target_link_libraries(perseus_runtime_e2e_support PUBLIC perseus_client perseus_simulated_gpu perseus_optimizer
                        perseus_httplib nlohmann_json::nlohmann_json Threads::Threads)

  perseus_add_test(runtime_e2e_test
    SOURCES ${CMAKE_SOURCE_DIR}/tests/e2e/runtime_lifecycle_test.cc ${CMAKE_SOURCE_DIR}/tests/e2e/runtime_restart_test.cc
            ${CMAKE_SOURCE_DIR}/tests/e2e/runtime_bad_input_test.cc
    LIBS perseus_runtime_e2e_support)

  function(perseus_runtime_e2e_pick_cli)
    if(TARGET perseus)
      set(cli perseus)
    else()
      set(cli runtime_e2e_perseus)
    endif()
    target_compile_definitions(perseus_runtime_e2e_support PRIVATE PERSEUS_CLI_PATH="$<TARGET_FILE:${cli}>")
    if(TARGET runtime_e2e_test)
      add_dependencies(runtime_e2e_test ${cli})
    endif()
  endfunction()
  cmake_language(DEFER DIRECTORY ${CMAKE_SOURCE_DIR} CALL perseus_runtime_e2e_pick_cli)
endif()
