-- wrk script: one-sentence OpenAI speech request (WAV, so encoding cost stays small).
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"model":"tts-1","input":"The quick brown fox jumps over the lazy dog.","voice":"alloy","response_format":"' .. (os.getenv("VOX_FORMAT") or "wav") .. '"}'

function done(summary, latency, requests)
  io.write(string.format("RESULT rps=%.1f p50_ms=%.2f p99_ms=%.2f errors=%d\n",
    summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    summary.errors.status + summary.errors.connect + summary.errors.read +
    summary.errors.write + summary.errors.timeout))
end
