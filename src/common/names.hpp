// The parse_ functions of linv's enums, made from their to_string: each name is written once, in a switch
// the compiler checks for every value (-Wswitch), and the list an unknown name's error gives is made from
// the values the parser accepts, so the two cannot drift.
#pragma once

#include <fmt/format.h>

#include <initializer_list>
#include <span>
#include <string>
#include <string_view>

#include "linv/errors.hpp"

namespace linv {

// "a, b or c": the names of `values`.
template <class E>
std::string list_names(std::span<const E> values) {
  std::string out;
  std::size_t k = 0;
  for (E value : values) {
    if (k > 0) out += k + 1 == values.size() ? " or " : ", ";
    out += to_string(value);
    ++k;
  }
  return out;
}

// The value among `values` whose to_string is `name`; else InvalidArgument "unknown <what> '<name>':
// expected a, b or c".
template <class E>
E parse_name(std::string_view name, std::string_view what, std::span<const E> values) {
  for (E value : values)
    if (to_string(value) == name) return value;
  throw InvalidArgument(fmt::format("unknown {} '{}': expected {}", what, name, list_names(values)));
}
template <class E>
E parse_name(std::string_view name, std::string_view what, std::initializer_list<E> values) {
  return parse_name(name, what, std::span<const E>(values.begin(), values.size()));
}

}  // namespace linv
