"""Reads a stored voice profile file (docs/voice-cloning.md: header, JSON, tensor data) for the
tests that compare what the server stored."""
import json
import struct

import numpy as np


def stored_tensors(voices_dir, voice_id):
    """(metadata, {name: ndarray}) of voices_dir/<voice_id>.voice."""
    raw = (voices_dir / (voice_id + ".voice")).read_bytes()
    _, _, meta_len, _, _ = struct.unpack("<8sIIQI", raw[:28])
    meta = json.loads(raw[28:28 + meta_len])
    data = raw[28 + meta_len:]
    out = {}
    for t in meta["tensors"]:
        chunk = data[t["offset"]:t["offset"] + t["bytes"]]
        out[t["name"]] = np.frombuffer(chunk, dtype="<f4" if t["dtype"] == "f32" else "<i4"
                                       ).reshape(t["shape"])
    return meta, out
