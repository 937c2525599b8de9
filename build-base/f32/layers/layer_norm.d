build-base/f32/layers/layer_norm.o: layers/layer_norm.cpp layers/layer_norm.h \
 layers/module.h layers/../core/tensor.h layers/../core/real.h \
 layers/../core/shape.h layers/../autograd/layer_norm_op.h \
 layers/../core/error.h layers/init.h layers/repr.h
layers/layer_norm.h:
layers/module.h:
layers/../core/tensor.h:
layers/../core/real.h:
layers/../core/shape.h:
layers/../autograd/layer_norm_op.h:
layers/../core/error.h:
layers/init.h:
layers/repr.h:
