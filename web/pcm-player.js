// Plays 16-bit little-endian mono PCM as it arrives: each piece becomes an AudioBuffer scheduled
// right after the previous one, so playback starts with the first chunk of a streamed response.
// Owned by one run; stop() silences it and it is not reused.

// Scheduling slightly ahead absorbs the main thread's jitter between network reads (50 ms is
// below what a listener notices as a delay, above a busy tab's typical task length).
const LEAD_SECONDS = 0.05;

export class PcmPlayer {
  constructor(context, sampleRate) {
    this.context = context;
    this.sampleRate = sampleRate;
    this.nextStart = 0;        // context time at which the next buffer starts
    this.firstStart = null;    // context time of the first buffer, once scheduled
    this.sources = new Set();  // scheduled and not yet ended
    this.scheduled = 0;        // buffers scheduled so far
    this.samples = 0;
    this.carry = null;         // an odd byte left over from the previous piece
    this.onIdle = null;        // called when every scheduled buffer has ended
  }

  // `bytes`: a Uint8Array piece of the stream, cut anywhere.
  push(bytes) {
    if (this.carry !== null) {
      const joined = new Uint8Array(bytes.length + 1);
      joined[0] = this.carry;
      joined.set(bytes, 1);
      bytes = joined;
      this.carry = null;
    }
    if (bytes.length % 2 === 1) {
      this.carry = bytes[bytes.length - 1];
      bytes = bytes.subarray(0, bytes.length - 1);
    }
    const count = bytes.length / 2;
    if (count === 0) return;
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
    const buffer = this.context.createBuffer(1, count, this.sampleRate);
    const channel = buffer.getChannelData(0);
    for (let i = 0; i < count; i++) channel[i] = view.getInt16(2 * i, true) / 32768;
    this.schedule(buffer);
    this.samples += count;
  }

  // A whole decoded file (formats other than PCM).
  schedule(buffer) {
    const source = this.context.createBufferSource();
    source.buffer = buffer;
    source.connect(this.context.destination);
    const start = Math.max(this.nextStart, this.context.currentTime + LEAD_SECONDS);
    source.start(start);
    if (this.firstStart === null) this.firstStart = start;
    this.nextStart = start + buffer.duration;
    this.scheduled++;
    this.sources.add(source);
    source.onended = () => {
      this.sources.delete(source);
      if (this.sources.size === 0 && this.onIdle) this.onIdle();
    };
  }

  // Seconds of audio played so far (0 before the first buffer starts).
  playedSeconds() {
    if (this.firstStart === null) return 0;
    return Math.max(0, Math.min(this.context.currentTime, this.nextStart) - this.firstStart);
  }

  stop() {
    this.onIdle = null;
    for (const source of this.sources) {
      source.onended = null;
      try { source.stop(); } catch { /* never started */ }
    }
    this.sources.clear();
  }
}
