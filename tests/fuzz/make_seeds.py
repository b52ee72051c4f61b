#!/usr/bin/env python3
"""Writes the seed corpora (corpus/<target>/seed*): real requests, configs and model files in
the shapes the parsers get. Run once; the files are checked in, and crash inputs found later
are added beside them by hand (named crash-<what>)."""
import json, os, struct, sys, base64

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.join(here, "corpus")
PIPER_SYMBOLS = ("_^$ !'(),-.:;?abcdefhijklmnopqrstuvwxyz"
    "æçðøħŋœǀǁǂǃɐɑɒɓɔɕɖɗɘəɚɛɜɞɟɠɡɢɣɤɥɦɧɨɪɫɬɭɮɯɰɱɲɳɴɵɶɸɹɺɻɽɾʀʁʂʃʄʈʉʊʋʌʍʎʏʐʑʒʔʕʘʙʛʜʝʟʡʢʲˈˌːˑ˞βθχᵻⱱ")
KOKORO_SYMBOLS = (';:,.!?—…"()“” ' + "abcdefhijklmnopqrstuvwxyz" + "ɐɑɒɔəɚɛɜɪʊʌɹðθʃʒŋæɾʔᵻˈˌːAIOWYʤʧ")

def put(target, name, data):
    d = os.path.join(root, target); os.makedirs(d, exist_ok=True)
    if isinstance(data, str): data = data.encode()
    open(os.path.join(d, name), "wb").write(data)

# REST bodies
openai = [
 {"model": "tts-1", "input": "Hello world. This is a test.", "voice": "alloy"},
 {"model": "fake", "input": "Streaming, please!", "voice": {"id": "alice"}, "response_format": "pcm", "stream_format": "sse", "speed": 1.5},
 {"input": "Short.", "voice": "alloy", "response_format": "wav", "instructions": "calm", "timeout_ms": 5000},
 {"input": "你好，世界。", "voice": "alice", "response_format": "flac", "speed": 0.25, "stream_format": "audio"},
]
for i, b in enumerate(openai): put("openai_speech_request_fuzzer", f"seed{i}.json", json.dumps(b, ensure_ascii=False))
put("openai_speech_request_fuzzer", "seed_not_object.json", "[1, 2, 3]")
# seeds out of range both ways (seed_field.h): -1, and 2^64, which JSON parsers read as a float
put("openai_speech_request_fuzzer", "seed_seed_range.json",
    '{"input": "Hi.", "voice": "alloy", "seed": 18446744073709551616, "instructions": "", "speed": 1}')
put("openai_speech_request_fuzzer", "seed_negative_seed.json", '{"input": "Hi.", "voice": "alloy", "seed": -1}')
synth = [
 {"text": "Hello world. This is a test.", "voice": "default", "speed": 1.0},
 {"text": "Hi.", "voice": "zh_female", "model": "fake", "response_format": "mp3", "stream": True},
 {"text": "Stream me.", "stream": "sse", "timeout_ms": 1000},
 {"text": "A\u0000B.", "voice": "alice", "response_format": "opus"},
]
for i, b in enumerate(synth): put("synthesize_request_fuzzer", f"seed{i}.json", json.dumps(b, ensure_ascii=False))

# WebSocket messages
ws = [{"model": "fake", "voice": "alice", "response_format": "pcm", "speed": 1.2, "timeout_ms": 2000},
      {"voice": {"id": "alice"}, "instructions": "whisper"}, {"text": "Hello there. How"}, {"flush": True},
      {"text": "Bye.", "close": True}, {"close": True}]
for i, b in enumerate(ws): put("websocket_messages_fuzzer", f"seed{i}.json", json.dumps(b))
put("websocket_messages_fuzzer", "seed_seed_range.json", '{"voice": "alice", "seed": 18446744073709551616}')

# gRPC: hand-encoded protobuf (field tags of proto/voxserve/v1/tts.proto)
def varint(n):
    out = b""
    while True:
        b = n & 0x7f; n >>= 7
        if n: out += bytes([b | 0x80])
        else: return out + bytes([b])
def field_bytes(num, data): return varint(num << 3 | 2) + varint(len(data)) + data
def field_varint(num, v): return varint(num << 3) + varint(v)
def field_double(num, v): return varint(num << 3 | 1) + struct.pack("<d", v)
def options(model=b"fake", voice=b"alice", fmt=2, speed=1.0, instr=b"", timeout=0):
    o = field_bytes(1, model) + field_bytes(2, voice) + field_varint(3, fmt) + field_double(4, speed)
    if instr: o += field_bytes(5, instr)
    if timeout: o += field_varint(6, timeout)
    return o
