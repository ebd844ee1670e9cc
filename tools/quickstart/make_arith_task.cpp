// make_arith_task: writes the quickstart's task directory (see arith_task.hpp and --help).
#include <iostream>

#include "arith_task.hpp"
#include "vime/error.hpp"

int main(int argc, char** argv) {
  try {
    bool help = false;
    auto options = vime::quickstart::parse_arith_task_flags(
        std::vector<std::string>(argv + 1, argv + argc), help);
    if (help) {
      std::cout << vime::quickstart::kArithTaskUsage;
      return 0;
    }
    auto files = vime::quickstart::write_arith_task(options);
    std::cout << "wrote " << files.size() << " files under " << options.out.string() << " ("
              << options.problems.num_train << " train, " << options.problems.num_test
              << " test problems)\n";
    return 0;
  } catch (const vime::UsageError& e) {
    std::cerr << "make_arith_task: error: " << e.what() << "\n"
              << vime::quickstart::kArithTaskUsage;
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "make_arith_task: error: " << e.what() << "\n";
    return 1;
  }
}
