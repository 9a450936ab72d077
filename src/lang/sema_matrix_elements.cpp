// src/lang/sema_matrix_elements.cpp — a matrix element by name, as in HLSL and Slang: `m._12`
// (row 1, column 2, counted from 1) and `m._m01` (row 0, column 1, counted from 0). The member
// becomes `m[r][c]`, which reads and assigns like any element. Several elements in one name
// (`m._11_22`, a vector) are reported as not supported yet.
#include <cctype>

#include "lang/sema_internal.h"

namespace sg::lang {

namespace {

/// The (row, column) groups of `name`: `_RC` (from 1) or `_mRC` (from 0); false when `name`
/// is not of that form at all.
bool parse_element_name(const std::string& name, std::vector<std::pair<int, int>>& out) {
    size_t k = 0;
    while (k < name.size()) {
        if (name[k] != '_') return false;
        bool zero_based = k + 1 < name.size() && name[k + 1] == 'm';
        size_t d = k + (zero_based ? 2 : 1);
        if (d + 2 > name.size()) return false;
        if (!std::isdigit(static_cast<unsigned char>(name[d])) || !std::isdigit(static_cast<unsigned char>(name[d + 1])))
            return false;
        int base = zero_based ? 0 : 1;
        out.push_back({name[d] - '0' - base, name[d + 1] - '0' - base});
        k = d + 2;
    }
    return !out.empty();
}

}  // namespace

const Type* Sema::check_matrix_element(Expr* e, const Type* matrix) {
    std::vector<std::pair<int, int>> elements;
    if (!parse_element_name(e->name, elements)) return nullptr;
    for (auto [r, c] : elements)
        if (r < 0 || c < 0 || r >= matrix->rows || c >= matrix->cols) {
            diags_.error(e->loc, "matrix element '" + e->name + "' is out of range for " + type_name(matrix), 30027);
            return types_.error_type();
        }
    if (elements.size() != 1) {
        diags_.unsupported(e->loc, "several matrix elements in one name ('" + e->name + "')");
        return types_.error_type();
    }
    auto literal = [&](int v) {
        auto* lit = ast_.make<Expr>();
        lit->kind = ExprKind::IntLit;
        lit->loc = e->loc;
        lit->int_value = uint64_t(v);
        lit->type = types_.int32();
        return lit;
    };
    Expr* base = e->operands[0];
    auto* row = ast_.make<Expr>();
    row->kind = ExprKind::Index;
    row->loc = e->loc;
    row->operands = {base, literal(elements[0].first)};
    row->type = types_.vector(matrix->scalar, matrix->cols);
    row->is_lvalue = base->is_lvalue;
    e->kind = ExprKind::Index;
    e->operands = {row, literal(elements[0].second)};
    e->is_lvalue = base->is_lvalue;
    return types_.scalar_of(matrix);
}

}  // namespace sg::lang
