// libkiln.so (-DKILN_SHARED=ON) is the three static layers linked whole
// (cmake/KilnLibrary.cmake); a shared library needs one source of its own.
namespace kiln::detail {
int shared_library_anchor = 0;
} // namespace kiln::detail
