#pragma once
// The project's error hierarchy. Each kind maps to one exit code of the CLI,
// so `main` can catch `Error` and report one line.
#include <stdexcept>
#include <string>

namespace memplan {

enum class ExitCode : int {
  kOk = 0,
  kUsage = 1,
  kBadInput = 2,
  kInfeasible = 3,
  kInvalidPlan = 4,
  kOverBudget = 5,
  kInterrupted = 130,
};

class Error : public std::runtime_error {
 public:
  Error(const std::string& what, ExitCode code) : std::runtime_error(what), code_(code) {}
  ExitCode code() const { return code_; }

 private:
  ExitCode code_;
};

// The user asked for something the command does not take.
class UsageError : public Error {
 public:
  explicit UsageError(const std::string& what) : Error(what, ExitCode::kUsage) {}
};

// A model, costs or plan file that cannot be used; the message names the
// file, node, tensor or dim at fault.
class InputError : public Error {
 public:
  explicit InputError(const std::string& what) : Error(what, ExitCode::kBadInput) {}
};

// No plan reaches the requested budget.
class InfeasibleError : public Error {
 public:
  explicit InfeasibleError(const std::string& what) : Error(what, ExitCode::kInfeasible) {}
};

// A plan that breaks a rule of PLAN_FORMAT.md.
class InvalidPlanError : public Error {
 public:
  explicit InvalidPlanError(const std::string& what) : Error(what, ExitCode::kInvalidPlan) {}
};

}  // namespace memplan
