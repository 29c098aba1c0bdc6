#include "cli/app.hpp"

int main(int argc, char** argv) {
  return outbox::cli::run_app(argc, argv);
}