put("grpc_request_fuzzer", "unary", b"\x00" + field_bytes(1, b"Hello world.") + field_bytes(2, options()))
put("grpc_request_fuzzer", "unary_deadline", b"\x02" + field_bytes(1, b"Hi.") + field_bytes(2, options(fmt=6, speed=2.0, timeout=3000)))
put("grpc_request_fuzzer", "bidi_config", b"\x01" + field_bytes(1, options(fmt=1, instr=b"calm")))
put("grpc_request_fuzzer", "bidi_text", b"\x03" + field_bytes(2, b"Some text. "))
put("grpc_request_fuzzer", "bad_format", b"\x00" + field_bytes(2, options(fmt=99)))

# config files
example = open(os.path.join(here, "..", "..", "config", "voxserve.example.yaml")).read()
put("server_config_fuzzer", "example.yaml", example)
put("server_config_fuzzer", "minimal.yaml", "http:\n  port: 0\nlog:\n  level: warn\n")
put("server_config_fuzzer", "models.yaml", """default_model: espeak
models:
  - id: espeak
    engine: espeak
    default_voice: en-us
    scheduling: {instances: 2, max_batch_size: 4, queue_capacity: 8}
  - id: lessac
    engine: piper
    options: {model: /nonexistent/en_US-lessac-medium.onnx, intra_op_threads: 1}
voice_aliases:
  narrator: {model: espeak, voice: en-gb+m3}
  zh_female: cmn+f3
openai_voices: {alloy: en-us+f2}
grpc: {port: 0}
websocket: {max_message_bytes: 65536}
""")
put("server_config_fuzzer", "tls.yaml", "tls:\n  cert_file: /nonexistent/cert.pem\n  key_file: /nonexistent/key.pem\nauth:\n  api_keys_file: /nonexistent/keys.yaml\n")

# API keys
put("api_keys_fuzzer", "keys.yaml", """keys:
  - name: alice
    key: "sk-alice-secret"
    rate_limit: {requests_per_second: 2, burst: 5}
    max_concurrent: 4
    models: [espeak]
  - name: bob.service
    sha256: "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
  - name: service-a
    client_subject: "CN=service-a,O=Example"
""")
put("api_keys_fuzzer", "empty.yaml", "keys: []\n")
put("api_keys_fuzzer", "bad_name.yaml", "keys:\n  - name: 'no spaces allowed'\n    key: x\n")

# Piper configs
def piper(name, speakers=1, ptype="espeak"):
    return {"dataset": name, "audio": {"sample_rate": 22050, "quality": "medium"},
            "espeak": {"voice": "en-us"}, "language": {"code": "en_US"},
            "inference": {"noise_scale": 0.667, "length_scale": 1, "noise_w": 0.8},
            "phoneme_type": ptype, "phoneme_map": {"ɚ": ["ə", "ɹ"]},
            "phoneme_id_map": {s: [i] for i, s in enumerate(PIPER_SYMBOLS[:60])},
            "num_symbols": 256, "num_speakers": speakers,
            "speaker_id_map": {} if speakers == 1 else {"alice": 0, "bob": 1, "carol": 2},
            "piper_version": "1.0.0"}
put("piper_config_fuzzer", "lessac.onnx.json", json.dumps(piper("lessac"), ensure_ascii=False, indent=1))
put("piper_config_fuzzer", "multi.onnx.json", json.dumps(piper("libritts", 3), ensure_ascii=False))
put("piper_config_fuzzer", "text.onnx.json", json.dumps(piper("letters", 1, "text"), ensure_ascii=False))
put("piper_config_fuzzer", "minimal.onnx.json", json.dumps({"audio": {"sample_rate": 16000}, "phoneme_id_map": {"_": [0], "^": [1], "$": [2], "a": [3]}}))

# Kokoro vocab
vocab = {s: i + 1 for i, s in enumerate(KOKORO_SYMBOLS)}
put("kokoro_vocab_fuzzer", "config.json", json.dumps({"vocab": vocab, "n_token": 178}, ensure_ascii=False))
put("kokoro_vocab_fuzzer", "small.json", json.dumps({"vocab": {"a": 1, "b": 2, " ": 16, ".": 4}}))

# Kokoro .npy (NumPy format 1.0): float32 (rows, 1, 256)
def npy(shape, descr="<f4", version=1, fortran=False, rows_data=None):
    header = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (descr, fortran, str(tuple(shape)))
    pre = 10 if version == 1 else 12
    pad = 64 - (pre + len(header) + 1) % 64
    header = header + " " * pad + "\n"
    n = 1
    for s in shape: n *= s
    data = struct.pack("<%df" % n, *[0.01 * (i % 100) for i in range(n)])
    hl = struct.pack("<H", len(header)) if version == 1 else struct.pack("<I", len(header))
    return b"\x93NUMPY" + bytes([version, 0]) + hl + header.encode() + data
