build-base/f32/layers/sequential.o: layers/sequential.cpp layers/sequential.h \
 layers/module.h layers/../core/tensor.h layers/../core/real.h \
 layers/../core/shape.h layers/../core/error.h
layers/sequential.h:
layers/module.h:
layers/../core/tensor.h:
layers/../core/real.h:
layers/../core/shape.h:
layers/../core/error.h:
