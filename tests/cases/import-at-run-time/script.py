import importlib
importlib.import_module("pandas")
