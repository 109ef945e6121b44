# Unit tests of the optimizer's public API (profiles, schedules, the problem
# DAG and evaluator, frontier writers) and the end-to-end test of
# `perseus optimize`. Included from src/optimizer/CMakeLists.txt.
perseus_add_test(profile_test SOURCES profile_test.cc LIBS perseus_optimizer)
perseus_add_test(schedule_test SOURCES schedule_test.cc LIBS perseus_optimizer)
perseus_add_test(problem_test SOURCES problem_test.cc LIBS perseus_optimizer)
perseus_add_test(frontier_io_test SOURCES frontier_io_test.cc LIBS perseus_optimizer nlohmann_json::nlohmann_json)

perseus_add_test(optimize_cli_test SOURCES ${CMAKE_SOURCE_DIR}/tests/e2e/optimize_cli_test.cc
                 LIBS perseus_optimizer nlohmann_json::nlohmann_json)
perseus_test_uses_cli(optimize_cli_test)
