// src/syntax/ast.cpp — small helpers over the AST.
#include "syntax/ast.h"

#include <cstring>

namespace sg::lang {

const char* op_spelling(Op op) {
    switch (op) {
    case Op::None: return "";
    case Op::Neg: return "-";
    case Op::Plus: return "+";
    case Op::Not: return "!";
    case Op::BitNot: return "~";
    case Op::PreInc: case Op::Inc: return "++";
    case Op::PreDec: case Op::Dec: return "--";
    case Op::Mul: return "*";
    case Op::Div: return "/";
    case Op::Rem: return "%";
    case Op::Add: return "+";
    case Op::Sub: return "-";
    case Op::Shl: return "<<";
    case Op::Shr: return ">>";
    case Op::Lt: return "<";
    case Op::Gt: return ">";
    case Op::Le: return "<=";
    case Op::Ge: return ">=";
    case Op::Eq: return "==";
    case Op::Ne: return "!=";
    case Op::BitAnd: return "&";
    case Op::BitXor: return "^";
    case Op::BitOr: return "|";
    case Op::LogAnd: return "&&";
    case Op::LogOr: return "||";
    case Op::Assign: return "=";
    case Op::MulAssign: return "*=";
    case Op::DivAssign: return "/=";
    case Op::RemAssign: return "%=";
    case Op::AddAssign: return "+=";
    case Op::SubAssign: return "-=";
    case Op::ShlAssign: return "<<=";
    case Op::ShrAssign: return ">>=";
    case Op::AndAssign: return "&=";
    case Op::XorAssign: return "^=";
    case Op::OrAssign: return "|=";
    }
    return "?";
}

const Attribute* find_attribute(const std::vector<Attribute>& attrs, const char* name) {
    for (const auto& a : attrs)
        if (a.name == name) return &a;
    return nullptr;
}

}  // namespace sg::lang
