// The IR itself: type inference, the verifier, the pass manager and its passes, the text dump and
// the interpreter's kernels on hand-computed cases.
#include <gtest/gtest.h>

#include <cmath>

#include "core/error.h"
#include "graph/graph.h"
#include "graph/interpreter.h"
#include "graph/passes.h"
#include "graph/text_dump.h"
#include "graph/verifier.h"

namespace genai::graph {
namespace {

Tensor f32(Shape shape, std::vector<float> values) {
  Tensor t = Tensor::zeros(DType::kF32, std::move(shape));
  EXPECT_EQ(static_cast<size_t>(t.numel()), values.size());
  std::copy(values.begin(), values.end(), t.mutable_data<float>());
  return t;
}

std::vector<float> as_vector(const Tensor& t) { return {t.data<float>(), t.data<float>() + t.numel()}; }

std::shared_ptr<const Tensor> constant(Shape shape, std::vector<float> values) {
  return std::make_shared<const Tensor>(f32(std::move(shape), std::move(values)));
}

TEST(GraphIr, InfersTypesAndRejectsMismatchesNamingTheOp) {
  Graph g("t", nullptr);
  const ValueId a = g.add_input("a", DType::kF32, {2, 3});
  const ValueId b = g.add_input("b", DType::kF32, {3, 4});
  const ValueId m = g.add_op(OpKind::kMatMul, {a, b}, "ab");
  EXPECT_EQ(g.value(m).type, (TensorType{DType::kF32, {2, 4}}));
  try {
    g.add_op(OpKind::kMatMul, {a, a}, "bad");
    FAIL();
  } catch (const Failure& e) {
    EXPECT_NE(std::string(e.what()).find("'bad' (matmul)"), std::string::npos) << e.what();
  }
  EXPECT_THROW(g.add_op(OpKind::kReshape, {a}, "r", {{"shape", std::vector<int64_t>{5}}}), Failure);
  EXPECT_THROW(g.add_op(OpKind::kAdd, {a, b}, "sum"), Failure);
  EXPECT_THROW(g.add_input("a", DType::kF32, {1}), Failure);  // names are unique
  EXPECT_EQ(verify_graph(g), "");
}

TEST(GraphIr, VerifierFindsUseBeforeDefWrongTypesAndUnboundOutputs) {
  Graph g("t", nullptr);
  const ValueId x = g.add_input("x", DType::kF32, {4});
  const ValueId s = g.add_op(OpKind::kSilu, {x}, "s");
  const ValueId y = g.add_op(OpKind::kMul, {s, x}, "y");
  g.add_output("y", y);
  ASSERT_EQ(verify_graph(g), "");

  Graph use_before_def = g;
  use_before_def.mutable_ops()[0].operands[0] = y;  // silu reads y, defined by the next op
  EXPECT_NE(verify_graph(use_before_def).find("used before it is defined"), std::string::npos);

  Graph wrong_type = g;
  wrong_type.mutable_values()[s].type.shape = {5};
  EXPECT_NE(verify_graph(wrong_type).find("op #0 's' (silu)"), std::string::npos) << verify_graph(wrong_type);

  Graph unbound = g;
  unbound.mutable_outputs()[0].value = 99;
  EXPECT_NE(verify_graph(unbound).find("output 'y' is not bound"), std::string::npos);
}

TEST(GraphIr, PassManagerNamesThePassThatBrokeTheGraph) {
  Graph g("t", nullptr);
  const ValueId x = g.add_input("x", DType::kF32, {2, 2});
  g.add_output("y", g.add_op(OpKind::kSoftmax, {x}, "y"));
  PassManager pm;
  pm.add({"noop", [](Graph&) { return false; }});
  pm.add({"breaks-types", [](Graph& gr) {
            gr.mutable_values()[1].type.shape = {4};
            return true;
          }});
  try {
    pm.run(g);
    FAIL();
  } catch (const Failure& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("after pass 'breaks-types'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("op #0 'y' (softmax)"), std::string::npos) << msg;
  }
}

TEST(GraphPasses, DeadCodeEliminationKeepsOnlyWhatReachesOutputs) {
  Graph g("t", nullptr);
  const ValueId x = g.add_input("x", DType::kF32, {3});
  const ValueId unused_input = g.add_input("unused", DType::kF32, {3});
  const ValueId c = g.add_constant("c", constant({3}, {1, 2, 3}));
  g.add_constant("dead_constant", constant({1}, {9}));
  const ValueId live = g.add_op(OpKind::kAdd, {x, c}, "live");
  const ValueId dead = g.add_op(OpKind::kSilu, {live}, "dead");
  g.add_op(OpKind::kMul, {dead, unused_input}, "dead2");
  g.add_output("out", live);
  PassManager pm;
  pm.add(dead_code_elimination_pass());
  EXPECT_EQ(pm.run(g), std::vector<std::string>{"dead-code-elimination"});
  ASSERT_EQ(g.ops().size(), 1u);
  EXPECT_EQ(g.value(g.ops()[0].result).name, "live");
  EXPECT_EQ(g.find_value("dead_constant"), -1);
  EXPECT_GE(g.find_value("unused"), 0);  // inputs are the signature
  EXPECT_TRUE(pm.run(g).empty());          // nothing left to remove
}

TEST(GraphPasses, CanonicalizeFoldsReshapeAndTransposeChainsWithoutChangingResults) {
  Graph g("t", nullptr);
  const ValueId x = g.add_input("x", DType::kF32, {2, 3, 4});
  const ValueId r1 = g.add_op(OpKind::kReshape, {x}, "r1", {{"shape", std::vector<int64_t>{6, 4}}});
  const ValueId r2 = g.add_op(OpKind::kReshape, {r1}, "r2", {{"shape", std::vector<int64_t>{4, 6}}});
  const ValueId r3 = g.add_op(OpKind::kReshape, {r2}, "r3", {{"shape", std::vector<int64_t>{3, 8}}});
  const ValueId t1 = g.add_op(OpKind::kTranspose, {x}, "t1", {{"perm", std::vector<int64_t>{2, 0, 1}}});
  const ValueId t2 = g.add_op(OpKind::kTranspose, {t1}, "t2", {{"perm", std::vector<int64_t>{0, 2, 1}}});
  const ValueId same = g.add_op(OpKind::kReshape, {t2}, "same", {{"shape", std::vector<int64_t>{4, 3, 2}}});
  g.add_output("r", r3);
  g.add_output("t", same);

  Tensor in = Tensor::zeros(DType::kF32, {2, 3, 4});
  for (int i = 0; i < 24; ++i) in.mutable_data<float>()[i] = static_cast<float>(i);
  const TensorMap before = interpret(g, {{"x", &in}});

  const auto changed = default_pipeline().run(g);
  EXPECT_EQ(changed, (std::vector<std::string>{"canonicalize", "dead-code-elimination"}));
  // Left: one reshape x -> [3, 8] and one transpose x -> [4, 3, 2] with perm {2, 1, 0}.
  ASSERT_EQ(g.ops().size(), 2u);
  EXPECT_EQ(g.ops()[0].kind, OpKind::kReshape);
  EXPECT_EQ(g.ops()[0].operands[0], g.find_value("x"));
  EXPECT_EQ(g.ops()[1].kind, OpKind::kTranspose);
  EXPECT_EQ(attr_ints(g.ops()[1].attrs, "perm"), (std::vector<int64_t>{2, 1, 0}));
  EXPECT_EQ(g.value(g.find_output("t")->value).name, "t2");
  const TensorMap after = interpret(g, {{"x", &in}});
  for (const char* name : {"r", "t"}) {
    EXPECT_EQ(after.at(name).shape(), before.at(name).shape());
    EXPECT_EQ(as_vector(after.at(name)), as_vector(before.at(name))) << name;
  }
}

TEST(GraphDump, OneOpPerLineStableAndJson) {
  Graph g("demo", nullptr);
  const ValueId x = g.add_input("x", DType::kF32, {1, 4});
  const ValueId w = g.add_constant("w", constant({4}, {1, 1, 1, 1}));
  const ValueId n = g.add_op(OpKind::kRmsNorm, {x, w}, "norm.out", {{"eps", 1e-5}});
  g.add_output("y", n);
  const std::string text = dump_graph_text(g);
  EXPECT_EQ(text,
            "graph demo (1 inputs, 1 ops, 1 outputs)\n"
            "  input    %x : float32[1, 4]\n"
            "  constant %w : float32[4]\n"
            "  %norm.out : float32[1, 4] = rms_norm(%x, %w) {eps=1e-05}\n"
            "  output   y = %norm.out\n");
  EXPECT_EQ(dump_graph_text(g), text);
  const auto j = dump_graph_json(g);
  EXPECT_EQ(j["ops"][0]["op"], "rms_norm");
  EXPECT_EQ(j["ops"][0]["operands"][1], "w");
  EXPECT_EQ(j["outputs"][0]["value"], "norm.out");
  EXPECT_EQ(j["inputs"][0]["shape"], nlohmann::json::array({1, 4}));
}

TEST(GraphInterpreter, KernelsMatchHandComputedValues) {
  Graph g("k", nullptr);
  const ValueId a = g.add_input("a", DType::kF32, {2, 1, 2, 3});
  const ValueId b = g.add_input("b", DType::kF32, {1, 2, 3, 1});
  const ValueId idx = g.add_input("idx", DType::kI32, {1, 2});
  const ValueId table = g.add_constant("table", constant({3, 2}, {10, 11, 20, 21, 30, 31}));
  g.add_output("mm", g.add_op(OpKind::kMatMul, {a, b}, "mm"));  // batch dims broadcast to [2, 2]
  g.add_output("gather", g.add_op(OpKind::kGather, {table, idx}, "gather"));
  g.add_output("slice", g.add_op(OpKind::kSlice, {a}, "slice", {{"axis", int64_t{3}}, {"start", int64_t{1}}, {"end", int64_t{3}}}));
  g.add_output("cat", g.add_op(OpKind::kConcat, {a, a}, "cat", {{"axis", int64_t{2}}}));
  const ValueId sm_in = g.add_op(OpKind::kReshape, {a}, "flat", {{"shape", std::vector<int64_t>{4, 3}}});
  g.add_output("softmax", g.add_op(OpKind::kSoftmax, {sm_in}, "softmax"));
  const ValueId bcast = g.add_constant("row", constant({3}, {1, 2, 3}));
  g.add_output("mul", g.add_op(OpKind::kMul, {sm_in, bcast}, "mul"));

  const Tensor ta = f32({2, 1, 2, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  const Tensor tb = f32({1, 2, 3, 1}, {1, 0, -1, 2, 2, 2});
  Tensor ti = Tensor::zeros(DType::kI32, {1, 2});
  ti.mutable_data<int32_t>()[0] = 2;
  ti.mutable_data<int32_t>()[1] = 0;
  const TensorMap out = interpret(g, {{"a", &ta}, {"b", &tb}, {"idx", &ti}});
  EXPECT_EQ(out.at("mm").shape(), (Shape{2, 2, 2, 1}));
  EXPECT_EQ(as_vector(out.at("mm")), (std::vector<float>{-2, -2, 12, 30, -2, -2, 48, 66}));
  EXPECT_EQ(as_vector(out.at("gather")), (std::vector<float>{30, 31, 10, 11}));
  EXPECT_EQ(as_vector(out.at("slice")), (std::vector<float>{2, 3, 5, 6, 8, 9, 11, 12}));
  EXPECT_EQ(out.at("cat").shape(), (Shape{2, 1, 4, 3}));
  EXPECT_EQ(as_vector(out.at("cat"))[6], 1.0f);
  EXPECT_EQ(as_vector(out.at("cat"))[12], 7.0f);
  const auto sm = as_vector(out.at("softmax"));
  const double e1 = std::exp(-2.0), e2 = std::exp(-1.0), den = e1 + e2 + 1.0;
  EXPECT_NEAR(sm[0], e1 / den, 1e-7);
  EXPECT_NEAR(sm[11], 1.0 / den, 1e-7);
  EXPECT_EQ(as_vector(out.at("mul"))[5], 18.0f);
}

TEST(GraphInterpreter, RopeRotatesHalvesAndLinearAddsBias) {
  Graph g("r", nullptr);
  const ValueId x = g.add_input("x", DType::kF32, {1, 1, 1, 4});
  const ValueId cos = g.add_constant("cos", constant({1, 1, 4}, {0.5f, 0.25f, 0.5f, 0.25f}));
  const ValueId sin = g.add_constant("sin", constant({1, 1, 4}, {2, 3, 2, 3}));
  g.add_output("rope", g.add_op(OpKind::kRope, {x, cos, sin}, "rope"));
  const ValueId w = g.add_constant("w", constant({2, 4}, {1, 0, 0, 0, 0, 1, 1, 1}));
  const ValueId bias = g.add_constant("bias", constant({2}, {0.5f, -1}));
  g.add_output("lin", g.add_op(OpKind::kLinear, {x, w, bias}, "lin"));
  const Tensor tx = f32({1, 1, 1, 4}, {1, 2, 3, 4});
  const TensorMap out = interpret(g, {{"x", &tx}});
  // x*cos + rotate_half(x)*sin, rotate_half([1,2,3,4]) = [-3,-4,1,2]
  EXPECT_EQ(as_vector(out.at("rope")), (std::vector<float>{0.5f - 6, 0.5f - 12, 1.5f + 2, 1.0f + 6}));
  EXPECT_EQ(as_vector(out.at("lin")), (std::vector<float>{1.5f, 8}));
}

TEST(GraphInterpreter, BadBindingsAreInputErrors) {
  Graph g("b", nullptr);
  const ValueId idx = g.add_input("tokens", DType::kI32, {1, 2});
  g.add_output("e", g.add_op(OpKind::kGather, {g.add_constant("t", constant({2, 1}, {1, 2})), idx}, "e"));
  Tensor ok = Tensor::zeros(DType::kI32, {1, 2});
  Tensor wrong_shape = Tensor::zeros(DType::kI32, {1, 3});
  Tensor wrong_type = Tensor::zeros(DType::kF32, {1, 2});
  EXPECT_NO_THROW(interpret(g, {{"tokens", &ok}}));
  EXPECT_THROW(interpret(g, {}), InputError);
  EXPECT_THROW(interpret(g, {{"tokens", &wrong_shape}}), InputError);
  EXPECT_THROW(interpret(g, {{"tokens", &wrong_type}}), InputError);
  EXPECT_THROW(interpret(g, {{"tokens", &ok}, {"extra", &ok}}), InputError);
  ok.mutable_data<int32_t>()[1] = 2;  // table has 2 rows
  try {
    interpret(g, {{"tokens", &ok}});
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("tokens"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace genai::graph
