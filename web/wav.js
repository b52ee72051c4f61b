// A WAV file (RIFF, 16-bit PCM, mono) around raw little-endian samples, for Download.
export function wavBlob(pcmChunks, sampleRate) {
  const dataBytes = pcmChunks.reduce((n, chunk) => n + chunk.byteLength, 0);
  const header = new DataView(new ArrayBuffer(44));
  const text = (offset, s) => [...s].forEach((c, i) => header.setUint8(offset + i, c.charCodeAt(0)));
  text(0, 'RIFF');
  header.setUint32(4, 36 + dataBytes, true);
  text(8, 'WAVE');
  text(12, 'fmt ');
  header.setUint32(16, 16, true);            // fmt chunk size
  header.setUint16(20, 1, true);             // PCM
  header.setUint16(22, 1, true);             // mono
  header.setUint32(24, sampleRate, true);
  header.setUint32(28, sampleRate * 2, true); // bytes per second
  header.setUint16(32, 2, true);             // block align
  header.setUint16(34, 16, true);            // bits per sample
  text(36, 'data');
  header.setUint32(40, dataBytes, true);
  return new Blob([header.buffer, ...pcmChunks], { type: 'audio/wav' });
}
