// Helpers of the scene loader's tests (scene_test, gltf_test): a fresh folder per test, files
// written into it, and the one-line sieve::error a bad input must end in.
#pragma once

#include <sieve/compaction/error.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <iostream>
#include <string>

namespace sieve::render::testing {

// A fresh, empty folder under GoogleTest's temporary directory: `prefix`, the suite and the test.
inline std::filesystem::path fresh_dir(const std::string& prefix) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / (prefix + info->test_suite_name() + "_" + info->name());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

inline std::filesystem::path write(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
  return path;
}

// Runs `f` and expects a sieve::error of one line holding every one of `parts`; returns the message
// (SIEVE_SHOW_ERRORS=1 prints each).
inline std::string expect_error(const std::function<void()>& f, std::initializer_list<std::string> parts) {
  try {
    f();
  } catch (const sieve::error& e) {
    const std::string msg = e.what();
    if (std::getenv("SIEVE_SHOW_ERRORS")) std::cout << "  error: " << msg << "\n";
    for (const auto& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << "'" << p << "' not in: " << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << "more than one line: " << msg;
    return msg;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected sieve::error, got another exception: " << e.what();
    return "";
  }
  ADD_FAILURE() << "expected sieve::error, got none";
  return "";
}

}  // namespace sieve::render::testing
