// test_module_repr.cpp - a user's module needs no repr(): it compiles, is not abstract, and
// prints as its class name in summary(), its children below it.
#include <memory>
#include <string>
#include <type_traits>

#include <heed/layers/embedding.h>
#include <heed/layers/linear.h>
#include <heed/layers/module.h>
#include "helpers.h"

using namespace heed;

namespace {

// What a program writes: parts registered, a forward, and no repr() override.
struct TinyTagger : nn::Module {
  nn::Embedding emb = register_module("emb", nn::Embedding(
                                                                  nn::EmbeddingOptions(10, 4)));
  nn::Linear out = register_module("out", nn::Linear(
                                                               nn::LinearOptions(4, 3)));
  Tensor forward(const IndexTensor& ids) { return out->forward(emb->forward(ids)); }
};

template <class T>
struct Box : nn::Module {};

}  // namespace

namespace app {
struct Decoder : nn::Module {};
}  // namespace app

static_assert(!std::is_abstract_v<TinyTagger>);

TEST_CASE("Module::repr: a user module without repr() prints its class name; summary() works") {
  auto model = std::make_shared<TinyTagger>();  // make_shared of an abstract class would not compile
  CHECK(model->repr() == "TinyTagger");
  CHECK(model->summary() ==
        "TinyTagger\n"
        "  (emb): Embedding(10, 4)  [40 params]\n"
        "  (out): Linear(in_features=4, out_features=3, bias=True)  [15 params]\n"
        "total parameters: 55\n");
  CHECK(model->forward(IndexTensor({1, 2}, {1, 2})).shape() == Shape{1, 2, 3});
  CHECK(app::Decoder().repr() == "Decoder");
  CHECK(Box<int>().repr() == "Box<int>");
  CHECK(nn::Linear(nn::LinearOptions(2, 1))->repr() == "Linear(in_features=2, out_features=1, bias=True)");
}
