#pragma once

// What the settings tests check with: the error a call throws, settings
// compared key by key, and the config file the project ships.

#include "config/settings.hpp"

#include <gtest/gtest.h>

#include <string>

// In outbox::config, beside what they check, for tests written there.
namespace outbox::config {

/// The config_error `f` throws. When it throws none, the test fails and the
/// error returned names no key.
template <class F>
config_error error_from(F f) {
  try {
    f();
  } catch (const config_error& e) {
    return e;
  }
  ADD_FAILURE() << "no config_error";
  return config_error{"", "(no error)"};
}

/// Field-by-field equality, so a key missing from to_json cannot hide.
void expect_same(const settings& a, const settings& b);

/// The config file the project ships (read at run time: see build_paths).
std::string shipped_file();

} // namespace outbox::config
