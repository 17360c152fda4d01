"""Files in and out: LIBSVM / svmlight data files."""

from svmkit.io.data import DataFormatError, dump_svmlight, load_svmlight, load_svmlight_files

__all__ = ["DataFormatError", "load_svmlight", "load_svmlight_files", "dump_svmlight"]
