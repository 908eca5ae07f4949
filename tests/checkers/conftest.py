"""Spark's Python workers must run this venv's interpreter: graph_shrink's SCC
step uses numpy/scipy inside an executor task. Set before any session starts."""
import os
import sys

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
