#include "linv/report.hpp"

#include <cmath>
#include <nlohmann/json.hpp>

namespace linv {

std::string SolveReport::to_json() const {
  auto number = [](double v) -> nlohmann::json { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(); };
  nlohmann::json j;
  j["operation"] = operation;
  j["method"] = method;
  if (!method_reason.empty()) j["method_reason"] = method_reason;
  j["device"] = device;
  j["precision"] = precision;
  j["seconds"] = seconds;
  j["iterations"] = iterations;
  if (!stop_reason.empty()) j["stop_reason"] = stop_reason;
  j["scaled_residual"] = number(scaled_residual);
  j["rcond"] = number(rcond);
  j["backward_error"] = number(backward_error);
  if (rank >= 0) j["rank"] = rank;
  j["notes"] = notes;
  return j.dump(2);
}

}  // namespace linv
