// write_seeds.cpp - writes the fuzzer's seed corpus: a valid checkpoint of each target
// (targets.h) after one optimizer step, with and without its optimizer section.
//   build/fuzz/write_seeds DIR
#include <cstdio>

#include "targets.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: write_seeds DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  std::vector<heed::fuzz::Target> ts = heed::fuzz::targets();
  for (heed::fuzz::Target& t : ts) {
    if (t.opt) {
      for (heed::Tensor& p : t.model->parameters()) p.set_grad(heed::ones_like(p));
      t.opt->step();
      heed::save_checkpoint(dir + "/" + t.name + ".ckpt", *t.model, *t.opt);
    }
    heed::save_checkpoint(dir + "/" + t.name + "_model_only.ckpt", *t.model);
  }
  return 0;
}
