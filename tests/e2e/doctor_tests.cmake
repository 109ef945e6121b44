# End-to-end tests of `perseus doctor` and scripts/gpu_check.sh: the real
# perseus binary against the fake libnvidia-ml (FAKE_NVML_PATH). Included
# from src/cli/CMakeLists.txt (tests/ has no CMakeLists.txt of its own).
perseus_add_test(doctor_e2e_test SOURCES ${CMAKE_SOURCE_DIR}/tests/e2e/doctor_test.cc
                 LIBS nlohmann_json::nlohmann_json perseus_gpu)  # perseus_gpu: the fake's knob list
perseus_test_uses_cli(doctor_e2e_test)
if(TARGET doctor_e2e_test)
  target_compile_definitions(doctor_e2e_test PRIVATE FAKE_NVML_PATH="$<TARGET_FILE:fake_nvml>"
                             PERSEUSD_PATH="$<TARGET_FILE:perseusd>"
                             GPU_CHECK_SCRIPT="${CMAKE_SOURCE_DIR}/scripts/gpu_check.sh")
  add_dependencies(doctor_e2e_test fake_nvml perseusd)
endif()
