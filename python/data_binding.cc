// lockstep.Dataset: a dense data set loaded by Lockstep's own loaders (the
// rows C++ workers train on), its splits as NumPy arrays without copies.
#include <pybind11/numpy.h>

#include "common/job_config.h"
#include "python/errors.h"
#include "python/worker_binding.h"
#include "worker/data/dataset_registry.h"

namespace py = pybind11;

namespace lockstep::python {
namespace {

struct DatasetHandle {
  std::unique_ptr<Dataset> data;

  const DenseRows& Rows(Split split) const { return *data->dense(split); }
};

StatusOr<std::unique_ptr<Dataset>> LoadDense(const DataOptions& options) {
  LS_ASSIGN_OR_RETURN(std::unique_ptr<Dataset> data, LoadDataset(options));
  if (data->shape().sparse) {
    return InvalidArgument("data set '" + options.spec +
                           "' is sparse: the Python module takes dense ones");
  }
  return data;
}

DatasetHandle Load(const DataOptions& options) {
  py::gil_scoped_release release;
  return DatasetHandle{Unwrap(LoadDense(options))};
}

// Read-only: they are the rows every step of this process reads.
template <typename T>
py::array_t<T> ReadOnly(py::array_t<T> view) {
  view.attr("setflags")(py::arg("write") = false);
  return view;
}

// rows x dim float32 features of `split`, owned by `self`.
py::array_t<float> Features(const py::object& self, Split split) {
  const DenseRows& rows = self.cast<DatasetHandle&>().Rows(split);
  const auto dim = static_cast<py::ssize_t>(rows.dim);
  return ReadOnly(
      py::array_t<float>({static_cast<py::ssize_t>(rows.size), dim},
                         {dim * static_cast<py::ssize_t>(sizeof(float)),
                          static_cast<py::ssize_t>(sizeof(float))},
                         rows.features.data(), self));
}

py::array_t<int32_t> Labels(const py::object& self, Split split) {
  const DenseRows& rows = self.cast<DatasetHandle&>().Rows(split);
  return ReadOnly(py::array_t<int32_t>(
      {static_cast<py::ssize_t>(rows.size)},
      {static_cast<py::ssize_t>(sizeof(int32_t))}, rows.labels.data(), self));
}

void BindDatasetClass(py::module_& m) {
  py::class_<DatasetHandle>(m, "Dataset", R"doc(
A dense data set as Lockstep's loaders read it (features scaled to [0, 1]).
train_x / test_x are float32 [samples, features] arrays and train_y /
test_y int32 labels, all read-only views of the loaded rows (no copies).)doc")
      .def_property_readonly(
          "train_x",
          [](const py::object& self) { return Features(self, Split::kTrain); })
      .def_property_readonly(
          "train_y",
          [](const py::object& self) { return Labels(self, Split::kTrain); })
      .def_property_readonly(
          "test_x",
          [](const py::object& self) { return Features(self, Split::kTest); })
      .def_property_readonly(
          "test_y",
          [](const py::object& self) { return Labels(self, Split::kTest); })
      .def_property_readonly(
          "input_dim",
          [](const DatasetHandle& d) { return d.data->shape().input_dim; })
      .def_property_readonly(
          "classes",
          [](const DatasetHandle& d) { return d.data->shape().classes; })
      .def_property_readonly(
          "train_samples",
          [](const DatasetHandle& d) { return d.data->shape().train_samples; })
      .def_property_readonly("test_samples", [](const DatasetHandle& d) {
        return d.data->shape().test_samples;
      });
}

// load_dataset and load_job_dataset.
void BindLoaders(py::module_& m) {
  m.def(
      "load_dataset",
      [](const std::string& spec, const std::string& data_dir,
         uint64_t train_limit, uint64_t test_limit,
         const std::string& test_data) {
        DataOptions o;
        o.spec = spec;
        o.data_dir = data_dir.empty() ? JobConfig().data_dir : data_dir;
        o.train_limit = train_limit;
        o.test_limit = test_limit;
        o.test_data = test_data;
        return Load(o);
      },
      py::arg("spec") = "fashion-mnist", py::arg("data_dir") = "",
      py::arg("train_limit") = 0, py::arg("test_limit") = 0,
      py::arg("test_data") = "",
      "Loads a data set by its --data name (fashion-mnist, synthetic:..., "
      "a PATH).");
  m.def(
      "load_job_dataset",
      [](WorkerHandle& w) {
        // A worker that cannot load its job's data tells the coordinator
        // why, as lockstep-worker does.
        return w.Locked([](WorkerSession& s) {
          StatusOr<std::unique_ptr<Dataset>> data =
              LoadDense(DataOptions::Of(s.job()));
          if (!data.ok()) s.ReportSetupError(data.status());
          return DatasetHandle{Unwrap(std::move(data))};
        });
      },
      py::arg("worker"),
      "The data set of a registered worker's job (--data, --data-dir, "
      "--train-limit, ...); a failure is reported to the coordinator too.");
}

}  // namespace

void BindData(py::module_& m) {
  BindDatasetClass(m);
  BindLoaders(m);
}

}  // namespace lockstep::python
