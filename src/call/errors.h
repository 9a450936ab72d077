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

/// A vector value (sg.float3) given to a scalar parameter of its component type: SlangPy reads
/// it as that many scalars, one call dimension. The binder cannot give a value a call dimension,
/// so it says which argument node it was (`arg`); the Python layer calls again with the value's
/// components as a tensor. Elsewhere it is the TypeError its message states.
class ValueOverScalar : public CallError {
public:
    ValueOverScalar(int arg, const std::string& message) : CallError(ErrorKind::Type, message), arg(arg) {}
    int arg;
};

[[noreturn]] void throw_type_error(const std::string& message);
[[noreturn]] void throw_value_error(const std::string& message);

/// `word` with its indefinite article, as messages spell type names: "an int64", "an int2",
/// "a float32", "a uint8" (a 'u' type name is read "you-int").
inline std::string with_article(const std::string& word) {
    const bool vowel = !word.empty() && (word[0] == 'a' || word[0] == 'e' || word[0] == 'i' || word[0] == 'o');
    return (vowel ? "an " : "a ") + word;
}

}  // namespace sg::call
