build-base/f32/layers/linear.o: layers/linear.cpp layers/linear.h \
 layers/module.h layers/../core/tensor.h layers/../core/real.h \
 layers/../core/shape.h layers/../autograd/linear_op.h \
 layers/../core/error.h layers/init.h layers/repr.h
layers/linear.h:
layers/module.h:
layers/../core/tensor.h:
layers/../core/real.h:
layers/../core/shape.h:
layers/../autograd/linear_op.h:
layers/../core/error.h:
layers/init.h:
layers/repr.h:
