// A test fixture with a fresh directory of its own under /tmp (dir_), removed after each test;
// the unit tests that write files and the integration tests that run a collector share it.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>
#include <utility>

namespace gander::unit {

class TempDirTest : public ::testing::Test {
 protected:
  // `name` goes into the directory's name (/tmp/gander-NAME-XXXXXX), to tell whose it is.
  explicit TempDirTest(std::string name) : name_(std::move(name)) {}

  // A fixture that overrides SetUp calls this first and returns on HasFatalFailure().
  void SetUp() override {
    std::string tmpl = "/tmp/gander-" + name_ + "-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  std::string dir_;

 private:
  std::string name_;
};

}  // namespace gander::unit
