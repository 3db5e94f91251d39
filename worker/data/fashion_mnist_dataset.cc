#include "worker/data/fashion_mnist_dataset.h"

#include <algorithm>

#include "worker/data/idx_loader.h"
#include "worker/data/rows_dataset.h"

namespace lockstep {
namespace {

Status NoArgs(const std::string& args) {
  if (args.empty()) return Status::Ok();
  return InvalidArgument("data set fashion-mnist takes no arguments, not '" +
                         args + "'");
}

}  // namespace

StatusOr<DataShape> FashionMnistDataset::Probe(const std::string& args,
                                               const DataOptions& options) {
  LS_RETURN_IF_ERROR(NoArgs(args));
  const FashionMnistFiles train = FashionMnistPaths(options.data_dir, true);
  const FashionMnistFiles test = FashionMnistPaths(options.data_dir, false);
  LS_ASSIGN_OR_RETURN(IdxShape train_shape,
                      ProbeIdxGz(train.images, train.labels));
  LS_ASSIGN_OR_RETURN(IdxShape test_shape,
                      ProbeIdxGz(test.images, test.labels));
  if (train_shape.dim != test_shape.dim) {
    return Corruption(test.images + " holds images of " +
                      std::to_string(test_shape.dim) + " pixels, " +
                      train.images + " of " + std::to_string(train_shape.dim));
  }
  DataShape shape;
  shape.input_dim = train_shape.dim;
  shape.classes = kFashionMnistClasses;
  shape.train_samples = LimitedCount(train_shape.count, options.train_limit);
  shape.test_samples = LimitedCount(test_shape.count, options.test_limit);
  return shape;
}

StatusOr<std::unique_ptr<Dataset>> FashionMnistDataset::Load(
    const std::string& args, const DataOptions& options) {
  LS_RETURN_IF_ERROR(NoArgs(args));
  LS_ASSIGN_OR_RETURN(DenseRows train, LoadFashionMnist(options.data_dir, true,
                                                        options.train_limit));
  LS_ASSIGN_OR_RETURN(DenseRows test, LoadFashionMnist(options.data_dir, false,
                                                       options.test_limit));
  if (train.dim != test.dim) {
    return Corruption("Fashion-MNIST test images have " +
                      std::to_string(test.dim) + " pixels, training " +
                      std::to_string(train.dim));
  }
  DataShape shape;
  shape.input_dim = train.dim;
  shape.classes = kFashionMnistClasses;
  return std::unique_ptr<Dataset>(
      new RowsDataset(shape, std::move(train), std::move(test)));
}

}  // namespace lockstep
