build-base/f32/layers/rope.o: layers/rope.cpp layers/rope.h \
 layers/../autograd/rope_op.h layers/../autograd/../core/tensor.h \
 layers/../autograd/../core/real.h layers/../autograd/../core/shape.h \
 layers/module.h layers/../core/error.h layers/repr.h
layers/rope.h:
layers/../autograd/rope_op.h:
layers/../autograd/../core/tensor.h:
layers/../autograd/../core/real.h:
layers/../autograd/../core/shape.h:
layers/module.h:
layers/../core/error.h:
layers/repr.h:
