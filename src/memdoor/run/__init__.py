"""One problem through the pipeline: the config (``config``), the environment (``env``), the
solve loop (``solve``), grading outside the team (``grade``), recording (``record``), the trace
store and the live view."""
