"""The Python runtime server lives in ../python/server.py (shared by python3.11 and python3.12); this
file keeps the path `python3 runtimes/python<version>/server.py` working for local runs."""
import os
import runpy

runpy.run_path(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python", "server.py"), run_name="__main__")