put("kokoro_voices_fuzzer", "rows3.npy", npy((3, 1, 256)))
put("kokoro_voices_fuzzer", "rows2_2d.npy", npy((2, 256)))
put("kokoro_voices_fuzzer", "v2.npy", npy((1, 1, 256), version=2))

# HTTP: raw requests
def req(method, path, body=None, headers=()):
    h = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1"] + list(headers)
    b = b""
    if body is not None:
        b = body.encode() if isinstance(body, str) else body
        h += ["Content-Type: application/json", f"Content-Length: {len(b)}"]
    return ("\r\n".join(h) + "\r\n\r\n").encode() + b
put("http_session_fuzzer", "speech", req("POST", "/v1/audio/speech", json.dumps(openai[0])))
put("http_session_fuzzer", "speech_sse", req("POST", "/v1/audio/speech", json.dumps({"input": "One. Two.", "voice": "alice", "stream_format": "sse", "response_format": "pcm"})))
put("http_session_fuzzer", "synthesize_chunked",
    b"POST /v1/synthesize HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    b"10\r\n{\"text\": \"Hi the\r\n9\r\nre.\", \"s\"\r\n8\r\n: true}\n\r\n0\r\n\r\n")
put("http_session_fuzzer", "pipelined", req("GET", "/health") + req("GET", "/v1/voices?language=en&model=fake") + req("GET", "/v1/models") + req("GET", "/metrics") + req("HEAD", "/health/ready"))
put("http_session_fuzzer", "errors", req("DELETE", "/v1/audio/speech") + req("POST", "/tts", "{bad json") + req("GET", "/nope%zz?x=%41"))
put("http_session_fuzzer", "http10", b"GET /health/live HTTP/1.0\r\n\r\n")
key = base64.b64encode(b"0123456789abcdef").decode()
upgrade = req("GET", "/v1/audio/speech/stream", None, ["Upgrade: websocket", "Connection: Upgrade", f"Sec-WebSocket-Key: {key}", "Sec-WebSocket-Version: 13"])
def ws_frame(payload, opcode=1):
    mask = b"\x11\x22\x33\x44"
    p = payload.encode()
    masked = bytes(c ^ mask[i % 4] for i, c in enumerate(p))
    n = len(p)
    head = bytes([0x80 | opcode]) + (bytes([0x80 | n]) if n < 126 else bytes([0x80 | 126]) + struct.pack(">H", n))
    return head + mask + masked
put("http_session_fuzzer", "websocket", upgrade + ws_frame(json.dumps(ws[0])) + ws_frame(json.dumps({"text": "Hello there. Bye.", "close": True})))
put("http_session_fuzzer", "websocket_bad", upgrade + ws_frame("not json") + ws_frame("", 8))

# Audio files (audio_file_decoder_fuzzer): one short file per accepted format, written by
# libsndfile through Debian's python3-soundfile (run this with /usr/bin/python3 for them).
try:
    import io, math
    import soundfile
    tone = [0.4 * math.sin(2 * math.pi * 440 * i / 16000) for i in range(800)]
    for name, fmt, sub, rate, channels in [
            ("seed_pcm16.wav", "WAV", "PCM_16", 16000, 1), ("seed_float_stereo.wav", "WAV", "FLOAT", 16000, 2),
            ("seed.flac", "FLAC", "PCM_16", 16000, 1), ("seed_vorbis.ogg", "OGG", "VORBIS", 16000, 1),
            ("seed_opus.ogg", "OGG", "OPUS", 16000, 1), ("seed.mp3", "MP3", "MPEG_LAYER_III", 16000, 1),
            ("seed.aiff", "AIFF", "PCM_16", 16000, 1)]:
        buffer = io.BytesIO()
        data = [[s] * channels for s in tone] if channels > 1 else tone
        soundfile.write(buffer, data, rate, format=fmt, subtype=sub)
        put("audio_file_decoder_fuzzer", name, buffer.getvalue())
except ImportError:
    print("python3-soundfile missing: audio_file_decoder_fuzzer seeds not written", file=sys.stderr)
# WAV headers for the checks before libsndfile (audio/wav_header.h): one good file of each
# chunk layout, and one of each way a header can fail to describe its data.
def wav_file(tag=1, channels=1, rate=16000, bits=16, align=None, data=b"\x10\x20" * 400,
             extensible=False, valid_bits=None, magic=b"RIFF", ds64=False, data_first=False):
    end = ">" if magic == b"RIFX" else "<"
    align = channels * (bits // 8) if align is None else align
    fmt = struct.pack(end + "HHIIHH", 0xFFFE if extensible else tag, channels, rate, rate * align,
                      align, bits)
    if extensible:
        fmt += struct.pack(end + "HHIH", 22, valid_bits or bits, 4, tag)
        fmt += bytes.fromhex("000000001000800000aa00389b71")
    chunks = [b"fmt " + struct.pack(end + "I", len(fmt)) + fmt,
              b"data" + struct.pack(end + "I", 0xFFFFFFFF if ds64 else len(data)) + data +
              (b"\0" if len(data) % 2 else b"")]
    if data_first: chunks.reverse()
    if ds64: chunks.insert(0, b"ds64" + struct.pack("<IQQQI", 28, 0, len(data), len(data) // align, 0))
    body = b"WAVE" + b"".join(chunks)
    return magic + struct.pack(end + "I", 0xFFFFFFFF if ds64 else len(body)) + body

for name, wav in [
        ("seed_wav_extensible24.wav", wav_file(bits=24, data=b"\x01\x02\x03" * 300, extensible=True, valid_bits=20)),
        ("seed_wav_rifx.wav", wav_file(magic=b"RIFX", channels=2)),
        ("seed_wav_rf64.wav", wav_file(magic=b"RF64", ds64=True)),
        ("seed_wav_mulaw.wav", wav_file(tag=7, bits=8, data=b"\x7f\x80" * 300)),
        ("seed_wav_bad_7bit.wav", wav_file(bits=7, align=2)),
        ("seed_wav_bad_align.wav", wav_file(channels=2, align=2)),
        ("seed_wav_bad_odd_data.wav", wav_file(data=b"\x10\x20" * 400 + b"\x30")),
        ("seed_wav_bad_float16.wav", wav_file(tag=3, bits=16)),
        ("seed_wav_bad_data_first.wav", wav_file(data_first=True))]:
    put("audio_file_decoder_fuzzer", name, wav)
# Text for the Qwen2 BPE tokenizer (bpe_encode_fuzzer): English, Chinese, mixed, added tokens,
# whitespace runs, combining marks, and bytes that are not UTF-8.
bpe = {"english": "Hello world! It's the 2024 test, isn't it?\n\nYes.",
       "chinese": "你好，世界！中文测试。", "mixed": "CosyVoice2 支持 hello 世界 😀",
       "special": "<|endofprompt|>Hi[breath]there[ab][cd][ab][c[ià]<|endoftext|>",
       "spaces": "a   b\t\t\n \n\u3000\u00a0c   ", "nfc": "e\u0301cole \u1100\u1161"}
for name, text in bpe.items(): put("bpe_encode_fuzzer", name, text)
put("bpe_encode_fuzzer", "invalid_utf8", b"ok \xff \xc0\xaf \xed\xa0\x80 [breath\xe4\xb8")

# Wyoming streams (wyoming_frame_fuzzer): the first byte picks the piece size the parser is fed
# in, then events as the reference client writes them (wyoming/event.py: the header line, then
# data_length bytes of JSON, then the payload), and broken ones.
def wyoming_event(kind, data=None, payload=b"", inline=False):
    header = {"type": kind, "version": "1.9.0"}
    body = b""
    if data and inline:
        header["data"] = data
    elif data:
        body = json.dumps(data, ensure_ascii=False).encode()
        header["data_length"] = len(body)
    if payload:
        header["payload_length"] = len(payload)
    return json.dumps(header, ensure_ascii=False).encode() + b"\n" + body + payload
put("wyoming_frame_fuzzer", "describe", b"\x07" + wyoming_event("describe"))
put("wyoming_frame_fuzzer", "synthesize", b"\x10" + wyoming_event(
    "synthesize", {"text": "Hello there. How are you?", "voice": {"name": "en-us"}}))
put("wyoming_frame_fuzzer", "stream", b"\x03" + wyoming_event(
    "synthesize-start", {"voice": {"name": "en_US-multi-medium", "speaker": "bob"}})
    + wyoming_event("synthesize-chunk", {"text": "Hel"}) + wyoming_event("synthesize-chunk", {"text": "lo. 你好。"})
    + wyoming_event("synthesize", {"text": "Hello. 你好。"}) + wyoming_event("synthesize-stop"))
put("wyoming_frame_fuzzer", "inline_data", b"\x3f" + wyoming_event("ping", {"text": "hi"}, inline=True)
    + wyoming_event("synthesize", {"voice": {"language": "de_DE"}, "text": "Hallo."}))
put("wyoming_frame_fuzzer", "audio_payload", b"\x01" + wyoming_event(
    "audio-chunk", {"rate": 16000, "width": 2, "channels": 1}, payload=bytes(range(256)) * 2))
put("wyoming_frame_fuzzer", "bad_json", b"\x05" + wyoming_event("describe") + b"{not json\n")
put("wyoming_frame_fuzzer", "huge_length", b"\x05" + b'{"type": "synthesize", "data_length": 99999999999}\n')

# SSML (text/ssml): every element of the subset, hostile shapes (entity bombs, deep nesting,
# bad attributes), and a bare fragment as ElevenLabs' enable_ssml_parsing sends it
ssml = {
 "speak": '<speak>Hello <break time="500ms"/> world.</speak>',
 "all_elements": '<?xml version="1.0"?><speak version="1.1" xml:lang="en-US"><p><s>One.</s><s>Two.</s></p>'
   '<prosody rate="slow" pitch="+10%" volume="loud">Slow and high.</prosody><emphasis level="strong">Now</emphasis>'
   '<say-as interpret-as="cardinal">1,234</say-as> <say-as interpret-as="ordinal">21st</say-as> '
   '<say-as interpret-as="date" format="ymd">2026-12-02</say-as> <say-as interpret-as="time">15:30</say-as> '
   '<say-as interpret-as="telephone">+1 (555) 123-4567</say-as> <say-as interpret-as="characters">ABC</say-as> '
   '<say-as interpret-as="digits">2026</say-as> <sub alias="World Wide Web">WWW</sub> '
   '<phoneme alphabet="ipa" ph="təˈmeɪtoʊ">tomato</phoneme> <voice name="en-us+f3">Other voice.</voice>'
   '<break strength="x-strong"/><mark name="m"/><audio src="x.wav">fallback</audio><metadata>not spoken</metadata></speak>',
 "fragment": 'Hello <break time="1s"/> there &amp; you.',
 "billion_laughs": '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">]>'
   '<speak>&lol2;</speak>',
 "external_entity": '<!DOCTYPE speak [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><speak>&xxe;</speak>',
 "deep": '<speak>' + '<prosody rate="1.01">' * 40 + 'deep' + '</prosody>' * 40 + '</speak>',
 "bad_attributes": '<speak><break time="forever"/><prosody rate="-3">x</prosody></speak>',
 "unclosed": '<speak><prosody rate="fast">no end</speak>',
 "nested_collectors": '<speak><say-as interpret-as="characters"><sub alias="x">y</sub><phoneme ph="a">b</phoneme></say-as></speak>',
}
for name, text in ssml.items(): put("ssml_fuzzer", name + ".xml", text)

# Pronunciation dictionaries (text/lexicon): PLS and JSON, and hostile shapes
lexicons = {
 "pls.xml": '<?xml version="1.0" encoding="UTF-8"?><lexicon version="1.0" '
   'xmlns="http://www.w3.org/2005/01/pronunciation-lexicon" alphabet="ipa" xml:lang="en-US">'
   '<lexeme><grapheme>tomato</grapheme><phoneme>təˈmɑːtoʊ</phoneme></lexeme>'
   '<lexeme><grapheme>WWW</grapheme><grapheme>W3</grapheme><alias>World Wide Web</alias></lexeme>'
   '<lexeme><grapheme>New York</grapheme><alias>the Big Apple</alias></lexeme>'
   '<lexeme><grapheme>北京</grapheme><alias>Beijing</alias></lexeme></lexicon>',
 "json.json": json.dumps({"language": "en", "entries": {"SQL": "sequel", "tomato": {"ipa": "təˈmeɪtoʊ"},
   "GIF": {"alias": "jif", "ipa": "dʒɪf"}, "café": "coffee shop"}}, ensure_ascii=False),
 "bare.json": '{"SQL": "sequel", "a": "b"}',
 "bomb.xml": '<!DOCTYPE l [<!ENTITY a "aaaa"><!ENTITY b "&a;&a;&a;&a;">]><lexicon>&b;</lexicon>',
 "empty_grapheme.xml": '<lexicon><lexeme><grapheme> </grapheme><alias>x</alias></lexeme></lexicon>',
 "rules.json": '[{"type": "alias", "string_to_replace": "WWW", "alias": "World Wide Web"}, '
   '{"type": "phoneme", "string_to_replace": "tomato", "phoneme": "təˈmɑːtoʊ", "alphabet": "ipa", '
   '"case_sensitive": false, "word_boundaries": false}]',
}
for name, text in lexicons.items(): put("lexicon_fuzzer", name, text)
