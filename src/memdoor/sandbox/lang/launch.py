"""The launcher: the first program of a language runner's sandbox, passed as source with ``python -I -S -c``.

It runs as the candidate's uid before any candidate code: it reads its job on stdin (files to write in the
private /tmp, rlimits, one command), writes the files, sets the limits and executes the command in its own
place, so the command is the sandbox's first process and its exit status is the sandbox's. Standard library
only, nothing imported from Memdoor: the sandbox sees no site-packages.
"""

import base64
import json
import os
import resource
import sys


def main() -> None:
    job = json.loads(sys.stdin.buffer.read())
    for name, data, mode in job["files"]:
        path = os.path.join("/tmp", name)
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))
        os.chmod(path, mode)
    for name, value in job["limits"].items():
        resource.setrlimit(getattr(resource, "RLIMIT_" + name.upper()), (value, value))
    stdin = os.open(os.path.join("/tmp", job["stdin"]) if job.get("stdin") else "/dev/null", os.O_RDONLY)
    os.dup2(stdin, 0)
    os.close(stdin)
    os.execve(job["argv"][0], job["argv"], job["env"])


if __name__ == "__main__":
    main()
