"""Writes, straight onto the worker's reply pipe, a message whose unpickling would run a shell
command in the grader (creating a marker file), instead of its answer."""

# exercise: 3.1
# expect-status: error
# expect-message: refuses

import io
import os
import stat
import struct
import time
import zipfile


class Payload:
    def __reduce__(self):
        return (os.system, ("touch /tmp/@MARKER@-unpickled",))


def _torch_like(obj):
    """A torch.save-style zip archive whose data.pkl holds ``obj`` pickled the unsafe way."""
    import pickle

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("archive/data.pkl", pickle.dumps(obj, protocol=2))
        z.writestr("archive/version", "3\n")
    return buf.getvalue()


def transfer_weights(sa_v2, sa_v1):
    payload = _torch_like({"ok": True, "value": Payload()})
    message = struct.pack("!Q", len(payload)) + payload
    for fd in range(3, 64):
        try:
            st = os.fstat(fd)
        except OSError:
            continue
        if stat.S_ISFIFO(st.st_mode):
            try:
                os.write(fd, message)
            except OSError:
                pass
    time.sleep(30)
