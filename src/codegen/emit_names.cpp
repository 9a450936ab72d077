// src/codegen/emit_names.cpp — identifiers, literals and type spellings of generated C++, and
// the definitions of user struct types in dependency order.
#include <charconv>
#include <cmath>
#include <cstdio>

#include "codegen/emitter.h"
#include "lang/half_float.h"

namespace sg::codegen::detail {

using lang::ScalarKind;
using lang::TypeKind;

namespace {

// C++20 keywords and alternative tokens, plus names the generated code uses unqualified.
const std::set<std::string>& reserved_names() {
    static const std::set<std::string> kNames = {
        "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break", "case",
        "catch", "char", "char8_t", "char16_t", "char32_t", "class", "compl", "concept", "const", "consteval",
        "constexpr", "constinit", "const_cast", "continue", "co_await", "co_return", "co_yield", "decltype",
        "default", "delete", "do", "double", "dynamic_cast", "else", "enum", "explicit", "export", "extern",
        "false", "float", "for", "friend", "goto", "if", "inline", "int", "long", "mutable", "namespace", "new",
        "noexcept", "not", "not_eq", "nullptr", "operator", "or", "or_eq", "private", "protected", "public",
        "register", "reinterpret_cast", "requires", "return", "short", "signed", "sizeof", "static",
        "static_assert", "static_cast", "struct", "switch", "template", "this", "thread_local", "throw", "true",
        "try", "typedef", "typeid", "typename", "union", "unsigned", "using", "virtual", "void", "volatile",
        "wchar_t", "while", "xor", "xor_eq", "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t",
        "uint32_t", "uint64_t", "uintptr_t", "uint", "half", "memcpy", "std", "P", "tid", "header"};
    return kNames;
}

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

}  // namespace

std::string sanitize_identifier(const std::string& name) {
    std::string out;
    for (char c : name) {
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
        out += ok ? c : '_';
    }
    bool has_lower = false;
    for (char c : out) has_lower |= c >= 'a' && c <= 'z';
    if (out.empty() || (out[0] >= '0' && out[0] <= '9') || out[0] == '_' || starts_with(out, "sg_") ||
        starts_with(out, "SG_") || !has_lower || reserved_names().count(out))
        out = "u_" + out;
    return out;
}

std::string int_literal(int64_t value, ScalarKind kind) {
    // Negative values are parenthesized so that they can follow any operator or cast.
    auto text = [](int64_t v, const char* suffix) {
        std::string s = std::to_string(v) + suffix;
        return v < 0 ? "(" + s + ")" : s;
    };
    switch (kind) {
    case ScalarKind::Bool: return value ? "true" : "false";
    case ScalarKind::Int32: {
        int32_t v = int32_t(value);
        return v == INT32_MIN ? "(-2147483647 - 1)" : text(v, "");
    }
    case ScalarKind::UInt32: return std::to_string(uint32_t(value)) + "u";
    // int64_t is `long` on LP64 targets, so a plain `5LL` would not deduce as int64_t.
    case ScalarKind::Int64:
        return value == INT64_MIN ? "(int64_t)(-9223372036854775807LL - 1)" : "(int64_t)" + text(value, "LL");
    case ScalarKind::UInt64: return "(uint64_t)" + std::to_string(uint64_t(value)) + "ull";
    case ScalarKind::Int8: return "(int8_t)" + text(int8_t(value), "");
    case ScalarKind::Int16: return "(int16_t)" + text(int16_t(value), "");
    case ScalarKind::UInt8: return "(uint8_t)" + std::to_string(uint8_t(value));
    case ScalarKind::UInt16: return "(uint16_t)" + std::to_string(uint16_t(value));
    default: SG_INTERNAL_ASSERT(false, std::string("integer literal of kind ") + lang::scalar_name(kind));
    }
    return {};
}

std::string float_literal(double value, ScalarKind kind) {
    SG_INTERNAL_ASSERT(lang::is_floating(kind), std::string("float literal of kind ") + lang::scalar_name(kind));
    if (kind == ScalarKind::Half) {
        // A half is spelled by its bits: rounded here once, as the language rounds the literal.
        char buf[16];
        std::snprintf(buf, sizeof buf, "0x%04x", unsigned(lang::half_bits_from_double(value)));
        return std::string("half::from_bits(") + buf + ")";
    }
    const bool is_float = kind == ScalarKind::Float;
    if (std::isnan(value)) return is_float ? "SG_NAN_F" : "SG_NAN";
    if (std::isinf(value)) {
        const char* inf = is_float ? "SG_INF_F" : "SG_INF";
        return value < 0 ? std::string("(-") + inf + ")" : inf;
    }
    // Shortest text that reads back as the same float / double (std::to_chars guarantees it).
    char buf[64];
    auto res = is_float ? std::to_chars(buf, buf + sizeof buf, float(value)) : std::to_chars(buf, buf + sizeof buf, value);
    std::string text(buf, res.ptr);
    if (text.find_first_of(".e") == std::string::npos) text += ".0";
    if (is_float) text += "f";
    return text[0] == '-' ? "(" + text + ")" : text;
}

std::string TypeNames::name(const Type* t) {
    switch (t->kind) {
    case TypeKind::Void: return "void";
    case TypeKind::Scalar:
        return lang::scalar_name(t->scalar);  // prelude typedefs: int8_t, uint, int64_t, ...
    case TypeKind::Vector:
    case TypeKind::Matrix: {
        const ScalarKind k = t->scalar;
        const bool short_name = k == ScalarKind::Bool || k == ScalarKind::Int32 || k == ScalarKind::UInt32 ||
                                k == ScalarKind::Float || k == ScalarKind::Double;
        const std::string s = lang::scalar_name(k);
        if (t->is_vector())
            return short_name ? "sg_" + s + std::to_string(t->rows) : "sg_vec<" + s + ", " + std::to_string(t->rows) + ">";
        return short_name ? "sg_" + s + std::to_string(t->rows) + "x" + std::to_string(t->cols)
                          : "sg_mat<" + s + ", " + std::to_string(t->rows) + ", " + std::to_string(t->cols) + ">";
    }
    case TypeKind::Array: return "sg_array<" + name(t->element) + ", " + std::to_string(t->count) + ">";
    case TypeKind::Struct: return register_struct(t).name;
    case TypeKind::DiffPair: {
        const Type* d = types_.differential(t->element);
        SG_INTERNAL_ASSERT(d != nullptr, "DifferentialPair of a non-differentiable type");
        return "sg_pair<" + name(t->element) + ", " + name(d) + ">";
    }
    case TypeKind::Tensor:
        SG_INTERNAL_ASSERT(!t->tensor.interface, "codegen of an unspecialized tensor interface " + lang::type_name(t));
        if (t->tensor.view) return (t->tensor.has_grad ? "sg_diff_view<" : "sg_view<") + name(t->element) + ">";
        SG_INTERNAL_ASSERT(!t->tensor.shared, "codegen: a groupshared variable's storage has no value type");
        return std::string(t->tensor.has_grad ? "sg_diff_tensor<" : "sg_tensor<") + name(t->element) + ", " +
               std::to_string(t->rank) + ">";
    default: SG_INTERNAL_ASSERT(false, "no C++ spelling for type " + lang::type_name(t));
    }
    return {};
}

std::string TypeNames::reserve_name(const std::string& base) {
    const std::string clean = sanitize_identifier(base);
    std::string name = clean;
    for (int n = 2; used_names_.count(name); ++n) name = clean + "_" + std::to_string(n);
    used_names_.insert(name);
    return name;
}

const std::vector<std::string>& TypeNames::field_names(const Type* t) { return register_struct(t).fields; }

const TypeNames::StructInfo& TypeNames::register_struct(const Type* t) {
    auto it = structs_.find(t);
    if (it != structs_.end()) return it->second;
    // Name the fields' types first: that registers the structs they contain, so those come
    // earlier in order_ (a struct is complete before it is used by value).
    const auto& fields = types_.fields(t);
    std::vector<std::string> field_types;
    for (const auto& f : fields) field_types.push_back(name(f.type));

    StructInfo info;
    info.name = reserve_name(t->decl ? lang::type_name(t) : "Struct");

    std::set<std::string> taken;
    std::string def = "struct " + info.name + " {  // " + lang::type_name(t) + "\n";
    for (size_t k = 0; k < fields.size(); ++k) {
        std::string field = sanitize_identifier(fields[k].name);
        std::string unique = field;
        for (int n = 2; taken.count(unique); ++n) unique = field + "_" + std::to_string(n);
        taken.insert(unique);
        info.fields.push_back(unique);
        def += "    " + field_types[k] + " " + unique + ";" + (fields[k].no_diff ? "  // no_diff" : "") + "\n";
    }
    def += "};\n";
    // As a tensor or buffer element, a struct is flattened to its scalar components
    // (prelude_tensor: sg_flat); component offsets of the fields, in scalars.
    lang::ScalarKind unit = lang::ScalarKind::Float;
    lang::flat_components(types_, t, &unit);
    std::string loads, stores, adds;
    std::string at = "0";
    for (size_t k = 0; k < fields.size(); ++k) {
        // A column_major matrix field (or array of them) is stored column by column, as Slang does.
        const std::string f = std::string(fields[k].column_major ? "sg_flat_cm" : "sg_flat") + "<decltype(sg_user::" +
                              info.name + "::" + info.fields[k] + ")>";
        const std::string o = "(I)(off + (I)(" + at + ") * s)";
        loads += "        v." + info.fields[k] + " = " + f + "::load(data, " + o + ", s);\n";
        stores += "        " + f + "::store(data, " + o + ", s, v." + info.fields[k] + ");\n";
        adds += "        " + f + "::add(data, " + o + ", s, v." + info.fields[k] + ");\n";
        at += " + " + f + "::count";
    }
    // The prelude's templates are specialized in their (global) namespace; the struct is in sg_user.
    const std::string q = "sg_user::" + info.name;
    def += "}  // namespace sg_user\n";
    def += "template <> struct sg_stride_unit<" + q + "> { typedef " + lang::scalar_name(unit) + " type; };\n";
    def += "template <> struct sg_flat<" + q + "> {\n    static constexpr int count = " + at + ";\n";
    def += "    template <class I> static SG_MFN " + q + " load(const void* data, I off, I s) {\n        " + q +
           " v;\n" + loads + "        return v;\n    }\n";
    def += "    template <class I> static SG_MFN void store(void* data, I off, I s, const " + q + "& v) {\n" + stores +
           "    }\n";
    def += "    template <class I> static SG_MFN void add(void* data, I off, I s, const " + q + "& v) {\n" +
           adds + "    }\n};\n";
    def += "template <> struct sg_element<" + q + "> : sg_flat_element<" + q + "> {};\nnamespace sg_user {\n";
    info.definition = std::move(def);
    order_.push_back(t);
    return structs_.emplace(t, std::move(info)).first->second;
}

std::string TypeNames::struct_definitions() const {
    std::string out;
    for (const Type* t : order_) out += structs_.at(t).definition + "\n";
    return out;
}

}  // namespace sg::codegen::detail
