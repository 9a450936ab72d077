// tests/cpp/test_parser.cpp — the parser on valid tier-1 input: each construct gives the
// expected AST (checked through print_ast or node fields), precedence, literals, locations,
// and the conformance kernels. Errors, recovery and limits are in test_parser_errors.cpp.
#include <filesystem>
#include <fstream>
#include <sstream>

#include "parser_test_util.h"

namespace sg::lang::test {
namespace {

// ---------------------------------------------------------------- declarations

TEST(Parser, ConformanceKernelsParseWithoutErrors) {
    int count = 0;
    for (const auto& entry : std::filesystem::directory_iterator(conformance_dir())) {
        if (entry.path().extension() != ".slang") continue;
        std::ifstream in(entry.path(), std::ios::binary);
        std::stringstream text;
        text << in.rdbuf();
        Parsed p(text.str(), entry.path().filename().string());
        EXPECT_FALSE(p.diags.has_errors()) << entry.path() << "\n" << p.errors();
        EXPECT_NE(p.function(), nullptr) << entry.path();
        ++count;
    }
    EXPECT_GE(count, 12);
}

TEST(Parser, PrintsAWholeModule) {
    Parsed p(R"(import slangpy;
struct Particle : IDifferentiable { float3 pos; no_diff float mass; };
static const float K[2] = {1, 2.5f};
[Differentiable]
float horner(float x, inout float acc, int n)
{
    float s = 0.0;
    [MaxIters(16)]
    for (int i = 0; i < n; i++)
        s = s * x + float(i + 1);
    return s;
}
)");
    ASSERT_FALSE(p.diags.has_errors()) << p.errors();
    EXPECT_EQ(p.ast(), R"((module m.slang
  (import slangpy)
  (struct Particle : IDifferentiable
    (field pos float3)
    (field mass float no_diff))
  (global K float[2] static const = {1 2.5f})
  (function horner -> float [Differentiable]
    (param x float)
    (param acc float inout)
    (param n int)
    (block
      (decl (var s float = 0.0))
      (for [MaxIters(16)] (decl (var i int = 0)) (< i n) (post++ i)
        (expr (= s (+ (* s x) (call float (+ i 1))))))
      (return s))))
)");
}

TEST(Parser, ImportForms) {
    Parsed p("import slangpy;\nimport \"slangpy\";\nimport a.b;");
    ASSERT_FALSE(p.diags.has_errors()) << p.errors();
    ASSERT_EQ(p.module->decls.size(), 3u);
    for (const Decl* d : p.module->decls) EXPECT_EQ(d->kind, DeclKind::Import);
    EXPECT_EQ(p.module->decls[0]->import_name, "slangpy");
    EXPECT_EQ(p.module->decls[1]->import_name, "slangpy");
    EXPECT_EQ(p.module->decls[2]->import_name, "a.b");
}

TEST(Parser, StructFieldsBasesAndOptionalSemicolon) {
    Parsed p("struct P : IDifferentiable, IFoo { float3 pos; no_diff float mass; float w[4], "
             "v; }\nstruct Q { int a; };");
    ASSERT_FALSE(p.diags.has_errors()) << p.errors();
    ASSERT_EQ(p.module->decls.size(), 2u);
    const StructDecl* s = p.module->decls[0]->structure;
    EXPECT_EQ(s->name, "P");
    EXPECT_EQ(s->bases, (std::vector<std::string>{"IDifferentiable", "IFoo"}));
    ASSERT_EQ(s->fields.size(), 4u);
    EXPECT_TRUE(s->fields[1]->is_no_diff);
    EXPECT_FALSE(s->fields[0]->is_no_diff);
    EXPECT_EQ(print_type(*s->fields[2]->type_expr), "float[4]");
    EXPECT_EQ(print_type(*s->fields[3]->type_expr), "float");  // dims belong to w only
    EXPECT_EQ(p.module->decls[1]->structure->fields.size(), 1u);
}

TEST(Parser, FunctionAttributesStackedAndCommaSeparated) {
    Parsed p("[Differentiable, ForwardDerivative(f_fwd)][BackwardDerivative(myexp_bwd)]\n"
             "[BackwardDifferentiable] float f(float x);");
    ASSERT_FALSE(p.diags.has_errors()) << p.errors();
    const FunctionDecl* fn = p.function();
    ASSERT_EQ(fn->attrs.size(), 4u);
    EXPECT_EQ(fn->attrs[0].name, "Differentiable");
    EXPECT_EQ(fn->attrs[1].name, "ForwardDerivative");
    ASSERT_EQ(fn->attrs[1].args.size(), 1u);
    EXPECT_EQ(fn->attrs[1].args[0]->kind, ExprKind::Name);
    EXPECT_EQ(fn->attrs[1].args[0]->name, "f_fwd");
    EXPECT_EQ(fn->attrs[2].name, "BackwardDerivative");
    EXPECT_EQ(fn->attrs[2].args[0]->name, "myexp_bwd");
    EXPECT_EQ(fn->attrs[3].name, "BackwardDifferentiable");
    EXPECT_NE(find_attribute(fn->attrs, "BackwardDerivative"), nullptr);
    EXPECT_EQ(fn->body, nullptr);  // declaration without body
}

TEST(Parser, ReturnNoDiffAndParameterModifiersInAnyOrder) {
    Parsed p("no_diff float f(inout no_diff float a, no_diff out float b, const in float c,\n"
             "                in out float d, out float e, float g) { return a; }");
    ASSERT_FALSE(p.diags.has_errors()) << p.errors();
    const FunctionDecl* fn = p.function();
    EXPECT_TRUE(fn->return_no_diff);
    ASSERT_EQ(fn->params.size(), 6u);
    const auto& ps = fn->params;
    EXPECT_EQ(ps[0]->dir, ParamDir::InOut);
    EXPECT_TRUE(ps[0]->is_no_diff);
    EXPECT_EQ(ps[1]->dir, ParamDir::Out);
    EXPECT_TRUE(ps[1]->is_no_diff);
    EXPECT_EQ(ps[2]->dir, ParamDir::In);
    EXPECT_TRUE(ps[2]->is_const);
    EXPECT_EQ(ps[3]->dir, ParamDir::InOut);  // `in out` is `inout`
    EXPECT_EQ(ps[4]->dir, ParamDir::Out);
    EXPECT_EQ(ps[5]->dir, ParamDir::In);
    for (const VarDecl* v : ps) EXPECT_TRUE(v->is_param);
    EXPECT_FALSE(ps[5]->is_no_diff || ps[5]->is_const);
}

TEST(Parser, ArrayDimensionsInBothSpellings) {
    // C-style dims after the name are the outer ones: they come first in array_dims.
    Parsed p("void f(float a[5], float b[5][3], float[5][3] c, float[2] d[3]) {}");
    ASSERT_FALSE(p.diags.has_errors()) << p.errors();
    const auto& ps = p.function()->params;
    EXPECT_EQ(print_type(*ps[0]->type_expr), "float[5]");
    // Printed in Slang's type syntax: `float b[5][3]` is float[3][5], five arrays of three.
    EXPECT_EQ(print_type(*ps[1]->type_expr), "float[3][5]");
    EXPECT_EQ(print_type(*ps[2]->type_expr), "float[5][3]");
    EXPECT_EQ(print_type(*ps[3]->type_expr), "float[2][3]");
    EXPECT_EQ(ps[1]->type_expr->array_dims[0]->int_value, 5u);
    EXPECT_EQ(ps[2]->type_expr->array_dims[0]->int_value, 3u);  // (float[5])[3]: three of float[5]
    EXPECT_EQ(ps[3]->type_expr->array_dims[0]->int_value, 3u);
}

TEST(Parser, VoidParameterListAndBodylessDeclaration) {
    Parsed p("float f(void);\nfloat g() { return f(); }");
    ASSERT_FALSE(p.diags.has_errors()) << p.errors();
    EXPECT_TRUE(p.function(0)->params.empty());
    EXPECT_EQ(p.function(0)->body, nullptr);
    EXPECT_NE(p.function(1)->body, nullptr);
}

TEST(Parser, GlobalStaticConstants) {
    Parsed p("static const float K[2] = {1, 2};\nstatic const int N = 4, M = N * 2;\n"
             "const static no_diff float Z = 0;");
    ASSERT_FALSE(p.diags.has_errors()) << p.errors();
    ASSERT_EQ(p.module->decls.size(), 3u);
    const Decl* k = p.module->decls[0];
    EXPECT_EQ(k->kind, DeclKind::GlobalVar);
    ASSERT_EQ(k->globals.size(), 1u);
    EXPECT_TRUE(k->globals[0]->is_global && k->globals[0]->is_static && k->globals[0]->is_const);
    EXPECT_EQ(print_type(*k->globals[0]->type_expr), "float[2]");
    EXPECT_EQ(print_expr(*k->globals[0]->init), "{1 2}");
    EXPECT_EQ(p.module->decls[1]->globals.size(), 2u);
    EXPECT_EQ(print_expr(*p.module->decls[1]->globals[1]->init), "(* N 2)");
    EXPECT_TRUE(p.module->decls[2]->globals[0]->is_no_diff);
}

// ---------------------------------------------------------------- types

TEST(Parser, GenericTypesKeepArgumentKindsInOrder) {
    Parsed p("void f(vector<float,3> a, matrix<float, 2, 3> b, DifferentialPair<float> c,\n"
             "       IDiffTensor<float, 2> d, Tensor<float3, 1> e, Tensor<float, N> g,\n"
             "       Tensor<float, (N + 1)> h, DifferentialPair<vector<float,3>> i,\n"
             "       RWTensor<Particle, 2> j) {}");
    ASSERT_FALSE(p.diags.has_errors()) << p.errors();
    const auto& ps = p.function()->params;
    const char* expected[] = {"vector<float,3>",  "matrix<float,2,3>",      "DifferentialPair<float>",
                              "IDiffTensor<float,2>", "Tensor<float3,1>", "Tensor<float,N>",
                              "Tensor<float,(+ N 1)>", "DifferentialPair<vector<float,3>>",
                              "RWTensor<Particle,2>"};
    for (size_t i = 0; i < ps.size(); ++i) EXPECT_EQ(print_type(*ps[i]->type_expr), expected[i]);
    const TypeExpr* m = ps[1]->type_expr;
    EXPECT_EQ(m->arg_is_value, (std::vector<bool>{false, true, true}));
    ASSERT_EQ(m->type_args.size(), 1u);
    ASSERT_EQ(m->value_args.size(), 2u);
    EXPECT_EQ(m->value_args[1]->int_value, 3u);
    // A plain name is a type argument; sema decides whether it names a constant.
    EXPECT_EQ(ps[5]->type_expr->arg_is_value, (std::vector<bool>{false, false}));
    EXPECT_EQ(ps[6]->type_expr->arg_is_value, (std::vector<bool>{false, true}));
    // `>>` closed two lists.
    EXPECT_EQ(ps[7]->type_expr->type_args[0]->name, "vector");
}

TEST(Parser, MemberTypesAndArraySuffixTypes) {
    std::string out = statements("T.Differential d;\nfloat.Differential e;\nfloat[5] a;\n"
                                 "float[5][3] b;\nDifferentialPair<float>.Differential g;");
    EXPECT_EQ(out,
              "(decl (var d T.Differential))\n(decl (var e float.Differential))\n"
              "(decl (var a float[5]))\n(decl (var b float[5][3]))\n"
              "(decl (var g DifferentialPair<float>.Differential))\n");
}

// ---------------------------------------------------------------- statements

TEST(Parser, LocalDeclarationForms) {
    std::string out = statements(
        "float a = 1, b;\nfloat c[3] = {1, 2, 3};\nvar x = 1;\nlet y = 2;\nconst float k = 3;\n"
        "no_diff float z = 1;\nfloat3 v = {1, 2, 3};\nvar t : float = 4;\nfloat3 w{1, 2, 3};\n"
        "static const int T[2] = {1, 2};");
    EXPECT_EQ(out,
              "(decl (var a float = 1) (var b float))\n"
              "(decl (var c float[3] = {1 2 3}))\n"
              "(decl (var x auto = 1))\n"
              "(decl (var y auto const = 2))\n"
              "(decl (var k float const = 3))\n"
              "(decl (var z float no_diff = 1))\n"
              "(decl (var v float3 = {1 2 3}))\n"
              "(decl (var t float = 4))\n"
              "(decl (var w float3 = {1 2 3}))\n"
              "(decl (var T int[2] static const = {1 2}))\n");
    Parsed p("void f() { var x = 1; let y = 2; }");
    EXPECT_EQ(p.body()[0]->decls[0]->type_expr, nullptr);
    EXPECT_FALSE(p.body()[0]->decls[0]->is_const);
    EXPECT_EQ(p.body()[1]->decls[0]->type_expr, nullptr);
    EXPECT_TRUE(p.body()[1]->decls[0]->is_const);
}

TEST(Parser, DeclarationVersusExpressionStatements) {
    std::string out = statements(
        "float[5] a;\nIDiffTensor<float,2> t;\nParticle p;\na[i] = 3;\nx < y;\nf(x);\n"
        "T.Differential d;\np.x = 1;\nno_diff f(x);\nx++;\nvector<float, 3> u;\n"
        "DifferentialPair<vector<float,3>> q;\na < b > c;");
    EXPECT_EQ(out,
              "(decl (var a float[5]))\n"
              "(decl (var t IDiffTensor<float,2>))\n"
              "(decl (var p Particle))\n"
              "(expr (= (index a i) 3))\n"
              "(expr (< x y))\n"
              "(expr (call f x))\n"
              "(decl (var d T.Differential))\n"
              "(expr (= (. p x) 1))\n"
              "(expr (no_diff (call f x)))\n"
              "(expr (post++ x))\n"
              "(decl (var u vector<float,3>))\n"
              "(decl (var q DifferentialPair<vector<float,3>>))\n"
              "(decl (var c a<b>))\n");  // two adjacent names: a declaration, as in C++
}

TEST(Parser, IfElseBindsToTheNearestIf) {
    EXPECT_EQ(statements("if (a) if (b) x = 1; else x = 2;"),
              "(if a\n  (if b\n    (expr (= x 1))\n    (expr (= x 2))))\n");
    EXPECT_EQ(statements("if (a > 0) { return a; } else if (a < 0) return -a; else return 0;"),
              "(if (> a 0)\n  (block\n    (return a))\n  (if (< a 0)\n    (return (- a))\n"
              "    (return 0)))\n");
}

TEST(Parser, ForLoopVariants) {
    EXPECT_EQ(statements("for (int i = 0, j = 1; i < n; i++, j--) s += i;"),
              "(for (decl (var i int = 0) (var j int = 1)) (< i n) (, (post++ i) (post-- j))\n"
              "  (expr (+= s i)))\n");
    EXPECT_EQ(statements("for (i = 0; ; ) break;"),
              "(for (expr (= i 0)) _ _\n  (break))\n");
    EXPECT_EQ(statements("for (;;) {}"), "(for _ _ _\n  (block))\n");
    EXPECT_EQ(statements("for (var k = 0; k < 3; ++k) continue;"),
              "(for (decl (var k auto = 0)) (< k 3) (++ k)\n  (continue))\n");
}

TEST(Parser, WhileBreakContinueReturnAndEmpty) {
    EXPECT_EQ(statements("while (x < 10) { x *= 2; if (x == 4) break; continue; }\n;\nreturn;\n"
                         "return x + 1;"),
              "(while (< x 10)\n  (block\n    (expr (*= x 2))\n    (if (== x 4)\n      (break))\n"
              "    (continue)))\n(empty)\n(return)\n(return (+ x 1))\n");
}

TEST(Parser, LoopAttributes) {
    Parsed p("void f() { [MaxIters(16)] for (;;) {} [ForceUnroll] for (;;) {}\n"
             "[unroll] while (a) {} [loop][MaxIters(N + 1)] for (;;) {} }");
    ASSERT_FALSE(p.diags.has_errors()) << p.errors();
    const auto& b = p.body();
    ASSERT_EQ(b.size(), 4u);
    EXPECT_EQ(b[0]->attrs[0].name, "MaxIters");
    EXPECT_EQ(b[0]->attrs[0].args[0]->int_value, 16u);
    EXPECT_EQ(b[1]->attrs[0].name, "ForceUnroll");
    EXPECT_TRUE(b[1]->attrs[0].args.empty());
    EXPECT_EQ(b[2]->attrs[0].name, "unroll");
    EXPECT_EQ(b[2]->kind, StmtKind::While);
    ASSERT_EQ(b[3]->attrs.size(), 2u);
    EXPECT_EQ(print_expr(*b[3]->attrs[1].args[0]), "(+ N 1)");
    EXPECT_EQ(line_col(b[0]->loc), "1:27");  // the `for`, not the attribute
    EXPECT_EQ(line_col(b[0]->attrs[0].loc), "1:13");
}

TEST(Parser, DoWhileAndSwitch) {
    Parsed p("void f() { do { x++; } while (x < 3); switch (x) { case 1: { y = 2; } break; "
             "default: break; } x = 0; }");
    ASSERT_FALSE(p.diags.has_errors()) << p.errors();
    const auto& b = p.body();
    ASSERT_EQ(b.size(), 3u);
    EXPECT_EQ(b[0]->kind, StmtKind::DoWhile);
    EXPECT_EQ(print_expr(*b[0]->cond), "(< x 3)");
    EXPECT_EQ(b[0]->then_stmt->kind, StmtKind::Block);
    EXPECT_EQ(b[1]->kind, StmtKind::Switch);
    EXPECT_EQ(print_expr(*b[1]->cond), "x");
    // The labels are statements of the switch body, in order.
    EXPECT_EQ(print_stmt(*b[1]),
              "(switch x\n  (case 1)\n  (block\n    (expr (= y 2)))\n  (break)\n  (case _)\n  (break))\n");
    EXPECT_EQ(line_col(b[1]->body[0]->loc), "1:52");
    EXPECT_EQ(b[2]->kind, StmtKind::Expr);
}

TEST(Parser, TypeDeclarations) {
    Parsed p("typealias V = float3; typedef float A[4]; enum class M : uint { X, Y = 4, Z }; "
             "void f() { typealias L = int; typedef L K; var m = M::Y; var a = (M)1; }");
    ASSERT_FALSE(p.diags.has_errors()) << p.errors();
    ASSERT_GE(p.module->decls.size(), 4u);
    EXPECT_EQ(p.module->decls[0]->kind, DeclKind::TypeAlias);
    EXPECT_EQ(p.module->decls[0]->alias->name, "V");
    EXPECT_EQ(p.module->decls[1]->alias->name, "A");
    EXPECT_EQ(p.module->decls[1]->alias->type->array_dims.size(), 1u);
    const EnumDecl* e = p.module->decls[2]->enumeration;
    ASSERT_NE(e, nullptr);
    EXPECT_TRUE(e->is_class);
    EXPECT_EQ(e->underlying->name, "uint");
    ASSERT_EQ(e->members.size(), 3u);
    EXPECT_EQ(e->members[1].name, "Y");
    EXPECT_EQ(print_expr(*e->members[1].value), "4");
    EXPECT_EQ(e->members[2].value, nullptr);
    const auto& b = p.module->decls[3]->function->body->body;
    ASSERT_EQ(b.size(), 4u);
    EXPECT_EQ(b[0]->kind, StmtKind::TypeAlias);
    EXPECT_EQ(b[1]->kind, StmtKind::TypeAlias);
    EXPECT_EQ(b[1]->alias->type->name, "L");
    EXPECT_EQ(b[3]->decls[0]->init->kind, ExprKind::Cast);  // `(M)1`: M is a declared type
}

// ---------------------------------------------------------------- expressions

TEST(Parser, BinaryPrecedenceFollowsC) {
    EXPECT_EQ(expression("a + b * c"), "(+ a (* b c))");
    EXPECT_EQ(expression("a * b + c"), "(+ (* a b) c)");
    EXPECT_EQ(expression("a % b / c * d"), "(* (/ (% a b) c) d)");
    EXPECT_EQ(expression("a || b && c | d ^ e & f == g < h << i + j * k"),
              "(|| a (&& b (| c (^ d (& e (== f (< g (<< h (+ i (* j k))))))))))");
    EXPECT_EQ(expression("a * b + c << d < e == f & g ^ h | i && j || k"),
              "(|| (&& (| (^ (& (== (< (<< (+ (* a b) c) d) e) f) g) h) i) j) k)");
    EXPECT_EQ(expression("a < b == c > d"), "(== (< a b) (> c d))");
    EXPECT_EQ(expression("a << 1 < b >> 2"), "(< (<< a 1) (>> b 2))");
    EXPECT_EQ(expression("a <= b != c >= d"), "(!= (<= a b) (>= c d))");
    EXPECT_EQ(expression("(a + b) * c"), "(* (+ a b) c)");
    EXPECT_EQ(expression("a & b | c ^ d"), "(| (& a b) (^ c d))");
}

TEST(Parser, AssociativityOfBinaryAssignmentConditionalAndComma) {
    EXPECT_EQ(expression("a - b - c"), "(- (- a b) c)");
    EXPECT_EQ(expression("a / b / c"), "(/ (/ a b) c)");
    EXPECT_EQ(expression("a = b = c"), "(= a (= b c))");
    EXPECT_EQ(expression("a += b -= c"), "(+= a (-= b c))");
    EXPECT_EQ(expression("a ? b : c ? d : e"), "(?: a b (?: c d e))");
    EXPECT_EQ(expression("a ? b ? c : d : e"), "(?: a (?: b c d) e)");
    EXPECT_EQ(expression("x = a ? b : c"), "(= x (?: a b c))");
    EXPECT_EQ(expression("a ? b = 1 : c"), "(?: a (= b 1) c)");
    EXPECT_EQ(expression("a, b = c, d"), "(, (, a (= b c)) d)");
    EXPECT_EQ(expression("a || b ? c : d"), "(?: (|| a b) c d)");
}

TEST(Parser, AllCompoundAssignments) {
    const char* ops[] = {"=", "*=", "/=", "%=", "+=", "-=", "<<=", ">>=", "&=", "^=", "|="};
    for (const char* op : ops)
        EXPECT_EQ(expression(std::string("a ") + op + " b"), std::string("(") + op + " a b)");
}

TEST(Parser, PrefixAndPostfixOperators) {
    EXPECT_EQ(expression("-a * b"), "(* (- a) b)");
    EXPECT_EQ(expression("-x++"), "(- (post++ x))");
    EXPECT_EQ(expression("++x--"), "(++ (post-- x))");
    EXPECT_EQ(expression("!a && ~b"), "(&& (! a) (~ b))");
    EXPECT_EQ(expression("+a - -b"), "(- (+ a) (- b))");
    EXPECT_EQ(expression("--x"), "(-- x)");
    EXPECT_EQ(expression("no_diff f(x) * 2"), "(* (no_diff (call f x)) 2)");
    EXPECT_EQ(expression("no_diff -x"), "(no_diff (- x))");
    Parsed p("void f() { ++x; x++; }");
    EXPECT_EQ(p.body()[0]->expr->kind, ExprKind::Unary);
    EXPECT_EQ(p.body()[0]->expr->op, Op::PreInc);
    EXPECT_EQ(p.body()[1]->expr->kind, ExprKind::Postfix);
    EXPECT_EQ(p.body()[1]->expr->op, Op::Inc);
}

TEST(Parser, CallsIndexingAndMemberChains) {
    EXPECT_EQ(expression("bwd_diff(f)(x, y)"), "(call (call bwd_diff f) x y)");
    EXPECT_EQ(expression("f()"), "(call f)");
    EXPECT_EQ(expression("p.d.pos"), "(. (. p d) pos)");
    EXPECT_EQ(expression("t[i, j]"), "(index t i j)");
    EXPECT_EQ(expression("W.shape[1]"), "(index (. W shape) 1)");
    EXPECT_EQ(expression("a[0][1]"), "(index (index a 0) 1)");
    EXPECT_EQ(expression("x.getPrimal()"), "(call (. x getPrimal))");
    EXPECT_EQ(expression("v.xy.x"), "(. (. v xy) x)");
    EXPECT_EQ(expression("W[int2(c, r)]"), "(index W (call int2 c r))");
    EXPECT_EQ(expression("f(a, (b, c))"), "(call f a (, b c))");
}

TEST(Parser, TypeConstructors) {
    EXPECT_EQ(expression("vector<float,3>(x)"), "(ctor vector<float,3> x)");
    EXPECT_EQ(expression("matrix<float,2,2>(1, 2, 3, 4)"), "(ctor matrix<float,2,2> 1 2 3 4)");
    EXPECT_EQ(expression("float[2](a, b)"), "(ctor float[2] a b)");
    EXPECT_EQ(expression("DifferentialPair<float>(p, d)"), "(ctor DifferentialPair<float> p d)");
    EXPECT_EQ(expression("DifferentialPair<vector<float,2>>(p, d).p"),
              "(. (ctor DifferentialPair<vector<float,2>> p d) p)");
    // Plain type names stay calls; sema resolves them.
    EXPECT_EQ(expression("float3(x)"), "(call float3 x)");
    EXPECT_EQ(expression("float3x3(a, b, c)"), "(call float3x3 a b c)");
    EXPECT_EQ(expression("float(i + 1)"), "(call float (+ i 1))");
}

TEST(Parser, InitializerLists) {
    EXPECT_EQ(statements("float2x2 m = {{1, 2}, {3, 4},};\nf({1, 2}, {});\nreturn {a, b};"),
              "(decl (var m float2x2 = {{1 2} {3 4}}))\n(expr (call f {1 2} {}))\n"
              "(return {a b})\n");
}

TEST(Parser, CStyleCastsOnlyForBuiltinTypeNames) {
    EXPECT_EQ(expression("(float)x"), "(cast float x)");
    EXPECT_EQ(expression("(float3x3)m * 2"), "(* (cast float3x3 m) 2)");
    EXPECT_EQ(expression("(float)(a + b)"), "(cast float (+ a b))");
    EXPECT_EQ(expression("(uint)-x"), "(cast uint (- x))");
    EXPECT_EQ(expression("(x) - y"), "(- x y)");
    EXPECT_EQ(expression("(Particle) - y"), "(- Particle y)");
}

TEST(Parser, ComparisonsAreNotMistakenForGenerics) {
    EXPECT_EQ(expression("a < b && c > (d)"), "(&& (< a b) (> c d))");
    EXPECT_EQ(expression("i < n"), "(< i n)");
    EXPECT_EQ(expression("x = a < b ? c : d > e"), "(= x (?: (< a b) c (> d e)))");
    EXPECT_EQ(expression("vector < 3"), "(< vector 3)");  // no '(' after: not a ctor
}

TEST(Parser, LiteralNodes) {
    Parsed p("void f() { 0xFFu; 1.5e+3f; true; false; 7; .25h; 1.; 2.0L; 0b11ll; }");
    ASSERT_FALSE(p.diags.has_errors()) << p.errors();
    const auto& b = p.body();
    EXPECT_EQ(b[0]->expr->kind, ExprKind::IntLit);
    EXPECT_EQ(b[0]->expr->int_value, 255u);
    EXPECT_EQ(b[0]->expr->suffix, "u");
    EXPECT_EQ(b[1]->expr->kind, ExprKind::FloatLit);
    EXPECT_DOUBLE_EQ(b[1]->expr->float_value, 1500.0);
    EXPECT_EQ(b[1]->expr->suffix, "f");
    EXPECT_EQ(b[2]->expr->kind, ExprKind::BoolLit);
    EXPECT_EQ(b[2]->expr->int_value, 1u);
    EXPECT_EQ(b[3]->expr->int_value, 0u);
    EXPECT_EQ(b[4]->expr->suffix, "");
    EXPECT_DOUBLE_EQ(b[5]->expr->float_value, 0.25);
    EXPECT_EQ(b[5]->expr->suffix, "h");
    EXPECT_EQ(print_expr(*b[6]->expr), "1.0");
    EXPECT_EQ(print_expr(*b[7]->expr), "2.0L");
    EXPECT_EQ(print_expr(*b[8]->expr), "3ll");
}

TEST(Parser, NodeLocations) {
    Parsed p("[Differentiable]\n"
             "float f(float x, int n)\n"
             "{\n"
             "    float s = x + 1.0;\n"
             "    s = g(s, n).y[2];\n"
             "    return s ? -s : t++;\n"
             "}\n");
    ASSERT_FALSE(p.diags.has_errors()) << p.errors();
    const Decl* d = p.module->decls[0];
    const FunctionDecl* fn = d->function;
    EXPECT_EQ(line_col(d->loc), "1:1");                  // first token of the declaration
    EXPECT_EQ(line_col(fn->loc), "2:7");                 // the function's name
    EXPECT_EQ(line_col(fn->attrs[0].loc), "1:2");
    EXPECT_EQ(line_col(fn->return_type->loc), "2:1");
    EXPECT_EQ(line_col(fn->params[1]->loc), "2:22");     // parameter name
    EXPECT_EQ(line_col(fn->params[1]->type_expr->loc), "2:18");
    EXPECT_EQ(line_col(fn->body->loc), "3:1");
    const auto& b = fn->body->body;
    EXPECT_EQ(line_col(b[0]->loc), "4:5");               // statement: first token
    EXPECT_EQ(line_col(b[0]->decls[0]->loc), "4:11");    // variable name
    EXPECT_EQ(line_col(b[0]->decls[0]->init->loc), "4:17");  // binary: operator
    EXPECT_EQ(line_col(b[0]->decls[0]->init->operands[1]->loc), "4:19");
    const Expr* assign = b[1]->expr;
    EXPECT_EQ(line_col(assign->loc), "5:7");             // assignment: operator
    const Expr* index = assign->operands[1];
    EXPECT_EQ(line_col(index->loc), "5:18");             // index: '['
    const Expr* member = index->operands[0];
    EXPECT_EQ(line_col(member->loc), "5:17");            // member: its name
    EXPECT_EQ(line_col(member->operands[0]->loc), "5:9");  // call: callee start
    const Expr* cond = b[2]->expr;
    EXPECT_EQ(line_col(b[2]->loc), "6:5");
    EXPECT_EQ(line_col(cond->loc), "6:14");              // conditional: '?'
    EXPECT_EQ(line_col(cond->operands[1]->loc), "6:16"); // prefix: operator (first token)
    EXPECT_EQ(line_col(cond->operands[2]->loc), "6:22"); // postfix: operator
}

TEST(Parser, CallOfMemberIsLocatedAtTheStartOfTheCallee) {
    Parsed p("void f() {\n  x = p.getPrimal() + bwd_diff(g)(a);\n}");
    ASSERT_FALSE(p.diags.has_errors()) << p.errors();
    const Expr* sum = p.body()[0]->expr->operands[1];
    EXPECT_EQ(line_col(sum->operands[0]->loc), "2:7");
    EXPECT_EQ(line_col(sum->operands[1]->loc), "2:23");
    EXPECT_EQ(line_col(sum->operands[1]->operands[0]->loc), "2:23");
}

TEST(Parser, EmptyModuleAndStraySemicolons) {
    Parsed empty("");
    EXPECT_TRUE(empty.module->decls.empty());
    EXPECT_FALSE(empty.diags.has_errors());
    Parsed p(";;\n// only comments\n/* here */ ;");
    EXPECT_TRUE(p.module->decls.empty());
    EXPECT_FALSE(p.diags.has_errors());
}

}  // namespace
}  // namespace sg::lang::test
