build-base/f32/layers/sliding_window_attention.o: \
 layers/sliding_window_attention.cpp layers/sliding_window_attention.h \
 layers/../autograd/sliding_window_attention.h \
 layers/../autograd/attention_mask.h layers/../autograd/../core/tensor.h \
 layers/../autograd/../core/real.h layers/../autograd/../core/shape.h \
 layers/module.h layers/../core/error.h layers/repr.h
layers/sliding_window_attention.h:
layers/../autograd/sliding_window_attention.h:
layers/../autograd/attention_mask.h:
layers/../autograd/../core/tensor.h:
layers/../autograd/../core/real.h:
layers/../autograd/../core/shape.h:
layers/module.h:
layers/../core/error.h:
layers/repr.h:
