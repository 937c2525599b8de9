// module_holder.h - nn::ModuleHolder<Impl> and HEED_MODULE(Name), as libtorch's ModuleHolder
// and TORCH_MODULE (torch/csrc/api/include/torch/nn/pimpl.h).
//
// Every layer is a class `XImpl` (the module: parameters, forward, repr) and a holder `X`
// that owns one through a std::shared_ptr. The holder is what a program names:
//   nn::Linear fc(4, 3);                     // std::make_shared<nn::LinearImpl>(4, 3)
//   Tensor y = fc(x);                        // fc->forward(x)
//   fc->weight;  *fc;  fc.ptr();  fc.get();  // the module, its shared_ptr, a raw pointer
//   nn::Linear none{nullptr};                // empty: none.is_empty(), !none
//   auto b = fc;                             // b and fc are ONE module: copying a holder
//                                            // shares it, as copying a shared_ptr does
// `std::make_shared<nn::LinearImpl>(4, 3)` builds the same module, and a holder converts
// from that shared_ptr (nn::Linear fc = std::make_shared<nn::LinearImpl>(4, 3)).
//
// operator() forwards its arguments to forward, every overload and default argument
// included: lstm(x), lstm(x, hx), lstm(x, hx, lengths). As in libtorch, a braced `{}` cannot
// pass through it (a template cannot deduce it): write lstm->forward(x, {}, lengths).
// A default-constructed holder builds a default-constructed module where the module has a
// default constructor (nn::Sequential seq;), and does not compile otherwise: a member that
// is filled in later is declared `nn::Linear fc{nullptr};`. Using an empty holder is a
// heed::Error naming the module.
//
// HEED_MODULE(Linear) expands to exactly
//
//   class Linear : public heed::nn::ModuleHolder<LinearImpl> {
//    public:
//     using heed::nn::ModuleHolder<LinearImpl>::ModuleHolder;
//     using Impl = LinearImpl;
//   }
//
// so a module of your own reads as one in libtorch:
//   struct NetImpl : nn::Module { ... Tensor forward(const Tensor& x); };
//   HEED_MODULE(Net);
#pragma once
#include <cstddef>
#include <memory>
#include <type_traits>
#include <typeinfo>
#include <utility>

namespace heed::nn {

namespace detail {
// heed::Error naming the module type: an empty holder was used (module.cpp).
[[noreturn]] void empty_holder(const std::type_info& impl);
}  // namespace detail

// The common base of every holder, so templates (Sequential, register_module) can tell a
// holder from a module.
struct ModuleHolderTag {};

template <class Contained>
class ModuleHolder : public ModuleHolderTag {
 public:
  using ContainedType = Contained;

  // A default-constructed module (only where Contained has a default constructor).
  ModuleHolder() : impl_(default_construct()) {}
  // The empty state.
  ModuleHolder(std::nullptr_t) {}  // NOLINT: implicit, as libtorch's
  // Builds Contained(args...). Not taken for one argument that is a holder of the same
  // module or a shared_ptr to one (those are the copy and the conversion below).
  template <class Head, class... Tail,
            class = std::enable_if_t<!(sizeof...(Tail) == 0 &&
                                       (std::is_base_of_v<ModuleHolder, std::decay_t<Head>> ||
                                        std::is_same_v<std::decay_t<Head>, std::nullptr_t> ||
                                        std::is_convertible_v<Head, std::shared_ptr<Contained>>))>>
  explicit ModuleHolder(Head&& head, Tail&&... tail)
      : impl_(std::make_shared<Contained>(std::forward<Head>(head), std::forward<Tail>(tail)...)) {}
  // Holds an existing module (shares it).
  ModuleHolder(std::shared_ptr<Contained> module) : impl_(std::move(module)) {}  // NOLINT

  explicit operator bool() const noexcept { return !is_empty(); }
  bool is_empty() const noexcept { return impl_ == nullptr; }

  // A holder is a handle, as a std::shared_ptr: a const holder still reaches a mutable
  // module (libtorch's const holder gives a const module; every use that compiles there
  // compiles here).
  Contained* operator->() const { return get(); }
  Contained& operator*() const { return *get(); }
  const std::shared_ptr<Contained>& ptr() const {
    check();
    return impl_;
  }
  Contained* get() const {
    check();
    return impl_.get();
  }

  // module(args...) is module->forward(args...).
  template <class... Args, class C = Contained>
  auto operator()(Args&&... args) const -> decltype(std::declval<C&>().forward(std::forward<Args>(args)...)) {
    return get()->forward(std::forward<Args>(args)...);
  }
  // module[i] is (*module)[i], for the containers (Sequential).
  template <class Arg, class C = Contained>
  auto operator[](Arg&& arg) const -> decltype(std::declval<C&>()[std::forward<Arg>(arg)]) {
    return (*get())[std::forward<Arg>(arg)];
  }

 private:
  static std::shared_ptr<Contained> default_construct() {
    static_assert(std::is_default_constructible_v<Contained>,
                  "this module has no default constructor: construct it with its options, or "
                  "give the holder the empty state with {nullptr}");
    return std::make_shared<Contained>();
  }
  void check() const {
    if (!impl_) detail::empty_holder(typeid(Contained));
  }
  std::shared_ptr<Contained> impl_;
};

}  // namespace heed::nn

#define HEED_MODULE(Name)                                 \
  class Name : public heed::nn::ModuleHolder<Name##Impl> { \
   public:                                                \
    using heed::nn::ModuleHolder<Name##Impl>::ModuleHolder; \
    using Impl = Name##Impl;                              \
  }
