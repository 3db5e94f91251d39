#include "common/command_line.h"

#include <exception>
#include <iostream>

namespace lockstep {

std::optional<int> ParseCommandLine(
    int argc, char** argv,
    const boost::program_options::options_description& options,
    const std::string& program, boost::program_options::variables_map* vm) {
  namespace po = boost::program_options;
  try {
    po::store(po::parse_command_line(argc, argv, options), *vm);
    po::notify(*vm);
  } catch (const std::exception& e) {
    std::cerr << program << ": " << e.what() << std::endl;
    return kExitBadFlags;
  }
  if (vm->count("help") != 0) {
    std::cout << options << std::endl;
    return 0;
  }
  return std::nullopt;
}

}  // namespace lockstep
