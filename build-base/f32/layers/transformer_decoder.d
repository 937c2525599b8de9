build-base/f32/layers/transformer_decoder.o: layers/transformer_decoder.cpp \
 layers/transformer_decoder.h layers/../autograd/attend.h \
 layers/../autograd/attention_mask.h layers/../autograd/../core/tensor.h \
 layers/../autograd/../core/real.h layers/../autograd/../core/shape.h \
 layers/dropout.h layers/module.h layers/layer_norm.h layers/linear.h \
 layers/multihead_attention.h layers/transformer.h \
 layers/../autograd/arith.h layers/../core/error.h layers/feed_forward.h
layers/transformer_decoder.h:
layers/../autograd/attend.h:
layers/../autograd/attention_mask.h:
layers/../autograd/../core/tensor.h:
layers/../autograd/../core/real.h:
layers/../autograd/../core/shape.h:
layers/dropout.h:
layers/module.h:
layers/layer_norm.h:
layers/linear.h:
layers/multihead_attention.h:
layers/transformer.h:
layers/../autograd/arith.h:
layers/../core/error.h:
layers/feed_forward.h:
