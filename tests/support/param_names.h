// Test support: gtest parameter names from policy specs ("ssp:2" ->
// "ssp_2"), for INSTANTIATE_TEST_SUITE_P.
#ifndef LOCKSTEP_TESTS_SUPPORT_PARAM_NAMES_H_
#define LOCKSTEP_TESTS_SUPPORT_PARAM_NAMES_H_

#include <cctype>
#include <string>

namespace lockstep {

struct PolicyParamName {
  template <typename Info>
  std::string operator()(const Info& info) const {
    std::string name = info.param;
    for (char& c : name) {
      if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    }
    return name;
  }
};

}  // namespace lockstep

#endif  // LOCKSTEP_TESTS_SUPPORT_PARAM_NAMES_H_
