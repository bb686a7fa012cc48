#include "linv/report.hpp"

#include <cmath>
#include <nlohmann/json.hpp>

namespace linv {

std::string Report::to_json() const {
  auto number = [](double v) -> nlohmann::json { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(); };
  nlohmann::json j;
  j["operation"] = to_string(operation);
  j["method"] = to_string(method);
  if (!method_reason.empty()) j["method_reason"] = method_reason;
  j["device"] = device.name();
  j["precision"] = precision;
  j["seconds"] = seconds;
  j["iterations"] = iterations;
  if (stop != StopReason::None) j["stop_reason"] = to_string(stop);
  j["scaled_residual"] = number(scaled_residual);
  j["rcond"] = number(rcond);
  j["backward_error"] = number(backward_error);
  if (std::isfinite(growth)) j["growth"] = growth;
  if (rank >= 0) j["rank"] = rank;
  j["notes"] = notes;
  return j.dump(2);
}

}  // namespace linv
