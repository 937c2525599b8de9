// gemm_engine_scope.h - one GEMM engine (and oneDNN route) for a scope of a test, the
// process's choice restored after it (core/gemm_engine.h, core/onednn_matmul.h).
#pragma once
#include <heed/core/gemm_engine.h>
#include <heed/core/onednn_matmul.h>

namespace heed::test {
struct EngineScope {
  GemmEngine before = gemm_engine();
  explicit EngineScope(GemmEngine e, detail::OnednnRoute r = detail::OnednnRoute::automatic) {
    set_gemm_engine(e);
    detail::set_onednn_route(r);
  }
  ~EngineScope() {
    set_gemm_engine(before);
    detail::set_onednn_route(detail::OnednnRoute::automatic);
  }
  EngineScope(const EngineScope&) = delete;
  EngineScope& operator=(const EngineScope&) = delete;
};

// The engines and, on oneDNN, the routes a test walks through.
struct EngineSetting {
  GemmEngine engine;
  detail::OnednnRoute route;
  const char* name;
};
constexpr EngineSetting kEngineSettings[] = {
    {GemmEngine::onednn, detail::OnednnRoute::automatic, "oneDNN, automatic"},
    {GemmEngine::onednn, detail::OnednnRoute::primitive, "oneDNN, every product on a primitive"},
    {GemmEngine::onednn, detail::OnednnRoute::sgemm, "oneDNN, every product on dnnl_sgemm"},
    {GemmEngine::openblas, detail::OnednnRoute::automatic, "OpenBLAS"},
};
}  // namespace heed::test
