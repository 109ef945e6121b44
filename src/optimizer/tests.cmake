# Unit tests of the optimizer's public API (profiles, schedules, the problem
# DAG and evaluator, frontier writers) and the end-to-end test of
# `perseus optimize`. Included from src/optimizer/CMakeLists.txt.
perseus_add_test(profile_test SOURCES profile_test.cc LIBS perseus_optimizer)
perseus_add_test(schedule_test SOURCES schedule_test.cc LIBS perseus_optimizer)
perseus_add_test(problem_test SOURCES problem_test.cc LIBS perseus_optimizer)
perseus_add_test(frontier_io_test SOURCES frontier_io_test.cc LIBS perseus_optimizer nlohmann_json::nlohmann_json)

# The CLI target `perseus` is defined later (src/cli); generator expressions
# and add_dependencies both resolve at generate time, so naming it here works.
perseus_add_test(optimize_cli_test SOURCES ${CMAKE_SOURCE_DIR}/tests/e2e/optimize_cli_test.cc
                 LIBS nlohmann_json::nlohmann_json)
if(TARGET optimize_cli_test)
  target_compile_definitions(optimize_cli_test PRIVATE PERSEUS_CLI="$<TARGET_FILE:perseus>")
  add_dependencies(optimize_cli_test perseus)
endif()
