"""The peer of bench/workers_bench.sh: the smallest honest Python TTS server. FastAPI + uvicorn
(run with --workers N), libespeak-ng through ctypes behind one lock per process (espeak-ng keeps
global state), WAV out. It answers POST /v1/audio/speech like voxserve for the benchmark's
one-sentence request; nothing else (no queue bound, deadlines, streaming or errors worth the
name). Run: /usr/bin/python3 -m uvicorn --app-dir bench fastapi_peer:app --workers 2 --port P"""
import ctypes
import struct
import threading

from fastapi import FastAPI, Request
from fastapi.responses import Response

AUDIO_OUTPUT_SYNCHRONOUS = 0x02
ESPEAK_CHARS_UTF8 = 1
POS_CHARACTER = 1

espeak = ctypes.CDLL("libespeak-ng.so.1")
SynthCallback = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int,
                                 ctypes.c_void_p)
sample_rate = espeak.espeak_Initialize(AUDIO_OUTPUT_SYNCHRONOUS, 0, None, 0)
if sample_rate <= 0:
    raise RuntimeError("espeak_Initialize failed")
lock = threading.Lock()
chunks = []


@SynthCallback
def collect(wav, count, _events):
    if wav and count > 0:
        chunks.append(ctypes.string_at(wav, count * 2))
    return 0


espeak.espeak_SetSynthCallback(collect)
espeak.espeak_Synth.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint, ctypes.c_int,
                                ctypes.c_uint, ctypes.c_uint, ctypes.c_void_p, ctypes.c_void_p]


def synthesize(text, voice):
    encoded = text.encode() + b"\0"
    with lock:
        chunks.clear()
        espeak.espeak_SetVoiceByName(voice.encode())
        espeak.espeak_Synth(encoded, len(encoded), 0, POS_CHARACTER, 0, ESPEAK_CHARS_UTF8,
                            None, None)
        pcm = b"".join(chunks)
    return pcm


def wav(pcm):
    return (b"RIFF" + struct.pack("<I", 36 + len(pcm)) + b"WAVEfmt " +
            struct.pack("<IHHIIHH", 16, 1, 1, sample_rate, sample_rate * 2, 2, 16) +
            b"data" + struct.pack("<I", len(pcm)) + pcm)


app = FastAPI()


@app.post("/v1/audio/speech")
async def speech(request: Request):
    body = await request.json()
    # espeak-ng runs outside the event loop (a thread per call), as a sync handler would.
    from starlette.concurrency import run_in_threadpool
    pcm = await run_in_threadpool(synthesize, body["input"], "en-us")
    return Response(wav(pcm), media_type="audio/wav")


@app.get("/health/ready")
def ready():
    return {"status": "ready"}
