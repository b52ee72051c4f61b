"""Decoding helpers: turn response bytes back into samples with real decoders (libsndfile)."""
import io

import numpy as np
import soundfile

# ADTS sampling_frequency_index → rate (ISO/IEC 14496-3 table 1.18).
AAC_RATES = [96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350]


class Decoded:
    def __init__(self, samples, sample_rate, duration=None):
        self.samples = samples
        self.sample_rate = sample_rate
        self.duration = duration if duration is not None else len(samples) / sample_rate

    @property
    def rms(self):
        return float(np.sqrt(np.mean(np.square(self.samples)))) if len(self.samples) else 0.0


def parse_adts(data):
    """Walks ADTS frames; returns (sample_rate, frame_sizes). Raises on a broken stream."""
    offset, rate, sizes = 0, None, []
    while offset < len(data):
        header = data[offset:offset + 7]
        if len(header) < 7 or header[0] != 0xFF or (header[1] & 0xF0) != 0xF0:
            raise ValueError(f"no ADTS sync word at byte {offset}")
        rate = AAC_RATES[(header[2] >> 2) & 0x0F]
        length = ((header[3] & 0x03) << 11) | (header[4] << 3) | (header[5] >> 5)
        if length < 7:
            raise ValueError(f"bad ADTS frame length {length} at byte {offset}")
        sizes.append(length)
        offset += length
    return rate, sizes


def decode(data, fmt):
    if fmt == "pcm":
        samples = np.frombuffer(data, dtype="<i2").astype(np.float32) / 32768.0
        return Decoded(samples, 24000)
    if fmt == "aac":
        rate, sizes = parse_adts(data)
        # No AAC decoder in Debian's Python; frame count gives the duration, and frame sizes
        # stand in for loudness (silent AAC frames are a few bytes).
        decoded = Decoded(np.array([]), rate, duration=len(sizes) * 1024 / rate)
        decoded.frame_sizes = sizes
        return decoded
    # Read with libsndfile's own loop: a streamed FLAC says "length unknown", which
    # soundfile.read() takes literally (and its tell() then fails on the seek it makes).
    with soundfile.SoundFile(io.BytesIO(data)) as audio:
        ffi, snd = soundfile._ffi, soundfile._snd
        block = np.empty(1 << 16, dtype=np.float32)
        blocks = []
        while True:
            count = snd.sf_readf_float(audio._file, ffi.cast("float*", block.ctypes.data), len(block))
            if count <= 0:
                break
            blocks.append(block[:count].copy())
        samples = np.concatenate(blocks) if blocks else np.array([], dtype=np.float32)
        return Decoded(samples, audio.samplerate)


def info(data):
    return soundfile.info(io.BytesIO(data))
