"""Options shared by the compiled (Numba) loops."""

#: For helpers called inside hot compiled loops: compiled without Numba's reference counting.
#: A helper taking arrays otherwise counts a reference to each on entry and on exit, atomic
#: instructions in every call: three quarters of a linear-SVM coordinate visit on a9a (104 ns a
#: visit measured, 25 ns without), and in parallel loops counts on shared arrays that the
#: threads contend for. Such a helper allocates nothing and returns no new array (Numba refuses
#: to compile one that does).
NO_REFCOUNT = {"_nrt": False}
