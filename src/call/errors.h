// src/call/errors.h — the user-error exception of the call layer. The Python module turns it into
// the Python exception type named by `kind` (TypeError, ValueError, RuntimeError); messages name
// the function and the parameter, and say what was expected versus given.
#pragma once

#include <stdexcept>
#include <string>

namespace sg::call {

enum class ErrorKind { Type, Value, Runtime };

class CallError : public std::runtime_error {
public:
    CallError(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind(kind) {}
    ErrorKind kind;
};

[[noreturn]] void throw_type_error(const std::string& message);
[[noreturn]] void throw_value_error(const std::string& message);

}  // namespace sg::call
